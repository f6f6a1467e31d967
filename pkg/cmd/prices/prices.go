// Package prices implements `gpufinops prices`: the catalog's GPU instance
// offers, filtered and sorted by price per GPU-hour.
package prices

import (
	"cmp"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/shopspring/decimal"
	"github.com/spf13/cobra"

	"github.com/gpufinops/gpufinops/pkg/cmdutil"
	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pkg/iostreams"
	"github.com/gpufinops/gpufinops/pkg/tableprinter"
	"github.com/gpufinops/gpufinops/pricing"
)

// PricesOptions are the inputs of `gpufinops prices`.
type PricesOptions struct {
	IO      *iostreams.IOStreams
	Catalog func() (pricing.Catalog, error)

	Provider     string
	Region       string
	GPU          string
	InstanceType string
	// MinGPUMemory is the least memory per GPU, in GiB.
	MinGPUMemory float64
	// SpotOnly keeps offers with a spot price and sorts by spot $/GPU-hour.
	SpotOnly bool
	// Output is table, json or csv.
	Output string
}

// NewCmdPrices builds the command; runF replaces the run function in tests.
func NewCmdPrices(f *cmdutil.Factory, runF func(*PricesOptions) error) *cobra.Command {
	opts := &PricesOptions{IO: f.IOStreams, Catalog: f.Catalog}
	var output *cmdutil.OutputFlag
	cmd := &cobra.Command{
		Use:   "prices [flags]",
		Short: "List GPU instance prices from the embedded catalog",
		Long: `List the GPU instance types of AWS, Azure and GCP with their hardware and hourly
list prices per region, cheapest per GPU-hour first. Offers without an on-demand
price come last.

Prices come from the dated catalog built into gpufinops (see 'gpufinops version'
and docs/catalog.md). They are public list prices in USD per instance-hour, not
what your account pays. A GCP price is the machine plus its GPUs. A spot price is
the cheapest zone's at snapshot time, an optimistic bound; for AWS the JSON and
CSV output also give the Spot Instance Advisor's typical monthly saving.`,
		Example: `  $ gpufinops prices --gpu H100
  $ gpufinops prices --provider gcp --region us-central1
  $ gpufinops prices --min-gpu-memory 80 --spot-only -o csv > offers.csv`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Output = output.Value
			opts.Provider = strings.ToLower(opts.Provider)
			if opts.Provider != "" && !fleet.Provider(opts.Provider).Valid() {
				return cmdutil.FlagErrorf("invalid --provider %q: want aws, azure or gcp", opts.Provider)
			}
			if err := cmdutil.CheckFloatFlag("--min-gpu-memory", opts.MinGPUMemory, 0, maxGPUMemoryGiB, "GiB"); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return pricesRun(opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Provider, "provider", "", "only this cloud: aws, azure or gcp")
	fl.StringVar(&opts.Region, "region", "", "only this region, e.g. us-east-1, eastus, us-central1")
	fl.StringVar(&opts.GPU, "gpu", "", "only this GPU model, e.g. H100, A100-80GB, L4 (case-insensitive)")
	fl.StringVar(&opts.InstanceType, "instance-type", "", "only this instance type")
	fl.Float64Var(&opts.MinGPUMemory, "min-gpu-memory", 0, "only types with at least this much memory per GPU, in GiB")
	fl.BoolVar(&opts.SpotOnly, "spot-only", false, "only offers with a spot price, cheapest spot $/GPU-hour first")
	output = cmdutil.AddOutputFlag(cmd, "table", "json", "csv")
	_ = cmd.RegisterFlagCompletionFunc("provider", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		names := make([]string, len(fleet.Providers))
		for i, p := range fleet.Providers {
			names[i] = string(p)
		}
		return names, cobra.ShellCompDirectiveNoFileComp
	})
	return cmd
}

// maxGPUMemoryGiB bounds --min-gpu-memory: far above any GPU's memory.
const maxGPUMemoryGiB = 4096

// row is one offer as printed.
type row struct {
	offer   pricing.Offer
	advice  *pricing.SpotAdvice
	perGPU  *decimal.Decimal // on-demand per GPU-hour, exact to 16 places
	spotGPU *decimal.Decimal
	sortKey *decimal.Decimal
}

func pricesRun(opts *PricesOptions) error {
	cat, err := opts.Catalog()
	if err != nil {
		return err
	}
	offers := cat.Offers(pricing.Query{
		Provider:        fleet.Provider(opts.Provider),
		Region:          opts.Region,
		GPUModel:        opts.GPU,
		InstanceType:    opts.InstanceType,
		MinGPUMemoryGiB: opts.MinGPUMemory,
	})
	rows := make([]row, 0, len(offers))
	for _, o := range offers {
		if opts.SpotOnly && o.Spot == nil {
			continue
		}
		r := row{offer: o}
		r.perGPU = perGPU(o.OnDemand, o.Type.GPUCount)
		r.spotGPU = perGPU(o.Spot, o.Type.GPUCount)
		r.sortKey = r.perGPU
		if opts.SpotOnly {
			r.sortKey = r.spotGPU
		}
		if a, ok := cat.SpotAdvice(o.Type.Provider, o.Region, o.Type.Name); ok {
			r.advice = &a
		}
		rows = append(rows, r)
	}
	slices.SortStableFunc(rows, compareRows)

	if len(rows) == 0 {
		fmt.Fprintf(opts.IO.ErrOut, "no offers match %s\n", describeFilters(opts))
		if opts.Output == "json" {
			_, err := fmt.Fprintln(opts.IO.Out, "[]")
			return err
		}
		return nil
	}
	switch opts.Output {
	case "json":
		return writeJSON(opts, rows)
	case "csv":
		return writeCSV(opts, rows)
	default:
		return writeTable(opts, rows)
	}
}

// perGPU is an hourly price divided by the GPU count; nil when unknown.
func perGPU(p *pricing.Price, count float64) *decimal.Decimal {
	if p == nil || count <= 0 {
		return nil
	}
	d := p.Hourly.DivRound(decimal.NewFromFloat(count), 16)
	return &d
}

// compareRows orders by $/GPU-hour, unpriced last, then provider, region, type.
func compareRows(a, b row) int {
	switch {
	case a.sortKey == nil && b.sortKey != nil:
		return 1
	case a.sortKey != nil && b.sortKey == nil:
		return -1
	case a.sortKey != nil && b.sortKey != nil:
		if c := a.sortKey.Cmp(*b.sortKey); c != 0 {
			return c
		}
	}
	return cmp.Or(
		cmp.Compare(a.offer.Type.Provider, b.offer.Type.Provider),
		cmp.Compare(a.offer.Region, b.offer.Region),
		cmp.Compare(a.offer.Type.Name, b.offer.Type.Name),
	)
}

func describeFilters(opts *PricesOptions) string {
	var parts []string
	add := func(flag, v string) {
		if v != "" {
			parts = append(parts, flag+" "+v)
		}
	}
	add("--provider", opts.Provider)
	add("--region", opts.Region)
	add("--gpu", opts.GPU)
	add("--instance-type", opts.InstanceType)
	if opts.MinGPUMemory > 0 {
		add("--min-gpu-memory", formatFloat(opts.MinGPUMemory))
	}
	if opts.SpotOnly {
		parts = append(parts, "--spot-only")
	}
	if len(parts) == 0 {
		return "(the catalog is empty)"
	}
	return strings.Join(parts, " ")
}

// perGPUPlaces is how many decimal places a per-GPU price is rounded to: the
// catalog's own precision.
const perGPUPlaces = 6

func writeTable(opts *PricesOptions, rows []row) error {
	tty := opts.IO.IsStdoutTTY()
	// Headers are words only: the terminal renderer splits headers at
	// punctuation ("$/h" would print as "$/ H").
	perGPUHeader := "per GPU hour"
	if opts.SpotOnly {
		perGPUHeader = "spot per GPU hour"
	}
	t := tableprinter.New(opts.IO.Out, tty, "provider", "region", "instance type", "gpu", "count", "GiB per GPU",
		"vCPUs", "RAM GiB", "on demand", "spot", perGPUHeader)
	t.AlignRight(4, 5, 6, 7, 8, 9, 10)
	money := func(d *decimal.Decimal) string {
		switch {
		case d == nil:
			return "-"
		case tty:
			return d.StringFixed(4)
		default:
			return d.Round(perGPUPlaces).String()
		}
	}
	for _, r := range rows {
		o := r.offer
		t.AddRow(string(o.Type.Provider), o.Region, o.Type.Name, o.Type.GPUModel,
			formatFloat(o.Type.GPUCount), formatGiB(o.Type.GPUMemoryGiB),
			formatFloat(o.Type.VCPUs), formatFloat(o.Type.MemoryGiB),
			money(hourly(o.OnDemand)), money(hourly(o.Spot)), money(r.sortKey))
	}
	if err := t.Render(); err != nil {
		return err
	}
	if tty {
		fmt.Fprintf(opts.IO.ErrOut, "\nList prices in %s per instance-hour as of %s; per GPU hour = price / count; - = no price.\n"+
			"Spot is the cheapest zone's price at that time; '-o json' adds AWS's typical spot saving.\n",
			pricing.Currency, asOfDates(rows))
	}
	return nil
}

func hourly(p *pricing.Price) *decimal.Decimal {
	if p == nil {
		return nil
	}
	return &p.Hourly
}

func asOfDates(rows []row) string {
	var dates []string
	for _, r := range rows {
		for _, p := range []*pricing.Price{r.offer.OnDemand, r.offer.Spot} {
			if p != nil && !slices.Contains(dates, p.AsOf) {
				dates = append(dates, p.AsOf)
			}
		}
	}
	slices.Sort(dates)
	return strings.Join(dates, ", ")
}

// jsonRow is one offer in JSON output. Money is a JSON number with the
// catalog's precision; null when unknown.
type jsonRow struct {
	Provider         fleet.Provider      `json:"provider"`
	Region           string              `json:"region"`
	InstanceType     string              `json:"instanceType"`
	Family           string              `json:"family,omitempty"`
	GPUModel         string              `json:"gpuModel"`
	GPUCount         float64             `json:"gpuCount"`
	GPUMemoryGiB     float64             `json:"gpuMemoryGiB"`
	VCPUs            float64             `json:"vcpus"`
	MemoryGiB        float64             `json:"memoryGiB"`
	Arch             string              `json:"arch"`
	Currency         string              `json:"currency"`
	OnDemandHourly   *json.Number        `json:"onDemandHourly"`
	SpotHourly       *json.Number        `json:"spotHourly"`
	SpotZone         string              `json:"spotZone,omitempty"`
	PerGPUHourly     *json.Number        `json:"perGpuHourly"`
	SpotPerGPUHourly *json.Number        `json:"spotPerGpuHourly"`
	SpotAdvice       *pricing.SpotAdvice `json:"spotAdvice,omitempty"`
	Source           string              `json:"source"`
	AsOf             string              `json:"asOf"`
}

func number(d *decimal.Decimal) *json.Number {
	if d == nil {
		return nil
	}
	n := json.Number(d.String())
	return &n
}

func rounded(d *decimal.Decimal) *decimal.Decimal {
	if d == nil {
		return nil
	}
	r := d.Round(perGPUPlaces)
	return &r
}

func toJSONRow(r row) jsonRow {
	o := r.offer
	j := jsonRow{
		Provider: o.Type.Provider, Region: o.Region, InstanceType: o.Type.Name, Family: o.Type.Family,
		GPUModel: o.Type.GPUModel, GPUCount: o.Type.GPUCount, GPUMemoryGiB: o.Type.GPUMemoryGiB,
		VCPUs: o.Type.VCPUs, MemoryGiB: o.Type.MemoryGiB, Arch: o.Type.Arch, Currency: pricing.Currency,
		OnDemandHourly:   number(hourly(o.OnDemand)),
		SpotHourly:       number(hourly(o.Spot)),
		PerGPUHourly:     number(rounded(r.perGPU)),
		SpotPerGPUHourly: number(rounded(r.spotGPU)),
		SpotAdvice:       r.advice,
	}
	if o.Spot != nil {
		j.SpotZone = o.Spot.Zone
	}
	for _, p := range []*pricing.Price{o.Spot, o.OnDemand} {
		if p != nil {
			j.Source, j.AsOf = p.Source, p.AsOf
		}
	}
	return j
}

func writeJSON(opts *PricesOptions, rows []row) error {
	out := make([]jsonRow, len(rows))
	for i, r := range rows {
		out[i] = toJSONRow(r)
	}
	enc := json.NewEncoder(opts.IO.Out)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(out)
}

var csvHeader = []string{
	"provider", "region", "instanceType", "gpuModel", "gpuCount", "gpuMemoryGiB", "vcpus", "memoryGiB", "arch",
	"currency", "onDemandHourly", "spotHourly", "spotZone", "perGpuHourly", "spotPerGpuHourly",
	"spotAdvisorSavingsPercent", "spotAdvisorInterruptionBand", "source", "asOf",
}

func writeCSV(opts *PricesOptions, rows []row) error {
	w := csv.NewWriter(opts.IO.Out)
	if err := w.Write(csvHeader); err != nil {
		return err
	}
	str := func(n *json.Number) string {
		if n == nil {
			return ""
		}
		return n.String()
	}
	for _, r := range rows {
		j := toJSONRow(r)
		var savings, band string
		if j.SpotAdvice != nil {
			savings, band = strconv.Itoa(j.SpotAdvice.SavingsPercent), j.SpotAdvice.Band
		}
		rec := []string{
			string(j.Provider), j.Region, j.InstanceType, j.GPUModel, formatFloat(j.GPUCount),
			formatFloat(j.GPUMemoryGiB), formatFloat(j.VCPUs), formatFloat(j.MemoryGiB), j.Arch, j.Currency,
			str(j.OnDemandHourly), str(j.SpotHourly), j.SpotZone, str(j.PerGPUHourly), str(j.SpotPerGPUHourly),
			savings, band, j.Source, j.AsOf,
		}
		if err := w.Write(rec); err != nil {
			return err
		}
	}
	w.Flush()
	return w.Error()
}

func formatFloat(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// formatGiB shows per-GPU memory to one decimal place, without a trailing ".0".
func formatGiB(v float64) string {
	if v == 0 {
		return "-"
	}
	return strings.TrimSuffix(strconv.FormatFloat(v, 'f', 1, 64), ".0")
}
