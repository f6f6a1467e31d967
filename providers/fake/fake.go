// Package fake is an in-memory provider for command tests: it serves a fleet
// snapshot with every optional capability (utilization, live prices, stop
// with states, doctor checks, partial scopes), and errors, latency and
// counted calls per scope, so that a command's behaviour on a cloud that
// partly fails can be tested without a simulator. It passes the conformance
// suite (providers/providertest) except throttling, which needs a wire.
package fake

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pricing"
	"github.com/gpufinops/gpufinops/providers"
)

// Compile-time checks of the capabilities.
var (
	_ providers.UtilizationReader  = (*Provider)(nil)
	_ providers.PriceReader        = (*Provider)(nil)
	_ providers.Stopper            = (*Provider)(nil)
	_ providers.Doctor             = (*Provider)(nil)
	_ providers.PartialScoper      = (*Provider)(nil)
	_ providers.MetricsSourceNamer = (*Provider)(nil)
)

// DefaultAccount is the account of instances that have none.
const DefaultAccount = "000000000000"

// MetricsSource is what the fake's utilization reader calls itself.
const MetricsSource = "fake-metrics"

// Fault is what goes wrong in a scope. Errors are returned wrapped with the
// scope and the instance, so errors.Is finds the sentinels.
type Fault struct {
	// List fails ListGPUInstances (and the doctor's coverage check).
	List error
	// Metrics fails ReadUtilization.
	Metrics error
	// Prices fails ReadPrices.
	Prices error
	// Stop fails Stop, dry runs included, after the instance is found.
	Stop error
	// Latency delays every call in the scope; a cancelled context ends the wait.
	Latency time.Duration
	// MetricsLatency delays ReadUtilization only (a hanging metrics service).
	MetricsLatency time.Duration
}

// Options configure the fake.
type Options struct {
	// Cloud is the provider the fake poses as; only its instances are
	// served. Default aws.
	Cloud fleet.Provider
	// Regions are the enabled regions, one scope each per account; default
	// the regions of the fleet's instances.
	Regions []string
	// Faults are keyed by region, account, "account/region" or "*" (every
	// scope); the most specific key wins.
	Faults map[string]Fault
	// AccountErrors are accounts whose scopes cannot be listed; they may
	// have no instance. PartialScopes reports them, Scopes fails.
	AccountErrors map[string]error
	// NoCredentials fails every call with providers.ErrCredentials.
	NoCredentials bool
	// NotStoppable reports instances the cloud refuses to stop.
	NotStoppable func(fleet.Instance) bool
	// Prices are the live prices served besides those the fleet implies
	// (each on-demand instance's hourlyPrice).
	Prices []pricing.Price
	// Now is the clock of the prices' as-of date; default time.Now.
	Now func() time.Time
}

// Provider is the fake. It is safe for concurrent use.
type Provider struct {
	opts      Options
	instances map[string]fleet.Instance // by ID, utilization included
	order     []string
	accounts  []string

	mu     sync.Mutex
	states map[string]fleet.State
	calls  map[string]int
}

// New serves fl's instances of opts.Cloud. The fleet is copied: later
// changes to fl do not show.
func New(fl *fleet.Fleet, opts Options) *Provider {
	if opts.Cloud == "" {
		opts.Cloud = fleet.AWS
	}
	p := &Provider{opts: opts, instances: map[string]fleet.Instance{}, states: map[string]fleet.State{}, calls: map[string]int{}}
	regions := map[string]bool{}
	accounts := map[string]bool{}
	for _, in := range fl.Instances {
		if in.Provider != opts.Cloud {
			continue
		}
		if in.Account == "" {
			in.Account = DefaultAccount
		}
		in.Utilization = cloneUtilization(in.Utilization)
		in.Tags = cloneTags(in.Tags)
		p.instances[in.ID] = in
		p.order = append(p.order, in.ID)
		p.states[in.ID] = in.State
		regions[in.Region] = true
		accounts[in.Account] = true
	}
	if len(p.opts.Regions) == 0 {
		for r := range regions {
			p.opts.Regions = append(p.opts.Regions, r)
		}
	}
	for a := range opts.AccountErrors {
		accounts[a] = true
	}
	if len(accounts) == 0 {
		accounts[DefaultAccount] = true
	}
	for a := range accounts {
		p.accounts = append(p.accounts, a)
	}
	sort.Strings(p.accounts)
	p.opts.Regions = slices.Clone(p.opts.Regions)
	sort.Strings(p.opts.Regions)
	sort.Strings(p.order)
	return p
}

// Name implements providers.Provider.
func (p *Provider) Name() fleet.Provider { return p.opts.Cloud }

// MetricsSource implements providers.MetricsSourceNamer.
func (p *Provider) MetricsSource() string { return MetricsSource }

// Calls returns how often method was called in total (region "") or in one
// region, e.g. Calls("Stop", "us-east-1").
func (p *Provider) Calls(method, region string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if region == "" {
		return p.calls[method]
	}
	return p.calls[method+" "+region]
}

// State is the current state of an instance ("" when unknown).
func (p *Provider) State(id string) fleet.State {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.states[id]
}

// enter counts a call and applies the scope's latency and the credentials.
func (p *Provider) enter(ctx context.Context, method string, scope providers.Scope) (Fault, error) {
	p.mu.Lock()
	p.calls[method]++
	if scope.Region != "" {
		p.calls[method+" "+scope.Region]++
	}
	p.mu.Unlock()
	f := p.fault(scope)
	wait := f.Latency
	if method == "ReadUtilization" {
		wait += f.MetricsLatency
	}
	if err := sleep(ctx, wait); err != nil {
		return f, err
	}
	if p.opts.NoCredentials {
		return f, fmt.Errorf("%s: %w", scope, providers.ErrCredentials)
	}
	return f, nil
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	if d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-ctx.Done():
		case <-t.C:
		}
	}
	return ctx.Err()
}

// fault is the most specific fault of the scope.
func (p *Provider) fault(scope providers.Scope) Fault {
	for _, k := range []string{scope.Account + "/" + scope.Region, scope.Region, scope.Account, "*"} {
		if f, ok := p.opts.Faults[k]; ok && k != "/" && k != "" {
			return f
		}
	}
	return Fault{}
}

// Scopes implements providers.Provider: every region of every account. An
// account in AccountErrors fails it.
func (p *Provider) Scopes(ctx context.Context) ([]providers.Scope, error) {
	scopes, failed, err := p.PartialScopes(ctx)
	if err == nil && len(failed) > 0 {
		err = failed[0]
	}
	if err != nil {
		return nil, err
	}
	return scopes, nil
}

// PartialScopes implements providers.PartialScoper.
func (p *Provider) PartialScopes(ctx context.Context) ([]providers.Scope, []*providers.ScopeError, error) {
	if _, err := p.enter(ctx, "Scopes", providers.Scope{Provider: p.opts.Cloud}); err != nil {
		return nil, nil, err
	}
	var (
		out    []providers.Scope
		failed []*providers.ScopeError
	)
	for _, a := range p.accounts {
		if err := p.opts.AccountErrors[a]; err != nil {
			failed = append(failed, &providers.ScopeError{Scope: providers.Scope{Provider: p.opts.Cloud, Account: a}, Err: fmt.Errorf("listing regions: %w", err)})
			continue
		}
		for _, r := range p.opts.Regions {
			out = append(out, providers.Scope{Provider: p.opts.Cloud, Account: a, Region: r})
		}
	}
	if len(out) == 0 && len(failed) > 0 {
		return nil, nil, failed[0]
	}
	return out, failed, nil
}

// ListGPUInstances implements providers.Provider: the scope's instances
// with their current state and without utilization.
func (p *Provider) ListGPUInstances(ctx context.Context, scope providers.Scope) ([]fleet.Instance, error) {
	f, err := p.enter(ctx, "ListGPUInstances", scope)
	if err != nil {
		return nil, err
	}
	if f.List != nil {
		return nil, fmt.Errorf("listing instances: %w", f.List)
	}
	out := []fleet.Instance{}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, id := range p.order {
		in := p.instances[id]
		if in.Account == scope.Account && in.Region == scope.Region {
			in.State = p.states[id]
			in.Utilization = nil
			in.Tags = cloneTags(in.Tags)
			out = append(out, in)
		}
	}
	return out, nil
}

// ReadUtilization implements providers.UtilizationReader: the fleet's own
// utilization of each running instance, its samples cut to the window (a
// zero window keeps them all; summary statistics are kept as they are);
// those left without any are named in the notes.
func (p *Provider) ReadUtilization(ctx context.Context, scope providers.Scope, instances []fleet.Instance, window fleet.TimeRange) ([]string, error) {
	f, err := p.enter(ctx, "ReadUtilization", scope)
	if err != nil {
		return nil, err
	}
	if f.Metrics != nil {
		return nil, fmt.Errorf("%s: %w", MetricsSource, f.Metrics)
	}
	var notes []string
	for i := range instances {
		in := &instances[i]
		if in.State == fleet.Stopped {
			continue
		}
		var u *fleet.Utilization
		if src, ok := p.instances[in.ID]; ok {
			u = inWindow(cloneUtilization(src.Utilization), window)
		}
		if u == nil {
			notes = append(notes, fmt.Sprintf("%s: no GPU metrics in %s", in.ID, MetricsSource))
			continue
		}
		in.Utilization = u
	}
	return notes, nil
}

// ReadPrices implements providers.PriceReader: Options.Prices and each
// on-demand instance's hourlyPrice, of the scope's region and the types.
func (p *Provider) ReadPrices(ctx context.Context, scope providers.Scope, instanceTypes []string) ([]pricing.Price, error) {
	f, err := p.enter(ctx, "ReadPrices", scope)
	if err != nil {
		return nil, err
	}
	if f.Prices != nil {
		return nil, fmt.Errorf("live prices: %w", f.Prices)
	}
	now := time.Now
	if p.opts.Now != nil {
		now = p.opts.Now
	}
	asked := func(region, ty string) bool {
		return strings.EqualFold(region, scope.Region) && slices.ContainsFunc(instanceTypes, func(t string) bool { return strings.EqualFold(t, ty) })
	}
	var out []pricing.Price
	seen := map[string]bool{}
	for _, pr := range p.opts.Prices {
		if pr.Provider == p.opts.Cloud && asked(pr.Region, pr.InstanceType) {
			seen[pr.InstanceType+"/"+string(pr.Option)] = true
			out = append(out, pr)
		}
	}
	for _, id := range p.order {
		in := p.instances[id]
		key := in.InstanceType + "/" + string(pricing.OnDemand)
		if in.HourlyPrice == nil || in.Lifecycle != fleet.OnDemand || seen[key] || !asked(in.Region, in.InstanceType) {
			continue
		}
		seen[key] = true
		out = append(out, pricing.Price{
			Provider: p.opts.Cloud, Region: in.Region, InstanceType: in.InstanceType, Option: pricing.OnDemand,
			Hourly: *in.HourlyPrice, Currency: pricing.Currency, Unit: pricing.UnitHour,
			Source: "fake live prices", AsOf: now().UTC().Format(time.DateOnly),
		})
	}
	return out, nil
}

// Stop implements providers.Stopper: unknown → ErrNotFound, stopped →
// AlreadyStopped, then the scope's Stop fault, then NotStoppable →
// ErrNotStoppable; a dry run stops there.
func (p *Provider) Stop(ctx context.Context, scope providers.Scope, id string, dryRun bool) (providers.StopResult, error) {
	f, err := p.enter(ctx, "Stop", scope)
	if err != nil {
		return providers.StopResult{}, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	in, ok := p.instances[id]
	if !ok || in.Account != scope.Account || in.Region != scope.Region {
		return providers.StopResult{}, fmt.Errorf("%s: %w", id, providers.ErrNotFound)
	}
	state := p.states[id]
	if state == fleet.Stopped {
		return providers.StopResult{PreviousState: string(state), CurrentState: string(state), AlreadyStopped: true}, nil
	}
	if f.Stop != nil {
		return providers.StopResult{}, fmt.Errorf("%s: %w", id, f.Stop)
	}
	if p.opts.NotStoppable != nil && p.opts.NotStoppable(in) {
		return providers.StopResult{}, fmt.Errorf("%s: %w", id, providers.ErrNotStoppable)
	}
	if dryRun {
		return providers.StopResult{PreviousState: string(state), CurrentState: string(state)}, nil
	}
	p.states[id] = fleet.Stopped
	p.calls["stopped"]++
	return providers.StopResult{PreviousState: string(state), CurrentState: string(fleet.Stopped)}, nil
}

// CheckPermissions implements providers.Doctor: credentials for an
// account-wide scope; listing, metrics, prices and stop for a regional one,
// missing where the scope's fault is providers.ErrPermission.
func (p *Provider) CheckPermissions(ctx context.Context, scope providers.Scope) []providers.Check {
	f, err := p.enter(ctx, "CheckPermissions", scope)
	if err != nil {
		return []providers.Check{{Name: "credentials", Status: providers.CheckMissing, Detail: err.Error()}}
	}
	if scope.Region == "" {
		return []providers.Check{{Name: "credentials", Action: "fake:Identity", Method: "one call", Status: providers.CheckOK}}
	}
	var out []providers.Check
	for _, c := range []struct {
		action string
		err    error
	}{{"fake:ListInstances", f.List}, {"fake:ReadMetrics", f.Metrics}, {"fake:ReadPrices", f.Prices}, {"fake:StopInstances", f.Stop}} {
		ch := providers.Check{Name: "permission", Action: c.action, Method: "DryRun", Status: providers.CheckOK}
		switch {
		case c.err == nil:
		case errors.Is(c.err, providers.ErrPermission):
			ch.Status, ch.Detail = providers.CheckMissing, c.err.Error()
		default:
			ch.Status, ch.Detail = providers.CheckError, c.err.Error()
		}
		out = append(out, ch)
	}
	return out
}

// CheckCoverage implements providers.Doctor: a warning when running
// instances of the scope have no utilization.
func (p *Provider) CheckCoverage(ctx context.Context, scope providers.Scope) []providers.Check {
	c := providers.Check{Name: "metrics", Action: "GPU metrics in " + MetricsSource, Status: providers.CheckOK}
	instances, err := p.ListGPUInstances(ctx, scope)
	if err != nil {
		c.Status, c.Detail = providers.CheckError, err.Error()
		return []providers.Check{c}
	}
	var running, missing int
	for _, in := range instances {
		if in.State == fleet.Stopped {
			continue
		}
		running++
		if p.instances[in.ID].Utilization == nil {
			missing++
		}
	}
	switch {
	case running == 0:
		c.Detail = "no running GPU instances"
	case missing == 0:
		c.Detail = fmt.Sprintf("all %d running GPU instances have GPU metrics", running)
	default:
		c.Status = providers.CheckWarn
		c.Detail = fmt.Sprintf("%d of %d running GPU instances have no GPU metrics", missing, running)
		c.Fix = "give them utilization in the fleet"
	}
	return []providers.Check{c}
}

// inWindow keeps u's samples inside window (all of them for a zero
// window); nil when nothing is left.
func inWindow(u *fleet.Utilization, window fleet.TimeRange) *fleet.Utilization {
	if u == nil || window.End.IsZero() || len(u.Samples) == 0 {
		return u
	}
	kept := u.Samples[:0]
	for _, s := range u.Samples {
		if !s.Time.Before(window.Start) && s.Time.Before(window.End) {
			kept = append(kept, s)
		}
	}
	u.Samples = kept
	if len(kept) == 0 && u.GPU == nil {
		return nil
	}
	return u
}

func cloneTags(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// cloneUtilization is a deep copy of u.
func cloneUtilization(u *fleet.Utilization) *fleet.Utilization {
	if u == nil {
		return nil
	}
	c := *u
	if u.Window != nil {
		w := *u.Window
		c.Window = &w
	}
	for _, st := range []**fleet.Stats{&c.GPU, &c.GPUMemory, &c.CPU, &c.Memory} {
		if *st != nil {
			v := **st
			*st = &v
		}
	}
	if u.Coverage != nil {
		v := *u.Coverage
		c.Coverage = &v
	}
	c.Samples = make([]fleet.Sample, len(u.Samples))
	for i, s := range u.Samples {
		s.GPU = slices.Clone(s.GPU)
		s.GPUMemory = slices.Clone(s.GPUMemory)
		c.Samples[i] = s
	}
	if u.Samples == nil {
		c.Samples = nil
	}
	return &c
}
