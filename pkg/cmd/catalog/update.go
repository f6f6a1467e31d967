package catalog

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/gpufinops/gpufinops/pkg/cmdutil"
	"github.com/gpufinops/gpufinops/pkg/config"
	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pkg/iostreams"
	"github.com/gpufinops/gpufinops/pkg/text"
	"github.com/gpufinops/gpufinops/pricing"
	"github.com/gpufinops/gpufinops/pricing/cache"
	"github.com/gpufinops/gpufinops/providers"
)

// regionReads is how many regions of one cloud are read at once.
const regionReads = 4

// UpdateOptions are the inputs of `gpufinops catalog update`.
type UpdateOptions struct {
	IO     *iostreams.IOStreams
	Config func() (*config.Config, error)
	// Embedded is the catalog built into the binary: its regions and types
	// are what is fetched by default.
	Embedded func() (pricing.Catalog, error)
	// Providers builds the adapters whose price readers fetch.
	Providers func(ctx context.Context, in cmdutil.FleetFlags, cfg *config.Config) ([]providers.Provider, error)
	// OverlayPath is the cache's overlay file, written unless Output is set.
	OverlayPath func() (string, error)
	Now         func() time.Time

	// Scope holds --provider, --region and the adapters' own flags.
	Scope cmdutil.FleetFlags
	// Types are the instance types to fetch (--type); empty is every type
	// the embedded catalog lists in each region.
	Types []string
	// Output (--file) writes the file there instead of the cache's overlay.
	Output string
	// Replace starts from an empty file instead of merging into the old one.
	Replace bool
}

// NewCmdUpdate builds `catalog update`; runF replaces the run function in tests.
func NewCmdUpdate(f *cmdutil.Factory, runF func(*UpdateOptions) error) *cobra.Command {
	opts := &UpdateOptions{IO: f.IOStreams, Config: f.Config, Embedded: f.EmbeddedCatalog, Providers: f.Providers, OverlayPath: f.OverlayPath, Now: f.Now}
	cmd := &cobra.Command{
		Use:   "update [flags]",
		Short: "Fetch current list prices from the clouds' price APIs into the catalog overlay",
		Long: `Fetch current list prices from the clouds' public price APIs, through the same
price readers a live scan uses: AWS Price List (on-demand), EC2 spot price history
(spot) and Savings Plans offering rates (1- and 3-year commitments); the Azure
Retail Prices API (on-demand, spot, reservations); the GCP Cloud Billing Catalog
(on-demand, spot, commitments; machine types with bundled GPUs only). The price
cache is bypassed: every price is read anew.

By default every type in every region the embedded catalog lists for each cloud
is fetched; --provider, --region and --type narrow that (--type also adds a type
the catalog does not know yet). The prices are written, with their source and
date, into the overlay file in your cache folder (see 'catalog status' for its
path), replacing the older prices of the regions and types read and keeping the
rest. The file is replaced atomically, so a command never reads half of it; the
same update run twice writes the same file. Every command then lays these prices
over the embedded catalog, and a report names the overlay and its date.

It needs the same credentials as a scan. --connect-timeout bounds opening each
connection, so an unreachable endpoint fails in seconds. A region whose prices cannot be read
is a warning, its older prices are kept, and the exit code is 3.`,
		Example: `  $ gpufinops catalog update
  $ gpufinops catalog update --provider azure --region westeurope,swedencentral
  $ gpufinops catalog update --provider aws --region us-east-1 --type p5.48xlarge,p5e.48xlarge
  $ gpufinops catalog update --file snapshot.json --replace   # what 'make catalog' runs`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			for i, p := range opts.Scope.Providers {
				opts.Scope.Providers[i] = strings.ToLower(strings.TrimSpace(p))
				if !fleet.Provider(opts.Scope.Providers[i]).Valid() {
					return cmdutil.FlagErrorf("invalid --provider %q: want aws, azure or gcp", p)
				}
			}
			for _, list := range [][]string{opts.Scope.Regions, opts.Types} {
				for _, v := range list {
					if strings.TrimSpace(v) == "" || strings.ContainsFunc(v, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
						return cmdutil.FlagErrorf("invalid --region or --type %q: a name without spaces", v)
					}
				}
			}
			if err := opts.Scope.ValidateConnectTimeout(); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return updateRun(cmd.Context(), opts)
		},
	}
	cmdutil.AddScopeFlags(cmd, &opts.Scope, "fetch prices of (default: every one)")
	cmd.Flags().Lookup("region").Usage = "regions to fetch (default: every region the embedded catalog lists)"
	cmd.Flags().StringSliceVar(&opts.Types, "type", nil, "instance types to fetch (default: every type the embedded catalog lists in each region)")
	cmd.Flags().StringVar(&opts.Output, "file", "", "write the prices to this file instead of the cache's overlay (a snapshot, e.g. for a release)")
	cmd.Flags().BoolVar(&opts.Replace, "replace", false, "start from an empty file instead of keeping the prices of regions and types not read")
	cmdutil.AddConnectTimeoutFlag(cmd, &opts.Scope)
	cmd.Flags().Lookup("connect-timeout").Usage = "bound opening a connection to a cloud's price API (TCP and TLS); a connection not open in time is not retried (default timeouts.connect, 10s)"
	_ = cmd.MarkFlagFilename("file", "json")
	return cmd
}

// cloudPlan is what one cloud's update reads: the types asked in each region.
type cloudPlan struct {
	provider fleet.Provider
	regions  []string
	types    map[string][]string // region → types
}

// cloudResult is what one cloud's update read.
type cloudResult struct {
	plan     cloudPlan
	read     map[cache.Region]cache.Fetch
	prices   []pricing.Price
	failures []error
	notes    []string
}

func updateRun(ctx context.Context, opts *UpdateOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	loaded, err := opts.Config()
	if err != nil {
		return err
	}
	c := *loaded
	opts.Scope.ApplyTimeouts(&c)
	cfg := &c
	base, err := opts.Embedded()
	if err != nil {
		return err
	}
	path := opts.Output
	if path == "" {
		if path, err = opts.OverlayPath(); err != nil {
			return err
		}
		if path == "" {
			return cmdutil.FlagErrorf("no cache folder for the overlay (set cache.dir or XDG_CACHE_HOME), or name a file with --file")
		}
	}
	names := opts.Scope.Providers
	if len(names) == 0 {
		names = providers.Scannable()
	}
	plans := make([]cloudPlan, 0, len(names))
	for _, n := range slices.Compact(slices.Sorted(slices.Values(names))) {
		plans = append(plans, planFor(base, fleet.Provider(n), opts.Scope.Regions, opts.Types))
	}
	if opts.IO.IsStderrTTY() {
		var parts []string
		for _, pl := range plans {
			parts = append(parts, fmt.Sprintf("%s %s", pl.provider, text.Plural(len(pl.regions), "region")))
		}
		opts.IO.Notef("fetching list prices: %s…\n", strings.Join(parts, ", "))
	}
	results := make([]cloudResult, len(plans))
	var wg sync.WaitGroup
	for i, pl := range plans {
		wg.Go(func() { results[i] = fetchCloud(ctx, opts, cfg, pl) })
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return err
	}

	read := map[cache.Region]cache.Fetch{}
	asked := map[cache.Region][]string{}
	var fetched []pricing.Price
	var failures []error
	for _, r := range results {
		for k, f := range r.read {
			read[k] = f
			asked[k] = r.plan.types[k.Region]
		}
		fetched = append(fetched, r.prices...)
		failures = append(failures, r.failures...)
	}
	if len(read) == 0 {
		return allFailed(failures)
	}
	var old *cache.Overlay
	if !opts.Replace {
		if old, err = cache.ReadOverlay(path); err != nil {
			if opts.Output != "" {
				// A file named on the command line that is no overlay may
				// be anything: it is not overwritten unless asked to.
				return &cmdutil.InputError{Err: fmt.Errorf("--file: %w; not overwritten (--replace overwrites it)", err)}
			}
			fmt.Fprintf(opts.IO.ErrOut, "warning: %v; it is replaced\n", err)
			old = nil
		}
	}
	now := opts.Now()
	merged, notes := old.Merge(read, asked, fetched, now)
	if err := merged.Write(path); err != nil {
		return err
	}
	printSummary(opts.IO, results)
	var all []string
	for _, r := range results {
		all = append(all, r.notes...)
	}
	for _, n := range append(all, notes...) {
		fmt.Fprintf(opts.IO.ErrOut, "note: %s\n", n)
	}
	for _, f := range failures {
		fmt.Fprintf(opts.IO.ErrOut, "warning: %v\n", f)
	}
	fmt.Fprintf(opts.IO.Out, "wrote %s (%s, %s in all)\n", path, now.UTC().Format(time.DateOnly), text.Plural(len(merged.Prices), "price"))
	if len(failures) > 0 {
		return &cmdutil.PartialError{Failures: failures}
	}
	return nil
}

// allFailed is the error of an update that read nothing: a credentials
// problem of every cloud is exit code 4, anything else 1.
func allFailed(failures []error) error {
	if len(failures) == 0 {
		return cmdutil.FlagErrorf("nothing to fetch: no region or type matches")
	}
	creds := true
	for _, f := range failures {
		if !errors.Is(f, providers.ErrCredentials) && !errors.Is(f, providers.ErrPermission) {
			creds = false
		}
	}
	err := fmt.Errorf("no prices fetched: %w", errors.Join(failures...))
	if len(failures) > 1 {
		err = fmt.Errorf("no prices fetched (%d failures): %w", len(failures), failures[0])
	}
	if creds {
		return &cmdutil.CredentialsError{Err: err}
	}
	return err
}

// planFor lists a cloud's regions and each region's types: the catalog's,
// narrowed by the flags. A region the catalog does not list is read for
// --type's types, else for every type the catalog has of the cloud.
func planFor(base pricing.Catalog, p fleet.Provider, regions, types []string) cloudPlan {
	pl := cloudPlan{provider: p, types: map[string][]string{}}
	var all []string
	for _, o := range base.Offers(pricing.Query{Provider: p}) {
		pl.types[o.Region] = append(pl.types[o.Region], o.Type.Name)
		all = append(all, o.Type.Name)
	}
	slices.Sort(all)
	all = slices.Compact(all)
	if len(regions) > 0 {
		want := map[string][]string{}
		for _, r := range regions {
			ts := pl.types[r]
			for known, kts := range pl.types {
				if strings.EqualFold(known, r) {
					r, ts = known, kts
				}
			}
			if ts == nil {
				ts = all
			}
			want[r] = ts
		}
		pl.types = want
	}
	if len(types) > 0 {
		for r := range pl.types {
			pl.types[r] = slices.Clone(types)
		}
	}
	for r, ts := range pl.types {
		slices.Sort(ts)
		pl.types[r] = slices.Compact(ts)
		pl.regions = append(pl.regions, r)
	}
	slices.Sort(pl.regions)
	return pl
}

// fetchCloud reads one cloud's prices region by region, each region through
// the first scope (account, subscription or project) the adapter lists in it.
func fetchCloud(ctx context.Context, opts *UpdateOptions, cfg *config.Config, pl cloudPlan) cloudResult {
	res := cloudResult{plan: pl, read: map[cache.Region]cache.Fetch{}}
	fail := func(err error) cloudResult {
		res.failures = append(res.failures, fmt.Errorf("%s: %w", pl.provider, err))
		return res
	}
	if len(pl.regions) == 0 {
		return fail(errors.New("the embedded catalog lists no region; name one with --region"))
	}
	in := opts.Scope
	in.Providers, in.Regions, in.NoPriceCache, in.Quiet = []string{string(pl.provider)}, pl.regions, true, true
	ps, err := opts.Providers(ctx, in, cfg)
	if err != nil {
		return fail(err)
	}
	if len(ps) != 1 {
		return fail(fmt.Errorf("expected one adapter, got %d", len(ps)))
	}
	p := ps[0]
	pr := providers.FeaturesOf(p).Prices
	if pr == nil {
		return fail(errors.New("this adapter reads no prices"))
	}
	scopes, err := p.Scopes(ctx)
	if err != nil {
		return fail(fmt.Errorf("listing its accounts: %w", err))
	}
	through := map[string]providers.Scope{}
	for _, s := range scopes {
		k := strings.ToLower(s.Region)
		if _, ok := through[k]; !ok {
			through[k] = s
		}
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	sem := make(chan struct{}, regionReads)
	for _, region := range pl.regions {
		scope, ok := through[strings.ToLower(region)]
		if !ok {
			res.failures = append(res.failures, fmt.Errorf("%s %s: no account reaches this region", pl.provider, region))
			continue
		}
		types := pl.types[region]
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			got, err := pr.ReadPrices(ctx, scope, types)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				res.failures = append(res.failures, fmt.Errorf("%s %s: %w", pl.provider, region, err))
				return
			}
			n := 0
			priced := map[string]bool{}
			for _, q := range got {
				// Per-resource prices (GCP's vCPU, GiB and GPU SKUs) are
				// read on each scan, not kept in the overlay file.
				if q.Provider != pl.provider || !strings.EqualFold(q.Region, region) || q.Resource != "" {
					continue
				}
				q.Region = region
				res.prices = append(res.prices, q)
				priced[strings.ToLower(q.InstanceType)] = true
				n++
			}
			if missing := len(types) - len(priced); missing > 0 {
				res.notes = append(res.notes, fmt.Sprintf("%s %s: %s of %d asked for had no price in the price APIs (the embedded catalog's are kept)",
					pl.provider, region, text.Plural(missing, "type"), len(types)))
			}
			res.read[cache.Region{Provider: pl.provider, Region: region}] = cache.Fetch{
				Provider: pl.provider, Region: region, FetchedAt: opts.Now(), Types: len(types), Prices: n,
			}
		})
	}
	wg.Wait()
	slices.SortFunc(res.failures, func(a, b error) int { return strings.Compare(a.Error(), b.Error()) })
	slices.Sort(res.notes)
	return res
}

// printSummary writes one line per cloud: regions read, types priced and
// prices by option.
func printSummary(ios *iostreams.IOStreams, results []cloudResult) {
	for _, r := range results {
		byOpt := map[pricing.Option]int{}
		types := map[string]bool{}
		for _, p := range r.prices {
			byOpt[p.Option]++
			types[strings.ToLower(p.InstanceType)] = true
		}
		var parts []string
		for _, o := range []pricing.Option{pricing.OnDemand, pricing.Spot, pricing.SavingsPlan1y, pricing.SavingsPlan3y} {
			parts = append(parts, fmt.Sprintf("%s %d", o, byOpt[o]))
		}
		line := fmt.Sprintf("%s: %d of %s read, %s priced, %s (%s)", r.plan.provider, len(r.read), text.Plural(len(r.plan.regions), "region"),
			text.Plural(len(types), "type"), text.Plural(len(r.prices), "price"), strings.Join(parts, ", "))
		if len(r.failures) > 0 {
			line += fmt.Sprintf("; %s", text.Plural(len(r.failures), "failure"))
		}
		fmt.Fprintln(ios.Out, line)
	}
}
