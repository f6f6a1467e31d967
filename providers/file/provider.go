package file

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pricing"
	"github.com/gpufinops/gpufinops/providers"
)

// Compile-time checks of the capabilities.
var (
	_ providers.UtilizationReader  = (*Provider)(nil)
	_ providers.PriceReader        = (*Provider)(nil)
	_ providers.MetricsSourceNamer = (*Provider)(nil)
	_ providers.CommitmentLister   = (*Provider)(nil)
)

// Name is what a provider serving several clouds' instances calls itself.
const Name fleet.Provider = "file"

// Options narrow what a Provider serves.
type Options struct {
	// Cloud keeps only that cloud's instances and names the provider after
	// it; empty serves every instance under the name "file".
	Cloud fleet.Provider
	// Regions, when set, keep only these regions, each a scope of every
	// account even without instances.
	Regions []string
}

// Provider is a fleet snapshot as a providers.Provider: its scopes are the
// fleet's accounts and regions, each listing the instances recorded there
// as they are recorded (state, tags and utilization included), and its live
// prices are the hourly prices the file records. It never fails but for a
// cancelled context.
type Provider struct {
	opts    Options
	name    fleet.Provider
	source  string
	fl      *fleet.Fleet
	scopes  []providers.Scope
	byScope map[providers.Scope][]int
	byID    map[string]int
}

// New serves fl; it keeps fl and never changes it.
func New(fl *fleet.Fleet, opts Options) *Provider {
	p := &Provider{opts: opts, name: Name, source: fl.Metadata.Name, fl: fl, byScope: map[providers.Scope][]int{}, byID: map[string]int{}}
	if opts.Cloud != "" {
		p.name = opts.Cloud
	}
	if p.source == "" {
		p.source = "the fleet file"
	}
	accounts := map[fleet.Provider]map[string]bool{}
	for i, in := range fl.Instances {
		if opts.Cloud != "" && in.Provider != opts.Cloud {
			continue
		}
		if len(opts.Regions) > 0 && !slices.Contains(opts.Regions, in.Region) {
			continue
		}
		sc := providers.Scope{Provider: in.Provider, Account: in.Account, Region: in.Region}
		if _, ok := p.byScope[sc]; !ok {
			p.scopes = append(p.scopes, sc)
		}
		p.byScope[sc] = append(p.byScope[sc], i)
		p.byID[in.ID] = i
		if accounts[in.Provider] == nil {
			accounts[in.Provider] = map[string]bool{}
		}
		accounts[in.Provider][in.Account] = true
	}
	if opts.Cloud != "" && len(accounts[opts.Cloud]) == 0 {
		accounts[opts.Cloud] = map[string]bool{"": true}
	}
	for cloud, accts := range accounts {
		for a := range accts {
			for _, r := range opts.Regions {
				sc := providers.Scope{Provider: cloud, Account: a, Region: r}
				if _, ok := p.byScope[sc]; !ok {
					p.byScope[sc] = nil
					p.scopes = append(p.scopes, sc)
				}
			}
		}
	}
	sort.Slice(p.scopes, func(i, j int) bool { return p.scopes[i].String() < p.scopes[j].String() })
	return p
}

// Name implements providers.Provider.
func (p *Provider) Name() fleet.Provider { return p.name }

// MetricsSource implements providers.MetricsSourceNamer.
func (p *Provider) MetricsSource() string { return "fleet file" }

// Scopes implements providers.Provider.
func (p *Provider) Scopes(ctx context.Context) ([]providers.Scope, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return slices.Clone(p.scopes), nil
}

// ListGPUInstances implements providers.Provider: the scope's instances in
// file order, utilization included (the file has no separate metrics
// source). The instances are shallow copies: their tags, utilization and
// prices are the file's and must not be changed.
func (p *Provider) ListGPUInstances(ctx context.Context, scope providers.Scope) ([]fleet.Instance, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	idx := p.byScope[providers.Scope{Provider: scope.Provider, Account: scope.Account, Region: scope.Region}]
	out := make([]fleet.Instance, len(idx))
	for i, j := range idx {
		out[i] = p.fl.Instances[j]
	}
	return out, nil
}

// ReadUtilization implements providers.UtilizationReader: each running
// instance gets the utilization the file records for it (the window is the
// file's own); those without any are named in the notes.
func (p *Provider) ReadUtilization(ctx context.Context, _ providers.Scope, instances []fleet.Instance, _ fleet.TimeRange) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var missing []string
	for i := range instances {
		in := &instances[i]
		if in.State == fleet.Stopped {
			continue
		}
		j, ok := p.byID[in.ID]
		if !ok || p.fl.Instances[j].Utilization == nil {
			missing = append(missing, in.ID)
			continue
		}
		in.Utilization = p.fl.Instances[j].Utilization
	}
	if len(missing) == 0 {
		return nil, nil
	}
	return []string{fmt.Sprintf("%s records no utilization for %s", p.source, strings.Join(missing, ", "))}, nil
}

// ReadPrices implements providers.PriceReader: the hourly prices the file
// records for on-demand instances of the scope's region and the types, one
// per type (the first instance's).
func (p *Provider) ReadPrices(ctx context.Context, scope providers.Scope, instanceTypes []string) ([]pricing.Price, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	asOf := ""
	if g := p.fl.Metadata.GeneratedAt; g != nil {
		asOf = g.UTC().Format("2006-01-02")
	}
	var out []pricing.Price
	seen := map[string]bool{}
	for _, in := range p.fl.Instances {
		key := strings.ToLower(in.InstanceType)
		if in.Provider != scope.Provider || !strings.EqualFold(in.Region, scope.Region) || in.HourlyPrice == nil ||
			in.Lifecycle != fleet.OnDemand || seen[key] || !slices.ContainsFunc(instanceTypes, func(t string) bool { return strings.EqualFold(t, in.InstanceType) }) {
			continue
		}
		seen[key] = true
		out = append(out, pricing.Price{
			Provider: in.Provider, Region: in.Region, InstanceType: in.InstanceType, Option: pricing.OnDemand,
			Hourly: *in.HourlyPrice, Currency: pricing.Currency, Unit: pricing.UnitHour,
			Source: "hourlyPrice in " + p.source, AsOf: asOf,
		})
	}
	return out, nil
}

// ListCommitments implements providers.CommitmentLister: the commitments
// the file records (of the provider's cloud and regions, when it is
// narrowed to them), as they are recorded.
func (p *Provider) ListCommitments(ctx context.Context, _ []providers.Scope) ([]fleet.Held, []*providers.ScopeError) {
	if ctx.Err() != nil {
		return nil, nil
	}
	var out []fleet.Held
	for _, h := range p.fl.Commitments {
		if p.opts.Cloud != "" && h.Provider != p.opts.Cloud {
			continue
		}
		if len(p.opts.Regions) > 0 && h.Scope.Region != "" && !slices.Contains(p.opts.Regions, h.Scope.Region) {
			continue
		}
		out = append(out, h)
	}
	return out, nil
}
