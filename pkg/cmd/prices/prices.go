// Package prices implements `gpufinops prices`: the catalog's GPU instance
// offers, filtered and sorted by price per GPU-hour.
package prices

import (
	"cmp"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"
	"github.com/spf13/cobra"

	"github.com/gpufinops/gpufinops/pkg/cmdutil"
	"github.com/gpufinops/gpufinops/pkg/envelope"
	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pkg/iostreams"
	"github.com/gpufinops/gpufinops/pkg/money"
	"github.com/gpufinops/gpufinops/pkg/suggest"
	"github.com/gpufinops/gpufinops/pkg/tableprinter"
	"github.com/gpufinops/gpufinops/pkg/text"
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
	// Service lists the types a managed AI service sells (sagemaker,
	// vertex-ai) instead of the virtual machines.
	Service string
	// MinGPUMemory is the least memory per GPU, in GiB.
	MinGPUMemory float64
	// SpotOnly keeps offers with a spot price and sorts by spot $/GPU-hour.
	SpotOnly bool
	// Output is table, json or csv.
	Output string
	// Filter is the --jq or --template filter of the JSON output; nil prints it whole.
	Filter cmdutil.Filter
	// Now is the clock the prices' ages are counted to; nil is time.Now.
	Now func() time.Time
	// Ctx bounds the --jq program; nil is context.Background().
	Ctx context.Context
}

// NewCmdPrices builds the command; runF replaces the run function in tests.
func NewCmdPrices(f *cmdutil.Factory, runF func(*PricesOptions) error) *cobra.Command {
	opts := &PricesOptions{IO: f.IOStreams, Catalog: f.Catalog, Now: f.Now}
	var output *cmdutil.Output
	cmd := &cobra.Command{
		Use:   "prices [flags]",
		Short: "List GPU instance prices from the embedded catalog",
		Long: `List the GPU instance types of AWS, Azure and GCP with their hardware and hourly
list prices per region, cheapest per GPU-hour first. Offers without an on-demand
price come last.

Prices come from the dated catalog built into gpufinops (see 'gpufinops version'
and docs/catalog.md), with the prices 'gpufinops catalog update' fetched laid
over it ('gpufinops catalog status' says which). They are public list prices in USD per instance-hour, not
what your account pays. A GCP price is the machine plus its GPUs. A spot price is
the cheapest zone's at snapshot time, an optimistic bound; for AWS the JSON and
CSV output also give the Spot Instance Advisor's typical monthly saving.

Every price shows its age: the days since its source's as-of date (the table's
AGE DAYS column is the older of the on-demand and spot prices; JSON and CSV give
each price's, and the spot advice's, separately).

--service lists what a managed AI service sells instead of the VMs: SageMaker's
ml.* types, priced offline only as estimates (the EC2 price times the markup
observed in SageMaker's list prices; the source says so), and Vertex AI machines
(vertex-ai/<prediction|training>/<machine type>), priced offline from Vertex's
own SKUs where the catalog has them. Azure ML bills the VM price: list the VM
sizes. See docs/catalog.md, "Managed AI services".`,
		Example: `  $ gpufinops prices --gpu H100
  $ gpufinops prices --provider gcp --region us-central1
  $ gpufinops prices --min-gpu-memory 80 --spot-only -o csv > offers.csv
  $ gpufinops prices --service sagemaker --region us-east-1`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Output, opts.Filter, opts.Ctx = output.Format(), output.Filter, cmd.Context()
			opts.Provider = strings.ToLower(opts.Provider)
			if opts.Provider != "" && !fleet.Provider(opts.Provider).Valid() {
				return cmdutil.FlagErrorf("invalid --provider %q: want aws, azure or gcp", opts.Provider)
			}
			opts.Service = strings.ToLower(opts.Service)
			if err := checkService(opts.Service); err != nil {
				return err
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
	fl.StringVar(&opts.Service, "service", "", "the types a managed AI service sells instead of VMs: sagemaker or vertex-ai")
	fl.Float64Var(&opts.MinGPUMemory, "min-gpu-memory", 0, "only types with at least this much memory per GPU, in GiB")
	fl.BoolVar(&opts.SpotOnly, "spot-only", false, "only offers with a spot price, cheapest spot $/GPU-hour first")
	output = cmdutil.AddOutputFlags(cmd, cmdutil.FormatTable, cmdutil.FormatJSON, cmdutil.FormatCSV)
	_ = cmd.RegisterFlagCompletionFunc("provider", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		names := make([]string, len(fleet.Providers))
		for i, p := range fleet.Providers {
			names[i] = string(p)
		}
		return names, cobra.ShellCompDirectiveNoFileComp
	})
	return cmd
}

// listedServices are the managed AI services whose own types the catalog
// lists; Azure ML bills the VM price, so its sizes are the VMs'.
var listedServices = []fleet.ManagedService{fleet.SageMaker, fleet.VertexAI}

func checkService(s string) error {
	switch {
	case s == "" || slices.Contains(listedServices, fleet.ManagedService(s)):
		return nil
	case fleet.ManagedService(s) == fleet.AzureML:
		return cmdutil.FlagErrorf("--service azure-ml: Azure ML bills the VM price of its size; list the VM sizes without --service (e.g. --provider azure --instance-type Standard_NC24ads_A100_v4)")
	}
	return cmdutil.FlagErrorf("invalid --service %q: want sagemaker or vertex-ai", s)
}

// checkFilters refuses a --gpu, --instance-type or --region that the
// catalog does not know for any cloud (case aside), naming the closest of
// --provider's (every cloud's without it): a typo is exit 2, not an empty
// list. A real name that matches no offer (T4 on GCP) is not an error.
func checkFilters(cat pricing.Catalog, opts *PricesOptions) error {
	svc := fleet.ManagedService(opts.Service)
	all := cat.Offers(pricing.Query{Service: svc})
	near := cat.Offers(pricing.Query{Provider: fleet.Provider(opts.Provider), Service: svc})
	for _, f := range []struct {
		flag, value, what string
		of                func(pricing.Offer) string
	}{
		{"--gpu", opts.GPU, "GPU model", func(o pricing.Offer) string { return o.Type.GPUModel }},
		{"--instance-type", opts.InstanceType, "instance type", func(o pricing.Offer) string { return o.Type.Name }},
		{"--region", opts.Region, "region", func(o pricing.Offer) string { return o.Region }},
	} {
		if f.value == "" || slices.ContainsFunc(all, func(o pricing.Offer) bool { return strings.EqualFold(f.of(o), f.value) }) {
			continue
		}
		if f.flag == "--gpu" {
			if _, ok := cat.GPU(f.value); ok {
				continue
			}
		}
		if f.flag == "--instance-type" {
			if err := otherService(cat, opts, f.value); err != nil {
				return err
			}
		}
		var names []string
		for _, o := range near {
			names = append(names, f.of(o))
		}
		slices.Sort(names)
		hint := suggest.Phrase(f.value, slices.Compact(names), func(s string) string { return f.flag + " " + s })
		if hint == "" {
			hint = "; 'gpufinops prices -o csv' lists them"
		}
		return cmdutil.FlagErrorf("%s: %q is not a%s %s of the catalog%s", f.flag, f.value, article(f.what), f.what, hint)
	}
	return nil
}

// otherService explains an --instance-type the query does not list but a
// cloud knows: sold under another service than --service asks for (so
// "--instance-type ml.g5.xlarge" says to add "--service sagemaker"), or a
// managed type without an offline price; nil otherwise.
func otherService(cat pricing.Catalog, opts *PricesOptions, name string) error {
	for _, p := range fleet.Providers {
		if opts.Provider != "" && fleet.Provider(opts.Provider) != p {
			continue
		}
		t, ok := cat.InstanceType(p, name)
		switch {
		case !ok:
			continue
		case t.Service == "" && opts.Service != "":
			return cmdutil.FlagErrorf("--instance-type: %q is a virtual machine type of %s, not a %s type; drop --service", name, p, opts.Service)
		case t.Service != "" && len(cat.Offers(pricing.Query{Provider: p, InstanceType: name, Service: t.Service})) == 0:
			return cmdutil.FlagErrorf("--instance-type: %q is a %s type the catalog has no offline price for (live prices cover it)", name, t.Service)
		case string(t.Service) != opts.Service:
			return cmdutil.FlagErrorf("--instance-type: %q is a %s type; add --service %s", name, t.Service, t.Service)
		}
	}
	return nil
}

// article is "n" before a vowel sound, for "an instance type".
func article(noun string) string {
	if strings.ContainsRune("aeiou", rune(noun[0])) {
		return "n"
	}
	return ""
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
	if err := checkFilters(cat, opts); err != nil {
		return err
	}
	offers := cat.Offers(pricing.Query{
		Provider:        fleet.Provider(opts.Provider),
		Region:          opts.Region,
		GPUModel:        opts.GPU,
		InstanceType:    opts.InstanceType,
		MinGPUMemoryGiB: opts.MinGPUMemory,
		Service:         fleet.ManagedService(opts.Service),
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
		opts.IO.Notef("no offers match %s\n", describeFilters(opts))
	}
	// No offers: an empty list in JSON, nothing in a table or CSV.
	some := func(p cmdutil.Printer) cmdutil.Printer {
		return func(w io.Writer) error {
			if len(rows) == 0 {
				return nil
			}
			return p(w)
		}
	}
	return cmdutil.Print(opts.Ctx, opts.IO.Out, opts.Output, opts.Filter, document(opts, rows), cmdutil.Printers{
		cmdutil.FormatTable: some(func(io.Writer) error { return writeTable(opts, rows) }),
		cmdutil.FormatCSV:   some(func(io.Writer) error { return writeCSV(opts, rows) }),
	})
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
	add("--service", opts.Service)
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
		"vCPUs", "RAM GiB", "on demand", "spot", perGPUHeader, "age days")
	t.AlignRight(4, 5, 6, 7, 8, 9, 10, 11)
	// On a terminal the type and its prices stay; the age, the host's size,
	// the GPU memory, the provider, the GPU count and model give way.
	t.SetWidth(opts.IO.TerminalWidth())
	t.Key(1, 2, 8, 9, 10)
	t.Truncate(1, 14)
	t.DropOrder(11, 7, 6, 5, 0, 4, 3)
	price := func(d *decimal.Decimal) string {
		switch {
		case d == nil:
			return "-"
		case tty:
			return money.FormatPlaces(*d, pricing.Currency, 4)
		default:
			return d.Round(perGPUPlaces).String()
		}
	}
	today := opts.today()
	for _, r := range rows {
		o := r.offer
		age := "-"
		if d := oldest(today, o.OnDemand, o.Spot); d != nil {
			age = strconv.Itoa(*d)
		}
		t.AddRow(string(o.Type.Provider), o.Region, o.Type.Name, o.Type.GPUModel,
			formatFloat(o.Type.GPUCount), formatGiB(o.Type.GPUMemoryGiB),
			formatFloat(o.Type.VCPUs), formatFloat(o.Type.MemoryGiB),
			price(hourly(o.OnDemand)), price(hourly(o.Spot)), price(r.sortKey), age)
	}
	if err := t.Render(); err != nil {
		return err
	}
	if tty {
		opts.IO.Notef("\nList prices in %s per instance-hour as of %s; per GPU hour = price / count; - = no price.\n"+
			"Spot is the cheapest zone's price at that time; '-o json' adds AWS's typical spot saving%s.\n",
			pricing.Currency, asOfDates(rows, today), adviceDates(rows, today))
		if opts.Service != "" {
			opts.IO.Notef("%s\n", serviceNote(fleet.ManagedService(opts.Service)))
		}
	}
	return nil
}

// serviceNote says what a managed service's offline prices are.
func serviceNote(s fleet.ManagedService) string {
	if s == fleet.SageMaker {
		return "SageMaker prices here are estimates: the EC2 price times the markup observed in SageMaker's list prices ('-o json' gives each one's source)."
	}
	return "Vertex AI prices are per replica-hour, the sum of Vertex AI's own vCPU, RAM and accelerator SKUs; never the Compute Engine price."
}

// today is the clock's date the ages are counted to.
func (opts *PricesOptions) today() time.Time {
	if opts.Now != nil {
		return opts.Now()
	}
	return time.Now()
}

// ageDays is the age of a price's as-of date on today; nil when the price
// or its date is missing.
func ageDays(today time.Time, asOf string) *int {
	d, ok := pricing.AgeDays(asOf, today)
	if !ok {
		return nil
	}
	return &d
}

// oldest is the greatest age of the prices given; nil when none has a date.
func oldest(today time.Time, ps ...*pricing.Price) *int {
	var out *int
	for _, p := range ps {
		if p == nil {
			continue
		}
		if d := ageDays(today, p.AsOf); d != nil && (out == nil || *d > *out) {
			out = d
		}
	}
	return out
}

// adviceDates names the spot advice's dates and ages, e.g. " (advice as of
// 2025-06-28, 521 days old)"; empty when no row has advice.
func adviceDates(rows []row, today time.Time) string {
	var dates []string
	for _, r := range rows {
		if r.advice != nil && !slices.Contains(dates, r.advice.AsOf) {
			dates = append(dates, r.advice.AsOf)
		}
	}
	if len(dates) == 0 {
		return ""
	}
	slices.Sort(dates)
	return " (advice as of " + datesWithAge(dates, today) + ")"
}

// datesWithAge writes dates with their ages: "2026-11-30, 1 day old".
func datesWithAge(dates []string, today time.Time) string {
	parts := make([]string, len(dates))
	for i, d := range dates {
		parts[i] = d
		if a := ageDays(today, d); a != nil {
			parts[i] = fmt.Sprintf("%s, %s old", d, text.Plural(*a, "day"))
		}
	}
	return strings.Join(parts, "; ")
}

func hourly(p *pricing.Price) *decimal.Decimal {
	if p == nil {
		return nil
	}
	return &p.Hourly
}

func asOfDates(rows []row, today time.Time) string {
	var dates []string
	for _, r := range rows {
		for _, p := range []*pricing.Price{r.offer.OnDemand, r.offer.Spot} {
			if p != nil && !slices.Contains(dates, p.AsOf) {
				dates = append(dates, p.AsOf)
			}
		}
	}
	slices.Sort(dates)
	return datesWithAge(dates, today)
}

// Kind and SchemaVersion head the JSON document, a List of Offers.
const (
	Kind          = "PriceList"
	SchemaVersion = "1.0"
)

// Offer is one offer in the JSON document. Money is a JSON number with the
// catalog's precision; null when unknown.
type Offer struct {
	Provider     fleet.Provider `json:"provider"`
	Region       string         `json:"region"`
	InstanceType string         `json:"instanceType"`
	// Service is the managed AI service that sells the type (sagemaker,
	// vertex-ai); absent for a virtual machine.
	Service          fleet.ManagedService `json:"service,omitempty"`
	Family           string               `json:"family,omitempty"`
	GPUModel         string               `json:"gpuModel"`
	GPUCount         float64              `json:"gpuCount"`
	GPUMemoryGiB     float64              `json:"gpuMemoryGiB"`
	VCPUs            float64              `json:"vcpus"`
	MemoryGiB        float64              `json:"memoryGiB"`
	Arch             string               `json:"arch"`
	Currency         string               `json:"currency"`
	OnDemandHourly   *json.Number         `json:"onDemandHourly" jsonschema:"oneof_type=number;null"`
	SpotHourly       *json.Number         `json:"spotHourly" jsonschema:"oneof_type=number;null"`
	SpotZone         string               `json:"spotZone,omitempty"`
	PerGPUHourly     *json.Number         `json:"perGpuHourly" jsonschema:"oneof_type=number;null"`
	SpotPerGPUHourly *json.Number         `json:"spotPerGpuHourly" jsonschema:"oneof_type=number;null"`
	SpotAdvice       *pricing.SpotAdvice  `json:"spotAdvice,omitempty"`
	Source           string               `json:"source"`
	AsOf             string               `json:"asOf"`
	// OnDemandAgeDays, SpotAgeDays and SpotAdviceAgeDays are the days since
	// each one's as-of date; null when there is none.
	OnDemandAgeDays   *int `json:"onDemandAgeDays" jsonschema:"oneof_type=integer;null"`
	SpotAgeDays       *int `json:"spotAgeDays" jsonschema:"oneof_type=integer;null"`
	SpotAdviceAgeDays *int `json:"spotAdviceAgeDays,omitempty"`
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

func toOffer(r row, today time.Time) Offer {
	o := r.offer
	j := Offer{
		Provider: o.Type.Provider, Region: o.Region, InstanceType: o.Type.Name, Service: o.Type.Service, Family: o.Type.Family,
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
		j.SpotAgeDays = ageDays(today, o.Spot.AsOf)
	}
	if o.OnDemand != nil {
		j.OnDemandAgeDays = ageDays(today, o.OnDemand.AsOf)
	}
	if r.advice != nil {
		j.SpotAdviceAgeDays = ageDays(today, r.advice.AsOf)
	}
	for _, p := range []*pricing.Price{o.Spot, o.OnDemand} {
		if p != nil {
			j.Source, j.AsOf = p.Source, p.AsOf
		}
	}
	return j
}

// document is the JSON document of rows.
func document(opts *PricesOptions, rows []row) envelope.List[Offer] {
	out := make([]Offer, len(rows))
	today := opts.today()
	for i, r := range rows {
		out[i] = toOffer(r, today)
	}
	return envelope.NewList(Kind, SchemaVersion, out)
}

var csvHeader = []string{
	"provider", "region", "instanceType", "gpuModel", "gpuCount", "gpuMemoryGiB", "vcpus", "memoryGiB", "arch",
	"currency", "onDemandHourly", "spotHourly", "spotZone", "perGpuHourly", "spotPerGpuHourly",
	"spotAdvisorSavingsPercent", "spotAdvisorInterruptionBand", "source", "asOf",
	"onDemandAgeDays", "spotAgeDays", "spotAdviceAgeDays",
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
	today := opts.today()
	days := func(d *int) string {
		if d == nil {
			return ""
		}
		return strconv.Itoa(*d)
	}
	for _, r := range rows {
		j := toOffer(r, today)
		var savings, band string
		if j.SpotAdvice != nil {
			savings, band = strconv.Itoa(j.SpotAdvice.SavingsPercent), j.SpotAdvice.Band
		}
		rec := []string{
			string(j.Provider), j.Region, j.InstanceType, j.GPUModel, formatFloat(j.GPUCount),
			formatFloat(j.GPUMemoryGiB), formatFloat(j.VCPUs), formatFloat(j.MemoryGiB), j.Arch, j.Currency,
			str(j.OnDemandHourly), str(j.SpotHourly), j.SpotZone, str(j.PerGPUHourly), str(j.SpotPerGPUHourly),
			savings, band, j.Source, j.AsOf,
			days(j.OnDemandAgeDays), days(j.SpotAgeDays), days(j.SpotAdviceAgeDays),
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
