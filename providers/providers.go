// Package providers is the contract between gpufinops and the clouds: a small
// Provider interface every adapter implements, optional capabilities found by
// type assertion, a registry the adapters join in init, the sentinel errors,
// and Collect, which scans every scope of a provider concurrently into a fleet
// snapshot without losing the scopes that worked when one fails.
package providers

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pricing"
)

// Scope is one unit a provider scans: an account and region on AWS, a
// subscription on Azure, a project on GCP.
type Scope struct {
	Provider fleet.Provider `json:"provider"`
	// Account is the AWS account, Azure subscription or GCP project.
	Account string `json:"account"`
	// Region is empty for providers that list all regions in one call.
	Region string `json:"region,omitempty"`
	// Profile is the credential source the scope is read with (an AWS
	// profile or role ARN), when there are several.
	Profile string `json:"profile,omitempty"`
}

func (s Scope) String() string {
	out := string(s.Provider) + ":" + s.Account
	if s.Region != "" {
		out += "/" + s.Region
	}
	return out
}

// Provider lists the GPU instances of one cloud.
type Provider interface {
	// Name is the cloud the provider reads.
	Name() fleet.Provider
	// Scopes lists what to scan: enabled regions of every configured account.
	Scopes(ctx context.Context) ([]Scope, error)
	// ListGPUInstances lists the GPU and accelerator instances in one scope,
	// with GPU model, count and memory always set. An empty scope returns an
	// empty slice and no error.
	ListGPUInstances(ctx context.Context, scope Scope) ([]fleet.Instance, error)
}

// UtilizationReader fills in GPU and host utilization over a window, in place.
// An instance without GPU metrics keeps a nil Utilization (never "idle") and
// is named in the returned notes.
type UtilizationReader interface {
	ReadUtilization(ctx context.Context, scope Scope, instances []fleet.Instance, window fleet.TimeRange) (notes []string, err error)
}

// PartialScoper is an optional capability of a provider with several
// accounts: Scopes that keeps the accounts it could list when another one
// fails (e.g. its regions cannot be listed). Each failed account is a
// ScopeError whose Scope has no region.
type PartialScoper interface {
	PartialScopes(ctx context.Context) ([]Scope, []*ScopeError, error)
}

// AllScopes is Scopes for an adapter that is a PartialScoper: every scope,
// or an error when any account failed, the first failure described by
// describe (e.g. "azure subscription <id>") and wrapping its error.
func AllScopes(ctx context.Context, p PartialScoper, describe func(*ScopeError) string) ([]Scope, error) {
	out, failed, err := p.PartialScopes(ctx)
	if err != nil {
		return nil, err
	}
	if len(failed) > 0 {
		return nil, fmt.Errorf("%s: %w", describe(failed[0]), failed[0].Err)
	}
	return out, nil
}

// RegionScopes is PartialScopes for an adapter whose scopes are accounts
// times regions: accounts are the scopes without a region (provider,
// account, profile), and each gets the configured regions, else the ones
// list returns for it. An account whose regions cannot be listed is a
// ScopeError and the others are scanned; a cancelled context or missing
// credentials fail the call, and so does every account failing.
func RegionScopes(ctx context.Context, accounts []Scope, regions []string, list func(context.Context, Scope) ([]string, error)) ([]Scope, []*ScopeError, error) {
	var out []Scope
	var failed []*ScopeError
	for _, a := range accounts {
		rs := regions
		if len(rs) == 0 {
			var err error
			if rs, err = list(ctx, a); err != nil {
				if ctx.Err() != nil || errors.Is(err, ErrCredentials) {
					return nil, nil, fmt.Errorf("%s %s: listing regions: %w", a.Provider, scopeLabel(a), err)
				}
				failed = append(failed, &ScopeError{Scope: a, Err: fmt.Errorf("listing regions: %w", err)})
				continue
			}
		}
		for _, r := range rs {
			s := a
			s.Region = r
			out = append(out, s)
		}
	}
	if len(out) == 0 && len(failed) > 0 {
		// No account could be listed: the scan as a whole failed.
		return nil, nil, fmt.Errorf("%s %s: %w", failed[0].Scope.Provider, scopeLabel(failed[0].Scope), failed[0].Err)
	}
	return out, failed, nil
}

// dispatchOrder is the order Collect starts the scopes in: round robin
// over the accounts, in the order they first appear, each account's scopes
// in their own order.
func dispatchOrder(scopes []Scope) []int {
	type key struct {
		provider         fleet.Provider
		account, profile string
	}
	var groups [][]int
	at := map[key]int{}
	for i, s := range scopes {
		k := key{s.Provider, s.Account, s.Profile}
		g, ok := at[k]
		if !ok {
			g = len(groups)
			at[k] = g
			groups = append(groups, nil)
		}
		groups[g] = append(groups[g], i)
	}
	out := make([]int, 0, len(scopes))
	for round := 0; len(out) < len(scopes); round++ {
		for _, g := range groups {
			if round < len(g) {
				out = append(out, g[round])
			}
		}
	}
	return out
}

// scopeLabel names an account as its user gave it: the profile, else the id.
func scopeLabel(s Scope) string {
	if s.Profile != "" {
		return s.Profile
	}
	return s.Account
}

// MetricsSourceNamer is an optional capability of a UtilizationReader: the
// name of the service it reads, e.g. "cloudwatch", for warnings.
type MetricsSourceNamer interface {
	MetricsSource() string
}

// MetricsSourceName is what p's utilization reader calls itself, else
// "<provider> metrics".
func MetricsSourceName(p Provider) string {
	if n, ok := p.(MetricsSourceNamer); ok {
		return n.MetricsSource()
	}
	return string(p.Name()) + " metrics"
}

// PriceReader returns live prices for instance types in one scope: on-demand,
// spot and commitment rates, each with its source and date, and, where the
// cloud sells commitments per resource, the unit prices of those types'
// resources (pricing.Price.Resource: a vCPU or GiB of their family, one of
// their GPUs).
type PriceReader interface {
	ReadPrices(ctx context.Context, scope Scope, instanceTypes []string) ([]pricing.Price, error)
}

// ScanNoter is an adapter with notes about a whole scan rather than one
// scope (e.g. an API that refused a query form, so the adapter fell back to
// another). Collect takes them once every read of the scan has finished.
type ScanNoter interface {
	TakeScanNotes() []string
}

// CommitmentLister is an optional capability: the commitments the scanned
// accounts already hold (reserved instances, savings plans, reservations,
// committed use discounts, capacity reservations), read live. Collect calls
// it once per scan with every scope of the scan, while the instances are
// listed; the adapter reads each API once per account, region or tenant as
// the cloud keeps them, and returns only what is in force (active) now.
// A part that cannot be read is a ScopeError with Commitments set (the
// scan goes on; what was read is kept), never an error of the scan.
type CommitmentLister interface {
	ListCommitments(ctx context.Context, scopes []Scope) ([]fleet.Held, []*ScopeError)
}

// ScanCommitmentsFailed is the fleet.ScanWarning code of a commitment API
// that could not be read: the commitments it lists are missing, so the
// advice may count savings on capacity already paid for.
const ScanCommitmentsFailed = fleet.ScanCommitmentsFailed

// StopResult is the outcome of one stop.
type StopResult struct {
	// PreviousState and CurrentState are the cloud's state names.
	PreviousState string `json:"previousState,omitempty"`
	CurrentState  string `json:"currentState,omitempty"`
	// AlreadyStopped is true when there was nothing to do.
	AlreadyStopped bool `json:"alreadyStopped,omitempty"`
}

// Stopper stops instances. With dryRun it only checks the permission.
type Stopper interface {
	Stop(ctx context.Context, scope Scope, instanceID string, dryRun bool) (StopResult, error)
}

// CheckStatus is the outcome of one Doctor check.
type CheckStatus string

// The check outcomes. Missing credentials or permissions fail doctor (exit
// code 4); warnings (e.g. instances without GPU metrics) and errors of a
// scope that could not be reached are reported without failing it.
const (
	CheckOK      CheckStatus = "ok"
	CheckMissing CheckStatus = "missing"
	CheckWarn    CheckStatus = "warn"
	CheckError   CheckStatus = "error"
)

// Check is one thing Doctor verified in a scope.
type Check struct {
	// Name is what was checked: "credentials", "permission" or "metrics".
	Name string `json:"name"`
	// Action is the cloud permission checked (e.g. ec2:DescribeInstances).
	Action string `json:"action,omitempty"`
	// Method is how it was checked (e.g. "DryRun", "one call").
	Method string `json:"method,omitempty"`
	// Status is the outcome.
	Status CheckStatus `json:"status"`
	// Detail says what was found, in one line.
	Detail string `json:"detail,omitempty"`
	// Fix says what to do about it; it may span lines (a config snippet).
	Fix string `json:"fix,omitempty"`
}

// Doctor is an optional capability: checking that the credentials can do
// what the commands need in a scope, without changing anything, and how many
// instances publish the metrics the engine reads.
type Doctor interface {
	// CheckPermissions checks the credentials and each permission the
	// commands need, with dry runs where the cloud has them, else one cheap
	// read each. A scope without a region checks what is account-wide (the
	// credentials, global services); a scope with one, the regional calls.
	CheckPermissions(ctx context.Context, scope Scope) []Check
	// CheckCoverage reports how many of the scope's running GPU instances
	// publish GPU metrics, with the agent configuration that adds them.
	CheckCoverage(ctx context.Context, scope Scope) []Check
}

// Features records the optional capabilities of a provider, found once.
type Features struct {
	Utilization UtilizationReader
	Prices      PriceReader
	Stopper     Stopper
	Commitments CommitmentLister
}

// FeaturesOf type-asserts p once for every optional capability.
func FeaturesOf(p Provider) Features {
	var f Features
	f.Utilization, _ = p.(UtilizationReader)
	f.Prices, _ = p.(PriceReader)
	f.Stopper, _ = p.(Stopper)
	f.Commitments, _ = p.(CommitmentLister)
	return f
}

// Sentinel errors every adapter maps its cloud's errors to.
var (
	// ErrCredentials: no credentials, or credentials the cloud rejects.
	ErrCredentials = errors.New("credentials missing or invalid")
	// ErrPermission: the credentials lack a permission the call needs.
	ErrPermission = errors.New("permission denied")
	// ErrThrottled: the cloud kept throttling after the retries.
	ErrThrottled = errors.New("throttled by the cloud")
	// ErrNotStoppable: the instance cannot be stopped (e.g. a one-time spot
	// instance); it is never terminated instead.
	ErrNotStoppable = errors.New("instance cannot be stopped")
	// ErrNotFound: the instance does not exist (any more).
	ErrNotFound = errors.New("instance not found")
	// ErrTimeLimit: the scan's time limit ended before a scope was read.
	ErrTimeLimit = errors.New("time limit reached")
)

// TimeLimitError is the cause of a scan context whose whole-run time limit
// (timeouts.run, --run-timeout) ended. Collect reports the scopes it cut
// short with it and keeps the ones that finished.
type TimeLimitError struct{ Limit time.Duration }

func (e *TimeLimitError) Error() string {
	return fmt.Sprintf("the scan's time limit of %v (timeouts.run, --run-timeout) ended first", e.Limit)
}

// Is makes a TimeLimitError match ErrTimeLimit.
func (e *TimeLimitError) Is(target error) bool { return target == ErrTimeLimit }

// WithTimeLimit bounds a whole scan: past limit, ctx ends with a
// TimeLimitError as its cause. A limit of zero or less leaves ctx unbounded.
func WithTimeLimit(ctx context.Context, limit time.Duration) (context.Context, context.CancelFunc) {
	if limit <= 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeoutCause(ctx, limit, &TimeLimitError{Limit: limit})
}

// timeLimit is ctx's TimeLimitError when the scan's time limit ended it.
func timeLimit(ctx context.Context) error {
	if ctx.Err() == nil {
		return nil
	}
	if cause := context.Cause(ctx); errors.Is(cause, ErrTimeLimit) {
		return cause
	}
	return nil
}

// cutShort is err, or the time limit when err is the context ending
// because the time limit did.
func cutShort(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	if tl := timeLimit(ctx); tl != nil && (errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) || errors.Is(err, ErrTimeLimit)) {
		return tl
	}
	return err
}

// ScopeError is a failure to read one scope: its instances could not be
// listed (they are missing from the scan), or, when Metrics is set, only
// their utilization could not be read (they are kept with a nil Utilization),
// or, when Commitments is set, the commitments it holds could not be read
// (the instances are kept; advice may count savings on committed capacity).
type ScopeError struct {
	Scope Scope
	// Metrics is set when the listing worked and the metrics source failed.
	Metrics bool
	// Commitments is set when a commitment API (Source) failed.
	Commitments bool
	// Source names the metrics source or commitment API that failed, e.g.
	// "cloudwatch" or "ec2:DescribeReservedInstances".
	Source string
	// Instances are the IDs kept with their utilization unknown.
	Instances []string
	Err       error
}

func (e *ScopeError) Error() string {
	if e.Commitments {
		return e.Scope.String() + ": " + e.Source + ": " + e.Err.Error() +
			"; the commitments it lists are missing, so the advice may count savings on capacity already committed"
	}
	if e.Metrics {
		return e.Scope.String() + ": " + e.Source + ": " + Brief(e.Err)
	}
	return e.Scope.String() + ": " + Brief(e.Err)
}
func (e *ScopeError) Unwrap() error { return e.Err }

// Options configure an adapter: what every adapter reads, and in Adapter
// the values of the adapter's own options (RegInfo.Options).
type Options struct {
	// Endpoint points every service of the cloud at one URL (a simulator).
	Endpoint string
	// Regions limits the scan; empty means every enabled region.
	Regions []string
	// Lookback is how far back utilization is read.
	Lookback time.Duration
	// Concurrency bounds parallel calls per provider.
	Concurrency int
	// CacheDir holds cached price lists; empty disables the cache.
	CacheDir string
	// CacheTTL is how long cached prices are used.
	CacheTTL time.Duration
	// HTTPClient is used for every call when set.
	HTTPClient *http.Client
	// RequestTimeout bounds each HTTP request (one attempt, body included)
	// when HTTPClient is nil; zero leaves it to the caller's context.
	RequestTimeout time.Duration
	// ConnectTimeout bounds opening a connection (TCP and TLS) when
	// HTTPClient is nil; zero is DefaultConnectTimeout. A connection that
	// cannot be opened is not retried.
	ConnectTimeout time.Duration
	// RetryMaxBackoff caps the wait between retries of one call; zero keeps
	// the adapter's default. Tests against a failing simulator shorten it.
	RetryMaxBackoff time.Duration
	// Now is the clock.
	Now func() time.Time
	// Adapter holds the adapter's own option values by name (flags over
	// configuration over defaults); an option missing has its default.
	Adapter Values
	// OnRequest, when set, is called before each request to the cloud,
	// retries included (the progress display counts them). It must be safe
	// for concurrent use.
	OnRequest func()
}

// RegInfo describes a cloud: its adapter and options, and the data about
// it that the rest of gpufinops reads from the registry instead of knowing
// the cloud (doctor hints, the least-privilege policy, the tags that name an
// instance's owner, the commitments it sells, its metrics retention).
type RegInfo struct {
	Name        fleet.Provider
	Description string
	// New builds the adapter; nil for a cloud whose data is registered but
	// whose adapter this build does not have yet (it cannot be scanned).
	New func(ctx context.Context, opts Options) (Provider, error)
	// Options are the adapter's own options, after CommonOptions: config
	// keys providers.<name>.*, environment variables and flags.
	Options []Option
	// Doctor is what doctor says about the cloud besides its checks.
	Doctor DoctorInfo
	// Policy is the least-privilege policy `gpufinops iam-policy` prints.
	Policy *Policy
	// OwnerRules are the tags the cloud's services put on the instances
	// they manage; they join fleet.DetectOwner's rules.
	OwnerRules []fleet.OwnerRule
	// Purchase is how the cloud sells commitments (the policy's defaults).
	Purchase *Purchase
	// LowercaseTags is true for a cloud whose tags (labels) may only be
	// lower case, so the tag audit does not call team a misspelt Team there.
	LowercaseTags bool
	// Lookback is the longest utilization history the adapter can read.
	Lookback Lookback
	// Regions are the cloud's region names this build knows: a --region
	// that no cloud named by --provider knows is an error naming the
	// nearest, and in a run over several clouds each region is scanned
	// only on the cloud it belongs to. Nil accepts every region.
	Regions []string
	// Accelerated reports whether an instance type's name is of the
	// cloud's GPU or accelerator families, for a bill naming a type the
	// catalog lacks; nil knows none.
	Accelerated func(instanceType string) bool
	// Billing is what the cloud's bills say about it (FOCUS provider names,
	// resource ids) and the warehouse the adapter reads them from; nil
	// knows none.
	Billing *Billing
	// ManagedCommand spells an advised change to one of the cloud's managed
	// AI items (fleet.Instance.Managed) as the exact command to run, e.g.
	// the CLI call that deletes an endpoint; "" when the cloud has none for
	// it. Nil knows none.
	ManagedCommand func(in *fleet.Instance, c fleet.ManagedChange) string
}

var (
	regMu    sync.RWMutex
	registry = map[fleet.Provider]*RegInfo{}
)

// Register adds a cloud; adapters call it from init. Its owner rules join
// fleet.DetectOwner's.
func Register(ri *RegInfo) {
	regMu.Lock()
	defer regMu.Unlock()
	if _, dup := registry[ri.Name]; dup {
		panic("providers: " + string(ri.Name) + " registered twice")
	}
	if err := ri.checkOptions(); err != nil {
		panic("providers: " + string(ri.Name) + ": " + err.Error())
	}
	registry[ri.Name] = ri
	fleet.RegisterOwnerRules(ri.OwnerRules...)
	if ri.LowercaseTags {
		fleet.RegisterLowercaseTags(ri.Name)
	}
}

// ManagedCommand is the command the instance's cloud gives for change c to
// a managed item, or "" when it has none.
func ManagedCommand(in *fleet.Instance, c fleet.ManagedChange) string {
	ri, ok := Find(in.Provider)
	if !ok || ri.ManagedCommand == nil {
		return ""
	}
	return ri.ManagedCommand(in, c)
}

// Find returns the registered adapter for a cloud.
func Find(name fleet.Provider) (*RegInfo, bool) {
	regMu.RLock()
	defer regMu.RUnlock()
	ri, ok := registry[name]
	return ri, ok
}

// Names lists the registered adapters, sorted.
func Names() []fleet.Provider {
	regMu.RLock()
	defer regMu.RUnlock()
	out := make([]fleet.Provider, 0, len(registry))
	for n := range registry {
		out = append(out, n)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// CollectOptions configure a scan.
type CollectOptions struct {
	// Window is the utilization window; zero skips utilization.
	Window fleet.TimeRange
	// Concurrency bounds the scopes scanned at once (default 8).
	Concurrency int
	// Discovered, when set, is told how many scopes there are to scan, once
	// they are listed.
	Discovered func(scopes int)
	// Progress, when set, is told when each scope finishes.
	Progress func(scope Scope, instances int, err error)
	// SkipPrices leaves live prices out (idle-stop needs none).
	SkipPrices bool
	// Shard keeps only the scopes it owns (zero: every scope).
	Shard Shard
	// SkipCommitments leaves the commitments already held out (idle-stop
	// needs none).
	SkipCommitments bool
}

// Result is what a scan found: the snapshot, the prices read live, the scopes
// that failed, and notes (e.g. instances without GPU metrics).
type Result struct {
	Fleet    *fleet.Fleet
	Prices   []pricing.Price
	Failures []*ScopeError
	Notes    []string
}

// Collect scans every scope of p concurrently, opts.Concurrency at a time,
// one scope of each account in turn (dispatchOrder). Live prices are read once per
// region (see regionPrices), not once per scope: when every scope of a
// region is listed, with the union of their instance types, through the
// first of them that listed any instances, while the utilization is read;
// a region whose prices cannot be read is a note, and the embedded catalog
// prices its instances. A scope whose instances cannot
// be listed is recorded in Failures and the others are kept; so is an
// account whose scopes cannot be listed, when p is a PartialScoper. A scope whose
// utilization cannot be read keeps its instances, priced as usual, with a nil
// Utilization (never idle: the engine gives them no idle, schedule or
// rightsize advice), and is recorded in Failures as a ScopeError with Metrics
// set. Collect itself fails only when the scopes cannot be listed or ctx ends.
// A ctx bounded by WithTimeLimit is the exception: when its limit ends, the
// scopes that finished are kept and the others are Failures with a
// TimeLimitError, so the report still comes (exit code 3).
func Collect(ctx context.Context, p Provider, opts CollectOptions) (*Result, error) {
	var (
		scopes        []Scope
		accountErrors []*ScopeError
		err           error
	)
	if ps, ok := p.(PartialScoper); ok {
		scopes, accountErrors, err = ps.PartialScopes(ctx)
	} else {
		scopes, err = p.Scopes(ctx)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: listing scopes: %w", p.Name(), cutShort(ctx, err))
	}
	if !opts.Shard.IsZero() {
		scopes = slices.DeleteFunc(scopes, func(s Scope) bool { return !opts.Shard.Owns(s) })
		accountErrors = slices.DeleteFunc(accountErrors, func(e *ScopeError) bool { return !opts.Shard.Owns(e.Scope) })
	}
	if opts.Discovered != nil {
		opts.Discovered(len(scopes))
	}
	conc := opts.Concurrency
	if conc <= 0 {
		conc = 8
	}
	feat := FeaturesOf(p)
	type out struct {
		instances []fleet.Instance
		notes     []string
		err       error
		// metricsErr is a failed utilization read; the instances stay.
		metricsErr error
	}
	results := make([]out, len(scopes))
	var prices *regionPrices
	if feat.Prices != nil && !opts.SkipPrices {
		prices = newRegionPrices(scopes)
	}
	// conc workers take the scopes in dispatchOrder: every account's
	// first scope is started before any account's second, so that what an
	// account's scopes share (a GCP project's listing and metric reads, a
	// region's prices once its every scope is listed) starts at once
	// instead of behind another account's regions.
	work := make(chan int, len(scopes))
	for _, i := range dispatchOrder(scopes) {
		work <- i
	}
	close(work)
	var wg sync.WaitGroup
	// The commitments held are read while the instances are listed.
	var (
		held       []fleet.Held
		heldFailed []*ScopeError
	)
	if feat.Commitments != nil && !opts.SkipCommitments && len(scopes) > 0 {
		wg.Go(func() { held, heldFailed = feat.Commitments.ListCommitments(ctx, scopes) })
	}
	scan := func(i int) {
		sc := scopes[i]
		r := &results[i]
		r.instances, r.err = p.ListGPUInstances(ctx, sc)
		if r.err == nil {
			// The region's prices are read once its every scope is
			// listed, while the utilization is read.
			prices.listed(ctx, &wg, feat.Prices, i, instanceTypes(r.instances))
		} else {
			prices.listed(ctx, &wg, feat.Prices, i, nil)
		}
		if r.err == nil && len(r.instances) > 0 && feat.Utilization != nil && !opts.Window.End.IsZero() {
			var merr error
			r.notes, merr = feat.Utilization.ReadUtilization(ctx, sc, r.instances, opts.Window)
			if merr != nil {
				// What a failed read filled in may be part of the
				// GPUs or part of the window: none of it is evidence.
				for j := range r.instances {
					r.instances[j].Utilization = nil
				}
				r.notes, r.metricsErr = nil, merr
			}
		}
		if opts.Progress != nil {
			err := r.err
			if err == nil {
				err = r.metricsErr
			}
			opts.Progress(sc, len(r.instances), err)
		}
	}
	for range min(conc, len(scopes)) {
		wg.Go(func() {
			for i := range work {
				if ctx.Err() != nil {
					results[i].err = ctx.Err()
					prices.listed(ctx, &wg, feat.Prices, i, nil)
					continue
				}
				scan(i)
			}
		})
	}
	wg.Wait()
	if err := ctx.Err(); err != nil && timeLimit(ctx) == nil {
		return nil, err
	}
	res := &Result{Fleet: &fleet.Fleet{APIVersion: fleet.APIVersion, Kind: fleet.Kind}, Failures: accountErrors}
	if sn, ok := p.(ScanNoter); ok {
		res.Notes = append(res.Notes, sn.TakeScanNotes()...)
	}
	total := 0
	for _, r := range results {
		total += len(r.instances)
	}
	// One allocation for the merged instances: a fleet file of 150,000
	// would otherwise be copied a dozen times as the slice grows.
	res.Fleet.Instances = make([]fleet.Instance, 0, total)
	source := MetricsSourceName(p)
	for i, r := range results {
		if r.err != nil {
			res.Failures = append(res.Failures, &ScopeError{Scope: scopes[i], Err: cutShort(ctx, r.err)})
			continue
		}
		if r.metricsErr != nil {
			r.metricsErr = cutShort(ctx, r.metricsErr)
			ids := make([]string, len(r.instances))
			for j, in := range r.instances {
				ids[j] = in.ID
			}
			sort.Strings(ids)
			res.Failures = append(res.Failures, &ScopeError{Scope: scopes[i], Metrics: true, Source: source, Instances: ids, Err: r.metricsErr})
		}
		res.Fleet.Instances = append(res.Fleet.Instances, r.instances...)
		results[i].instances = nil // merged: the scope's copy can go
		res.Notes = append(res.Notes, r.notes...)
		if g := prices.readThrough(i); g != nil {
			res.Prices = append(res.Prices, g.prices...)
			if g.err != nil {
				res.Notes = append(res.Notes, g.note(scopes[i]))
			}
		}
	}
	res.Fleet.Commitments = SortHeld(held)
	// A scope that could not be listed is a failure already: its
	// commitment reads failing too say nothing more.
	listFailed := map[Scope]bool{}
	for _, f := range res.Failures {
		if !f.Metrics {
			listFailed[f.Scope] = true
		}
	}
	for _, f := range heldFailed {
		if listFailed[f.Scope] {
			continue
		}
		f.Commitments = true
		f.Err = cutShort(ctx, f.Err)
		res.Failures = append(res.Failures, f)
	}
	sort.SliceStable(res.Fleet.Instances, func(i, j int) bool {
		a, b := res.Fleet.Instances[i], res.Fleet.Instances[j]
		if a.Provider != b.Provider {
			return a.Provider < b.Provider
		}
		if a.Account != b.Account {
			return a.Account < b.Account
		}
		if a.Region != b.Region {
			return a.Region < b.Region
		}
		return a.ID < b.ID
	})
	return res, nil
}

// SortHeld drops the commitments listed twice (same provider and ID, e.g. a
// shared Azure reservation seen from two subscriptions) and sorts the rest
// by provider, account, region, kind and ID, so that a scan's Commitments
// do not depend on the order the calls finished in.
func SortHeld(held []fleet.Held) []fleet.Held {
	if len(held) == 0 {
		return nil
	}
	type key struct {
		p  fleet.Provider
		id string
	}
	seen := make(map[key]bool, len(held))
	out := make([]fleet.Held, 0, len(held))
	for _, h := range held {
		k := key{h.Provider, h.ID}
		if seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, h)
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Provider != b.Provider {
			return a.Provider < b.Provider
		}
		if a.Account != b.Account {
			return a.Account < b.Account
		}
		if a.Scope.Region != b.Scope.Region {
			return a.Scope.Region < b.Scope.Region
		}
		if a.Kind != b.Kind {
			return a.Kind < b.Kind
		}
		return a.ID < b.ID
	})
	return out
}

// instanceTypes are the price keys of the instances (fleet.Instance.PriceKey:
// a managed service's price type where it has one, else the instance
// type), each once, sorted.
func instanceTypes(instances []fleet.Instance) []string {
	seen := map[string]bool{}
	var out []string
	for _, in := range instances {
		if k := in.PriceKey(); !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// regionPrices reads a provider's live prices once per region: the public
// price lists are the same for every account, subscription or project, so
// scopes that share a region share one read. A scope without a region is a
// group of its own.
type regionPrices struct {
	scopes  []Scope
	groupOf []int // scope index → group
	groups  []*priceGroup
}

// priceGroup is the scopes of one region and what their price read found.
type priceGroup struct {
	region  string
	mu      sync.Mutex
	priced  int             // scopes listed with instances
	pending int             // scopes not yet listed
	types   map[string]bool // of the scopes listed with instances
	// through is the scope the prices are read with: the first (in scope
	// order) that listed any instances; -1 for none.
	through int
	prices  []pricing.Price
	err     error
}

func newRegionPrices(scopes []Scope) *regionPrices {
	rp := &regionPrices{scopes: scopes, groupOf: make([]int, len(scopes))}
	byRegion := map[string]int{}
	for i, sc := range scopes {
		k, ok := byRegion[sc.Region]
		if !ok || sc.Region == "" {
			k = len(rp.groups)
			rp.groups = append(rp.groups, &priceGroup{region: sc.Region, types: map[string]bool{}, through: -1})
			if sc.Region != "" {
				byRegion[sc.Region] = k
			}
		}
		rp.groupOf[i] = k
		rp.groups[k].pending++
	}
	return rp
}

// listed records that scope i is listed with instances of the types
// (none: it failed or is empty). The last scope of a region to be listed
// starts the region's read, in a goroutine wg waits for, through the
// region's first scope with instances. A nil regionPrices does nothing.
func (rp *regionPrices) listed(ctx context.Context, wg *sync.WaitGroup, pr PriceReader, i int, types []string) {
	if rp == nil {
		return
	}
	g := rp.groups[rp.groupOf[i]]
	g.mu.Lock()
	for _, t := range types {
		g.types[t] = true
	}
	if len(types) > 0 {
		g.priced++
		if g.through < 0 || i < g.through {
			g.through = i
		}
	}
	g.pending--
	last := g.pending == 0
	g.mu.Unlock()
	if !last || g.through < 0 {
		return
	}
	scope := rp.scopes[g.through]
	wg.Add(1)
	go func() {
		defer wg.Done()
		types := make([]string, 0, len(g.types))
		for t := range g.types {
			types = append(types, t)
		}
		sort.Strings(types)
		g.prices, g.err = pr.ReadPrices(ctx, scope, types)
	}()
}

// readThrough is the group whose prices were read through scope i, or nil.
func (rp *regionPrices) readThrough(i int) *priceGroup {
	if rp == nil {
		return nil
	}
	if g := rp.groups[rp.groupOf[i]]; g.through == i {
		return g
	}
	return nil
}

// note says that the group's live prices could not be read.
func (g *priceGroup) note(through Scope) string {
	if g.region == "" || g.priced == 1 {
		return fmt.Sprintf("%s: live prices unavailable, using the embedded catalog: %v", through, g.err)
	}
	return fmt.Sprintf("%s %s: live prices unavailable for its %d scopes (read through %s), using the embedded catalog: %v", through.Provider, g.region, g.priced, through, g.err)
}
