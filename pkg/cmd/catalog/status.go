package catalog

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/gpufinops/gpufinops/pkg/cmdutil"
	"github.com/gpufinops/gpufinops/pkg/envelope"
	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pkg/iostreams"
	"github.com/gpufinops/gpufinops/pkg/tableprinter"
	"github.com/gpufinops/gpufinops/pricing"
	"github.com/gpufinops/gpufinops/pricing/cache"
)

// Kind and SchemaVersion head the JSON document of `catalog status`.
const (
	Kind          = "CatalogStatus"
	SchemaVersion = "1.0"
)

// Sources a cloud's prices come from.
const (
	SourceEmbedded = "embedded"
	SourceOverlay  = "overlay"
)

// Document is what `catalog status -o json` writes.
type Document struct {
	envelope.Header
	// Overlay is the overlay file `catalog update` writes.
	Overlay OverlayFile `json:"overlay"`
	// Clouds are one entry per cloud, in provider order.
	Clouds []Cloud `json:"clouds"`
}

// OverlayFile says where the overlay file is and when it was last written.
type OverlayFile struct {
	Path string `json:"path"`
	// Present is false until the first `catalog update`.
	Present bool `json:"present"`
	// UpdatedAt is when an update last wrote it (RFC 3339).
	UpdatedAt string `json:"updatedAt,omitempty"`
}

// Cloud is where one cloud's prices come from.
type Cloud struct {
	Provider string `json:"provider"`
	// Source is the newest source of the cloud's prices: overlay when the
	// overlay file has prices of it, else embedded.
	Source string `json:"source"`
	// Embedded is the embedded snapshot's coverage.
	Embedded Coverage `json:"embedded"`
	// Overlay is the overlay file's coverage; absent when it has no price
	// of the cloud.
	Overlay *Coverage `json:"overlay,omitempty"`
}

// Coverage is what one source prices of a cloud.
type Coverage struct {
	// AsOf is the date of its newest price (YYYY-MM-DD); AgeDays the days
	// since, on the command's clock.
	AsOf    string `json:"asOf,omitempty"`
	AgeDays *int   `json:"ageDays,omitempty"`
	// Regions and Types are how many regions and instance types it prices;
	// Offers how many (region, type) pairs.
	Regions int `json:"regions"`
	Types   int `json:"types"`
	Offers  int `json:"offers"`
	// OnDemand, Spot and Commitments count its offers with an on-demand
	// price, a spot price and commitment rates (the overlay's 1- and 3-year
	// rates; the embedded snapshot keeps its commitment rates in separate
	// tables, which commit-plan reads).
	OnDemand    int `json:"onDemand"`
	Spot        int `json:"spot"`
	Commitments int `json:"commitments,omitempty"`
	// RegionsRead is how many regions updates read (overlay only).
	RegionsRead int `json:"regionsRead,omitempty"`
	// ChangedPrices counts the overlay's on-demand and spot prices that
	// differ from the embedded snapshot's price of the same offer.
	ChangedPrices int `json:"changedPrices,omitempty"`
	// NewOffers counts the overlay's (region, type) pairs the embedded
	// snapshot has no offer for.
	NewOffers int `json:"newOffers,omitempty"`
	// NewTypes and NewRegions are the overlay's types and regions the
	// embedded snapshot does not price for the cloud.
	NewTypes   []string `json:"newTypes,omitempty"`
	NewRegions []string `json:"newRegions,omitempty"`
}

// StatusOptions are the inputs of `gpufinops catalog status`.
type StatusOptions struct {
	IO          *iostreams.IOStreams
	Embedded    func() (pricing.Catalog, error)
	OverlayPath func() (string, error)
	Now         func() time.Time

	// Provider narrows the report to one cloud.
	Provider string
	// Overlay reads this file instead of the cache's overlay (--file).
	Overlay string
	Output  string
	Filter  cmdutil.Filter
	Ctx     context.Context
}

// NewCmdStatus builds `catalog status`; runF replaces the run function in tests.
func NewCmdStatus(f *cmdutil.Factory, runF func(*StatusOptions) error) *cobra.Command {
	opts := &StatusOptions{IO: f.IOStreams, Embedded: f.EmbeddedCatalog, OverlayPath: f.OverlayPath, Now: f.Now}
	var output *cmdutil.Output
	cmd := &cobra.Command{
		Use:   "status [flags]",
		Short: "Show where each cloud's prices come from, their age and coverage",
		Long: `Show, for each cloud, the sources of its prices, newest first: the overlay file
'catalog update' writes (when it has prices of the cloud) and the embedded
snapshot built into gpufinops. For each: the date of its newest price and its
age in days, how many regions and instance types it prices, how many (region,
type) offers have an on-demand price, a spot price and commitment rates. For
the overlay also: how many regions updates read, how many on-demand and spot
prices differ from the snapshot's, how many offers, types and regions the
snapshot lacks.`,
		Example: `  $ gpufinops catalog status
  $ gpufinops catalog status --provider azure -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.Output, opts.Filter, opts.Ctx = output.Format(), output.Filter, cmd.Context()
			opts.Provider = strings.ToLower(opts.Provider)
			if opts.Provider != "" && !fleet.Provider(opts.Provider).Valid() {
				return cmdutil.FlagErrorf("invalid --provider %q: want aws, azure or gcp", opts.Provider)
			}
			if runF != nil {
				return runF(opts)
			}
			return statusRun(opts)
		},
	}
	cmd.Flags().StringVar(&opts.Provider, "provider", "", "only this cloud: aws, azure or gcp")
	cmd.Flags().StringVar(&opts.Overlay, "file", "", "read this overlay file (e.g. one 'catalog update --file' wrote) instead of the cache's")
	_ = cmd.MarkFlagFilename("file", "json")
	output = cmdutil.AddOutputFlags(cmd, cmdutil.FormatTable, cmdutil.FormatJSON)
	return cmd
}

func statusRun(opts *StatusOptions) error {
	base, err := opts.Embedded()
	if err != nil {
		return err
	}
	path := opts.Overlay
	if path == "" {
		if path, err = opts.OverlayPath(); err != nil {
			return err
		}
	}
	var ov *cache.Overlay
	if path != "" {
		if ov, err = cache.ReadOverlay(path); err != nil {
			return &cmdutil.InputError{Err: err}
		}
	}
	if ov == nil && opts.Overlay != "" {
		return cmdutil.FlagErrorf("--file %s: no such file", opts.Overlay)
	}
	doc := Status(base, ov, path, opts.Now(), fleet.Provider(opts.Provider))
	return cmdutil.Print(opts.Ctx, opts.IO.Out, opts.Output, opts.Filter, doc, cmdutil.Printers{
		cmdutil.FormatTable: func(w io.Writer) error { return writeStatusTable(opts.IO, w, doc) },
	})
}

// Status is the document of `catalog status`: each cloud's embedded
// coverage and, when ov has prices of it, the overlay's. only narrows it
// to one cloud; empty is every cloud.
func Status(base pricing.Catalog, ov *cache.Overlay, path string, now time.Time, only fleet.Provider) *Document {
	doc := &Document{Header: envelope.New(Kind, SchemaVersion), Overlay: OverlayFile{Path: path}, Clouds: []Cloud{}}
	if ov != nil {
		doc.Overlay.Present = true
		doc.Overlay.UpdatedAt = ov.UpdatedAt.UTC().Format(time.RFC3339)
	}
	for _, p := range fleet.Providers {
		if only != "" && p != only {
			continue
		}
		c := Cloud{Provider: string(p), Source: SourceEmbedded, Embedded: embeddedCoverage(base, p, now)}
		if ov != nil {
			c.Overlay = overlayCoverage(base, ov, p, now)
			if c.Overlay != nil {
				c.Source = SourceOverlay
			}
		}
		doc.Clouds = append(doc.Clouds, c)
	}
	return doc
}

func embeddedCoverage(base pricing.Catalog, p fleet.Provider, now time.Time) Coverage {
	var cv Coverage
	regions, types := map[string]bool{}, map[string]bool{}
	for _, o := range base.Offers(pricing.Query{Provider: p}) {
		if o.OnDemand == nil && o.Spot == nil && len(o.Commitments) == 0 {
			continue
		}
		cv.Offers++
		regions[strings.ToLower(o.Region)] = true
		types[strings.ToLower(o.Type.Name)] = true
		for _, pr := range []*pricing.Price{o.OnDemand, o.Spot} {
			if pr != nil && pr.AsOf > cv.AsOf {
				cv.AsOf = pr.AsOf
			}
		}
		if o.OnDemand != nil {
			cv.OnDemand++
		}
		if o.Spot != nil {
			cv.Spot++
		}
		if len(o.Commitments) > 0 {
			cv.Commitments++
		}
	}
	cv.Regions, cv.Types = len(regions), len(types)
	cv.AgeDays = age(cv.AsOf, now)
	return cv
}

// overlayCoverage is the overlay's coverage of a cloud; nil when it has no
// price of it.
func overlayCoverage(base pricing.Catalog, ov *cache.Overlay, p fleet.Provider, now time.Time) *Coverage {
	type slot struct{ onDemand, spot, commit bool }
	offers := map[[2]string]*slot{}
	regions, types := map[string]string{}, map[string]string{}
	cv := &Coverage{}
	for _, pr := range ov.Prices {
		if pr.Provider != p {
			continue
		}
		r, t := strings.ToLower(pr.Region), strings.ToLower(pr.InstanceType)
		regions[r], types[t] = pr.Region, pr.InstanceType
		s := offers[[2]string{r, t}]
		if s == nil {
			s = &slot{}
			offers[[2]string{r, t}] = s
		}
		var was *pricing.Price
		o, ok := base.Offer(p, pr.Region, pr.InstanceType)
		switch pr.Option {
		case pricing.OnDemand:
			s.onDemand, was = true, o.OnDemand
		case pricing.Spot:
			s.spot, was = true, o.Spot
		default:
			s.commit = true
		}
		if ok && was != nil && !was.Hourly.Equal(pr.Hourly) {
			cv.ChangedPrices++
		}
		if pr.AsOf > cv.AsOf {
			cv.AsOf = pr.AsOf
		}
	}
	if len(offers) == 0 {
		return nil
	}
	for k, s := range offers {
		cv.Offers++
		if _, ok := base.Offer(p, regions[k[0]], types[k[1]]); !ok {
			cv.NewOffers++
		}
		if s.onDemand {
			cv.OnDemand++
		}
		if s.spot {
			cv.Spot++
		}
		if s.commit {
			cv.Commitments++
		}
	}
	for _, f := range ov.Fetches {
		if f.Provider == p {
			cv.RegionsRead++
		}
	}
	cv.Regions, cv.Types = len(regions), len(types)
	for _, t := range types {
		ty, ok := base.InstanceType(p, t)
		if !ok || len(base.Offers(pricing.Query{Provider: p, InstanceType: t, Service: ty.Service})) == 0 {
			cv.NewTypes = append(cv.NewTypes, t)
		}
	}
	for _, r := range regions {
		if len(base.Offers(pricing.Query{Provider: p, Region: r})) == 0 {
			cv.NewRegions = append(cv.NewRegions, r)
		}
	}
	slices.Sort(cv.NewTypes)
	slices.Sort(cv.NewRegions)
	cv.AgeDays = age(cv.AsOf, now)
	return cv
}

func age(asOf string, now time.Time) *int {
	d, ok := pricing.AgeDays(asOf, now)
	if !ok {
		return nil
	}
	return &d
}

func writeStatusTable(ios *iostreams.IOStreams, w io.Writer, doc *Document) error {
	t := tableprinter.New(w, ios.IsStdoutTTY(), "cloud", "source", "as of", "age days", "regions", "types", "offers",
		"on demand", "spot", "commitments", "changed", "new types")
	t.AlignRight(3, 4, 5, 6, 7, 8, 9, 10)
	t.SetWidth(ios.TerminalWidth())
	t.Key(0, 1, 2, 3)
	t.Truncate(11, 12)
	t.DropOrder(9, 8, 7, 3, 10, 11)
	row := func(cloud, source string, c Coverage) {
		ageDays := "-"
		if c.AgeDays != nil {
			ageDays = strconv.Itoa(*c.AgeDays)
		}
		asOf := c.AsOf
		if asOf == "" {
			asOf = "-"
		}
		newTypes := "-"
		if len(c.NewTypes) > 0 {
			newTypes = strings.Join(c.NewTypes, ",")
		}
		t.AddRow(cloud, source, asOf, ageDays, strconv.Itoa(c.Regions), strconv.Itoa(c.Types), strconv.Itoa(c.Offers),
			strconv.Itoa(c.OnDemand), strconv.Itoa(c.Spot), strconv.Itoa(c.Commitments), strconv.Itoa(c.ChangedPrices), newTypes)
	}
	for _, c := range doc.Clouds {
		if c.Overlay != nil {
			row(c.Provider, SourceOverlay, *c.Overlay)
		}
		row(c.Provider, SourceEmbedded, c.Embedded)
	}
	if err := t.Render(); err != nil {
		return err
	}
	switch {
	case doc.Overlay.Path == "":
		fmt.Fprintln(ios.ErrOut, "\nNo cache folder, so no overlay: every price is the embedded one.")
	case doc.Overlay.Present:
		fmt.Fprintf(ios.ErrOut, "\nOverlay: %s\nUpdated %s. Overlay prices win over embedded ones.\n", doc.Overlay.Path, doc.Overlay.UpdatedAt)
	default:
		fmt.Fprintf(ios.ErrOut, "\nNo overlay yet: %s\nPrices are the embedded ones; 'gpufinops catalog update' fetches current ones.\n", doc.Overlay.Path)
	}
	return nil
}
