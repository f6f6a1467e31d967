// Package fit implements `gpufinops fit`: the GPU memory a language model
// needs at a precision, and the cheapest instances per cloud that serve it,
// with a decode throughput and $/1M tokens estimate.
package fit

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/shopspring/decimal"
	"github.com/spf13/cobra"

	"github.com/gpufinops/gpufinops/pkg/cmdutil"
	"github.com/gpufinops/gpufinops/pkg/envelope"
	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pkg/iostreams"
	"github.com/gpufinops/gpufinops/pkg/llm"
	"github.com/gpufinops/gpufinops/pkg/money"
	"github.com/gpufinops/gpufinops/pkg/tableprinter"
	"github.com/gpufinops/gpufinops/pricing"
)

// FitOptions are the inputs of `gpufinops fit`.
type FitOptions struct {
	IO      *iostreams.IOStreams
	Catalog func() (pricing.Catalog, error)

	// Model is a known model's name or alias; Params a parameter count such
	// as "13B". Exactly one is set (unless ListModels).
	Model  string
	Params string
	// ParamCount is Params parsed.
	ParamCount float64
	// Precision is the weights' format; KVPrecision the KV cache's, empty for
	// the default (see llm.DefaultKVPrecision).
	Precision   llm.Precision
	KVPrecision llm.Precision
	// Context is the tokens per sequence; Batch the sequences decoded at once.
	Context int
	Batch   int

	Provider   string
	Region     string
	AllRegions bool
	// ListModels prints the known models instead.
	ListModels bool
	// Output is table or json.
	Output string
	// Filter is the --jq or --template filter of the JSON output; nil prints it whole.
	Filter cmdutil.Filter
}

// NewCmdFit builds the command; runF replaces the run function in tests.
func NewCmdFit(f *cmdutil.Factory, runF func(*FitOptions) error) *cobra.Command {
	opts := &FitOptions{IO: f.IOStreams, Catalog: f.Catalog}
	var output *cmdutil.Output
	var precision, kvPrecision string
	cmd := &cobra.Command{
		Use:   "fit {--model NAME | --params COUNT} [flags]",
		Short: "Size a language model's GPU memory and find the cheapest instances to serve it",
		Long: `Compute the GPU memory one replica of a language model needs (weights, KV cache
and runtime overhead) at a precision, context and batch, and list per cloud the
cheapest instance type that holds it, with an estimate of its decode speed in
output tokens per second and of its cost per million output tokens.

Give a known model with --model (see --list-models; Hugging Face names such as
meta-llama/Llama-3.1-8B-Instruct work) or any dense model's size with --params;
the shape of a model given by size is borrowed from the known model nearest in
size, so its KV cache is an estimate.

Weights take 4 (fp32), 2 (fp16, bf16), 1 (fp8, int8) or 0.5 (int4) bytes per
parameter. The KV cache stays fp16 when the weights are quantized unless
--kv-precision says otherwise. Overhead is max(1 GiB, 10 % of the weights). A
type holds the model when the required memory is within 90 % of the memory of a
power-of-two number of its GPUs (tensor parallel). Tokens per second is a
memory-bandwidth bound (65 % of peak) capped by the tensor throughput (50 % of
peak) where the catalog knows it. Prices are the embedded catalog's on-demand
list prices. Formulas and limits: docs/fit.md.`,
		Example: `  $ gpufinops fit --model llama-3.1-8b
  $ gpufinops fit --model meta-llama/Llama-3.1-70B-Instruct --precision int4 --provider aws
  $ gpufinops fit --params 13B --precision int8 --context 8192 --batch 16 -o json
  $ gpufinops fit --model mixtral-8x7b --all-regions --provider gcp
  $ gpufinops fit --list-models`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Output, opts.Filter = output.Format(), output.Filter
			if err := opts.complete(precision, kvPrecision); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return fitRun(opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Model, "model", "", "a known model, e.g. llama-3.1-8b, mistral-7b, qwen2.5-72b (see --list-models)")
	fl.StringVar(&opts.Params, "params", "", "parameter count of a dense model not in the list, e.g. 13B, 1.5B, 350M, 70e9")
	fl.StringVar(&precision, "precision", "fp16", "weight precision: fp32, fp16, bf16, fp8, int8 or int4")
	fl.StringVar(&kvPrecision, "kv-precision", "", "KV cache precision (default fp16; fp32 or bf16 with weights of that precision)")
	fl.IntVar(&opts.Context, "context", 4096, "tokens per sequence (prompt and output) the KV cache holds")
	fl.IntVar(&opts.Batch, "batch", 1, "sequences one replica decodes at once")
	fl.StringVar(&opts.Provider, "provider", "", "only this cloud: aws, azure or gcp")
	fl.StringVar(&opts.Region, "region", "", "only this region, e.g. us-east-1, eastus, us-central1")
	fl.BoolVar(&opts.AllRegions, "all-regions", false, "the cheapest instance in every region, not only per cloud")
	fl.BoolVar(&opts.ListModels, "list-models", false, "list the known models and their shapes")
	output = cmdutil.AddOutputFlags(cmd, cmdutil.FormatTable, cmdutil.FormatJSON)
	_ = cmd.RegisterFlagCompletionFunc("provider", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		names := make([]string, len(fleet.Providers))
		for i, p := range fleet.Providers {
			names[i] = string(p)
		}
		return names, cobra.ShellCompDirectiveNoFileComp
	})
	_ = cmd.RegisterFlagCompletionFunc("model", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		var names []string
		for _, m := range llm.Models() {
			names = append(names, strings.ToLower(m.Name))
		}
		return names, cobra.ShellCompDirectiveNoFileComp
	})
	for _, name := range []string{"precision", "kv-precision"} {
		_ = cmd.RegisterFlagCompletionFunc(name, func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
			names := make([]string, len(llm.Precisions))
			for i, p := range llm.Precisions {
				names[i] = string(p)
			}
			return names, cobra.ShellCompDirectiveNoFileComp
		})
	}
	return cmd
}

// Upper bounds of --context and --batch: beyond any model's context window
// and any server's batch, so a larger value is a typo.
const (
	maxContext = 10_000_000
	maxBatch   = 1_000_000
)

// complete checks and parses the flags; every error is a usage error.
func (opts *FitOptions) complete(precision, kvPrecision string) error {
	opts.Provider = strings.ToLower(opts.Provider)
	if opts.Provider != "" && !fleet.Provider(opts.Provider).Valid() {
		return cmdutil.FlagErrorf("invalid --provider %q: want aws, azure or gcp", opts.Provider)
	}
	if opts.Region != "" && opts.AllRegions {
		return cmdutil.FlagErrorf("--region and --all-regions cannot be used together")
	}
	if opts.ListModels {
		if opts.Model != "" || opts.Params != "" {
			return cmdutil.FlagErrorf("--list-models takes no --model or --params")
		}
		return nil
	}
	switch {
	case opts.Model == "" && opts.Params == "":
		return cmdutil.FlagErrorf("give a model: --model NAME or --params COUNT")
	case opts.Model != "" && opts.Params != "":
		return cmdutil.FlagErrorf("give --model or --params, not both")
	case opts.Model != "":
		if _, ok := llm.Lookup(opts.Model); !ok {
			hint := ""
			if s := llm.Suggest(opts.Model); len(s) > 0 {
				hint = " (did you mean " + strings.Join(s, ", ") + "?)"
			}
			return cmdutil.FlagErrorf("unknown model %q%s: see 'gpufinops fit --list-models', or give its size with --params", opts.Model, hint)
		}
	default:
		n, err := llm.ParseParams(opts.Params)
		if err != nil {
			return cmdutil.FlagErrorf("invalid --params %q: %v", opts.Params, err)
		}
		opts.ParamCount = n
	}
	p, err := llm.ParsePrecision(precision)
	if err != nil {
		return cmdutil.FlagErrorf("invalid --precision %q: want fp32, fp16, bf16, fp8, int8 or int4", precision)
	}
	opts.Precision = p
	if kvPrecision != "" {
		kv, err := llm.ParsePrecision(kvPrecision)
		if err != nil {
			return cmdutil.FlagErrorf("invalid --kv-precision %q: want fp32, fp16, bf16, fp8, int8 or int4", kvPrecision)
		}
		opts.KVPrecision = kv
	}
	if opts.Context <= 0 || opts.Context > maxContext {
		return cmdutil.FlagErrorf("invalid --context %d: want 1 to %d tokens", opts.Context, maxContext)
	}
	if opts.Batch <= 0 || opts.Batch > maxBatch {
		return cmdutil.FlagErrorf("invalid --batch %d: want 1 to %d sequences", opts.Batch, maxBatch)
	}
	return nil
}

// model is the model to size: a known one, or one estimated from its size.
func (opts *FitOptions) model() llm.Model {
	if opts.Model != "" {
		if m, ok := llm.Lookup(opts.Model); ok {
			return m
		}
	}
	return llm.EstimateModel(opts.ParamCount)
}

func fitRun(opts *FitOptions) error {
	if opts.ListModels {
		return listModels(opts)
	}
	cat, err := opts.Catalog()
	if err != nil {
		return err
	}
	m := opts.model()
	if m.Params <= 0 {
		return cmdutil.FlagErrorf("give a model: --model NAME or --params COUNT")
	}
	w := llm.Workload{Precision: opts.Precision, KVPrecision: opts.KVPrecision, Context: opts.Context, Batch: opts.Batch}
	if err := w.Validate(); err != nil {
		return cmdutil.FlagErrorf("%v", err)
	}
	if m.MaxContext > 0 && opts.Context > m.MaxContext {
		opts.IO.Notef("warning: context %d is more than %s's maximum of %d tokens\n", opts.Context, m.Name, m.MaxContext)
	}
	plan := w.Plan(cat, m, pricing.Query{Provider: fleet.Provider(opts.Provider), Region: opts.Region}, opts.AllRegions)
	if len(plan.Options) == 0 && len(plan.MultiInstance) == 0 {
		opts.IO.Notef("no GPU offers match %s\n", describeFilters(opts))
	}
	return cmdutil.Print(context.Background(), opts.IO.Out, opts.Output, opts.Filter, NewDocument(m, w, plan), cmdutil.Printers{
		cmdutil.FormatTable: func(io.Writer) error { return writeTable(opts, m, w, plan) },
	})
}

func describeFilters(opts *FitOptions) string {
	var parts []string
	if opts.Provider != "" {
		parts = append(parts, "--provider "+opts.Provider)
	}
	if opts.Region != "" {
		parts = append(parts, "--region "+opts.Region)
	}
	if len(parts) == 0 {
		return "(the catalog has none)"
	}
	return strings.Join(parts, " ")
}

// title is the model and workload in one line.
func title(m llm.Model, w llm.Workload) string {
	var b strings.Builder
	if m.Estimated {
		fmt.Fprintf(&b, "%s-parameter model (shape estimated from %s)", m.Name, m.ShapeFrom)
	} else {
		fmt.Fprintf(&b, "%s: %s parameters", m.Name, llm.FormatParams(m.Params))
		if m.MoE() {
			fmt.Fprintf(&b, " (%s active)", llm.FormatParams(m.ActiveParams))
		}
	}
	fmt.Fprintf(&b, ", %s weights, %s KV cache, context %d, batch %d", w.Precision, w.KV(), w.Context, w.Batch)
	return b.String()
}

func writeTable(opts *FitOptions, m llm.Model, w llm.Workload, plan llm.Plan) error {
	tty, width := opts.IO.IsStdoutTTY(), opts.IO.TerminalWidth()
	var page bytes.Buffer
	if err := writePage(&page, tty, width, m, w, plan); err != nil {
		return err
	}
	text := page.String()
	if tty {
		text = tableprinter.Wrap(text, width)
	}
	_, err := io.WriteString(opts.IO.Out, text)
	return err
}

// writePage writes the plan for people (tty) or pipes; on a terminal the
// tables fit width.
func writePage(out io.Writer, tty bool, width int, m llm.Model, w llm.Workload, plan llm.Plan) error {
	fmt.Fprintf(out, "%s\n\n", title(m, w))

	n := plan.Need
	kvLabel := "KV cache"
	if m.Estimated {
		kvLabel = "KV cache (estimated)"
	}
	mem := tableprinter.New(out, tty, "memory", "GiB")
	mem.AlignRight(1)
	mem.AddRow("weights", gib(n.WeightsGiB))
	mem.AddRow(kvLabel, gib(n.KVCacheGiB))
	mem.AddRow("overhead", gib(n.OverheadGiB))
	mem.AddRow("required", gib(n.RequiredGiB))
	if err := mem.Render(); err != nil {
		return err
	}

	if len(plan.Options) > 0 {
		fmt.Fprintln(out)
		t := tableprinter.New(out, tty, "provider", "region", "instance type", "gpu", "count", "GiB per GPU",
			"tensor parallel", "replicas", "tokens per s", "per hour", "per 1M tokens")
		t.AlignRight(4, 5, 6, 7, 8, 9, 10)
		t.SetWidth(width)
		t.Key(1, 2, 9, 10)
		t.Truncate(1, 14)
		t.DropOrder(0, 5, 6, 4, 7, 1, 3)
		for _, o := range plan.Options {
			t.AddRow(string(o.Provider), o.Region, o.InstanceType, o.GPUModel, formatFloat(o.GPUCount),
				formatGiB(o.GPUMemoryGiB), strconv.Itoa(o.TensorParallel), strconv.Itoa(o.Replicas),
				strconv.FormatFloat(o.TokensPerSecond, 'f', 1, 64), price(o.Hourly, tty, 4, 6), price(o.CostPer1MTokens, tty, 2, 4))
		}
		if err := t.Render(); err != nil {
			return err
		}
	}
	if len(plan.MultiInstance) > 0 {
		fmt.Fprintln(out)
		if len(plan.Options) == 0 {
			fmt.Fprintf(out, "No single instance holds %s GiB.\n", gib(n.RequiredGiB))
		}
		unit := " " + pricing.Currency // a terminal's amounts carry the sign
		if tty {
			unit = ""
		}
		for _, mi := range plan.MultiInstance {
			msg := mi.String()
			fmt.Fprintf(out, "%s%s; %d × %s = %s%s per hour.\n", strings.ToUpper(msg[:1]), msg[1:], mi.Instances,
				price(mi.Hourly, tty, 4, 6), price(mi.TotalHourly, tty, 2, 6), unit)
		}
	}

	fmt.Fprintln(out)
	if dates := asOfDates(plan); dates != "" {
		fmt.Fprintf(out, "Prices: on-demand list prices in %s per instance-hour as of %s (embedded catalog).\n", pricing.Currency, dates)
	}
	fmt.Fprintf(out, "Tokens per s: a decode estimate for all replicas of an instance, bound by memory bandwidth at %.0f %% of peak"+
		" (and by tensor throughput at %.0f %% of peak where the catalog has it); per 1M tokens = per hour / (tokens per s × 3600) × 1e6.\n",
		llm.BandwidthEfficiency*100, llm.ComputeEfficiency*100)
	fmt.Fprintf(out, "A type holds the model when required ≤ %.0f %% of the memory of a power-of-two number of its GPUs (tensor parallel).\n", llm.UsableFraction*100)
	if m.Estimated {
		fmt.Fprintf(out, "The KV cache uses %s's shape (%d layers, %d KV heads of %d); models without grouped-query attention need more.\n",
			m.ShapeFrom, m.Layers, m.KVHeads, m.HeadDim)
	}
	if m.KVLatentDim > 0 {
		fmt.Fprintf(out, "%s caches a compressed latent of %d values per token and layer (multi-head latent attention); every GPU of a replica keeps it whole.\n",
			m.Name, m.KVLatentDim)
	}
	if m.MoE() {
		fmt.Fprintf(out, "%s is a mixture of experts: memory holds all %s parameters; ", m.Name, llm.FormatParams(m.Params))
		if w.Batch == 1 {
			fmt.Fprintf(out, "a decode step reads the %s active ones.\n", llm.FormatParams(m.ActiveParams))
		} else {
			fmt.Fprintf(out, "a decode step of %d sequences reads %s on average: the shared weights and the experts its tokens are routed to (%s active per token).\n",
				w.Batch, llm.FormatParams(m.ParamsReadPerStep(w.Batch)), llm.FormatParams(m.ActiveParams))
		}
	}
	return nil
}

func asOfDates(plan llm.Plan) string {
	var dates []string
	add := func(d string) {
		if d != "" && !slices.Contains(dates, d) {
			dates = append(dates, d)
		}
	}
	for _, o := range plan.Options {
		add(o.AsOf)
	}
	for _, mi := range plan.MultiInstance {
		add(mi.AsOf)
	}
	slices.Sort(dates)
	return strings.Join(dates, ", ")
}

// price shows a USD amount to ttyPlaces on a terminal ("$1.0060",
// pkg/money) and rounded to places elsewhere.
func price(d decimal.Decimal, tty bool, ttyPlaces, places int32) string {
	if tty {
		return money.FormatPlaces(d, money.USD, ttyPlaces)
	}
	return d.Round(places).String()
}

func gib(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }

func round(v float64, places int) float64 {
	p := math.Pow(10, float64(places))
	return math.Round(v*p) / p
}

func formatFloat(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// formatGiB shows per-GPU memory to one decimal place, without a trailing ".0".
func formatGiB(v float64) string {
	return strings.TrimSuffix(strconv.FormatFloat(v, 'f', 1, 64), ".0")
}

// Kind and SchemaVersion head the JSON documents: the fit and the model list.
const (
	Kind          = "Fit"
	ModelListKind = "ModelList"
	SchemaVersion = "1.0"
)

// Document is the JSON document of `gpufinops fit -o json`. Memory is in GiB
// rounded to 2 places; money is a JSON number in USD.
type Document struct {
	envelope.Header
	Model        string          `json:"model"`
	ModelSource  string          `json:"modelSource"`
	Estimated    bool            `json:"estimated"`
	ShapeFrom    string          `json:"shapeFrom,omitempty"`
	Params       float64         `json:"params"`
	ActiveParams float64         `json:"activeParams"`
	Precision    llm.Precision   `json:"precision"`
	KVPrecision  llm.Precision   `json:"kvPrecision"`
	Context      int             `json:"context"`
	Batch        int             `json:"batch"`
	WeightsGiB   float64         `json:"weightsGiB"`
	KVCacheGiB   float64         `json:"kvCacheGiB"`
	OverheadGiB  float64         `json:"overheadGiB"`
	RequiredGiB  float64         `json:"requiredGiB"`
	Currency     string          `json:"currency"`
	Options      []Option        `json:"options"`
	Multi        []MultiInstance `json:"multiInstance,omitempty"`
	Assumptions  Assumptions     `json:"assumptions"`
}

// Option is one way to serve the model: an instance type with its GPUs split
// by tensor parallelism and replicas, its price and throughput.
type Option struct {
	Provider        fleet.Provider `json:"provider"`
	Region          string         `json:"region"`
	InstanceType    string         `json:"instanceType"`
	GPUModel        string         `json:"gpuModel"`
	GPUCount        float64        `json:"gpuCount"`
	GPUMemoryGiB    float64        `json:"gpuMemoryGiB"`
	TensorParallel  int            `json:"tensorParallel"`
	Replicas        int            `json:"replicas"`
	RequiredGiB     float64        `json:"requiredGiB"`
	Hourly          json.Number    `json:"hourly"`
	TokensPerSecond float64        `json:"tokensPerSecond"`
	Bound           llm.Bound      `json:"bound"`
	CostPer1M       json.Number    `json:"costPer1MTokens"`
	AsOf            string         `json:"asOf"`
}

// MultiInstance is a model too large for one instance: how many instances
// of a type it needs.
type MultiInstance struct {
	Provider     fleet.Provider `json:"provider"`
	Region       string         `json:"region"`
	InstanceType string         `json:"instanceType"`
	GPUModel     string         `json:"gpuModel"`
	GPUCount     float64        `json:"gpuCount"`
	GPUMemoryGiB float64        `json:"gpuMemoryGiB"`
	Instances    int            `json:"instances"`
	Hourly       json.Number    `json:"hourly"`
	TotalHourly  json.Number    `json:"totalHourly"`
	AsOf         string         `json:"asOf"`
	Message      string         `json:"message"`
}

// Assumptions are the fractions and efficiencies the estimate uses.
type Assumptions struct {
	UsableFraction      float64 `json:"usableFraction"`
	OverheadFraction    float64 `json:"overheadFraction"`
	MinOverheadGiB      float64 `json:"minOverheadGiB"`
	BandwidthEfficiency float64 `json:"bandwidthEfficiency"`
	ComputeEfficiency   float64 `json:"computeEfficiency"`
}

// NewDocument is the JSON document of the plan for model m and workload w.
func NewDocument(m llm.Model, w llm.Workload, plan llm.Plan) Document {
	n := plan.Need
	j := Document{
		Header: envelope.New(Kind, SchemaVersion),
		Model:  m.Name, ModelSource: m.Source, Estimated: m.Estimated, ShapeFrom: m.ShapeFrom,
		Params: m.Params, ActiveParams: m.ActiveParams,
		Precision: w.Precision, KVPrecision: w.KV(), Context: w.Context, Batch: w.Batch,
		WeightsGiB: round(n.WeightsGiB, 2), KVCacheGiB: round(n.KVCacheGiB, 2),
		OverheadGiB: round(n.OverheadGiB, 2), RequiredGiB: round(n.RequiredGiB, 2),
		Currency: pricing.Currency,
		Options:  []Option{},
		Assumptions: Assumptions{
			UsableFraction: llm.UsableFraction, OverheadFraction: llm.OverheadFraction, MinOverheadGiB: llm.MinOverheadGiB,
			BandwidthEfficiency: llm.BandwidthEfficiency, ComputeEfficiency: llm.ComputeEfficiency,
		},
	}
	for _, o := range plan.Options {
		j.Options = append(j.Options, Option{
			Provider: o.Provider, Region: o.Region, InstanceType: o.InstanceType, GPUModel: o.GPUModel,
			GPUCount: o.GPUCount, GPUMemoryGiB: o.GPUMemoryGiB, TensorParallel: o.TensorParallel, Replicas: o.Replicas,
			RequiredGiB: round(o.RequiredGiB, 2), Hourly: json.Number(o.Hourly.String()),
			TokensPerSecond: round(o.TokensPerSecond, 1), Bound: o.Bound,
			CostPer1M: json.Number(o.CostPer1MTokens.Round(4).String()), AsOf: o.AsOf,
		})
	}
	for _, mi := range plan.MultiInstance {
		j.Multi = append(j.Multi, MultiInstance{
			Provider: mi.Provider, Region: mi.Region, InstanceType: mi.InstanceType, GPUModel: mi.GPUModel,
			GPUCount: mi.GPUCount, GPUMemoryGiB: mi.GPUMemoryGiB, Instances: mi.Instances,
			Hourly: json.Number(mi.Hourly.String()), TotalHourly: json.Number(mi.TotalHourly.String()),
			AsOf: mi.AsOf, Message: mi.String(),
		})
	}
	return j
}

func listModels(opts *FitOptions) error {
	ms := llm.Models()
	return cmdutil.Print(context.Background(), opts.IO.Out, opts.Output, opts.Filter, envelope.NewList(ModelListKind, SchemaVersion, ms), cmdutil.Printers{
		cmdutil.FormatTable: func(io.Writer) error { return writeModels(opts, ms) },
	})
}

// writeModels lists the known models with their shapes.
func writeModels(opts *FitOptions, ms []llm.Model) error {
	tty := opts.IO.IsStdoutTTY()
	t := tableprinter.New(opts.IO.Out, tty, "model", "params", "active", "layers", "heads", "KV heads", "head size",
		"KiB KV per token", "max context")
	t.AlignRight(1, 2, 3, 4, 5, 6, 7, 8)
	t.SetWidth(opts.IO.TerminalWidth())
	t.Key(0, 1, 7)
	t.TruncateMiddle(0, 16)
	t.DropOrder(6, 4, 3, 2, 5)
	for _, m := range ms {
		kv := float64(m.KVElementsPerToken()) * llm.FP16.Bytes() / 1024
		kvHeads := strconv.Itoa(m.KVHeads)
		if m.KVLatentDim > 0 {
			kvHeads = "latent " + strconv.Itoa(m.KVLatentDim)
		}
		t.AddRow(m.Name, llm.FormatParams(m.Params), llm.FormatParams(m.ActiveParams), strconv.Itoa(m.Layers),
			strconv.Itoa(m.Heads), kvHeads, strconv.Itoa(m.HeadDim), strconv.FormatFloat(kv, 'f', 1, 64), strconv.Itoa(m.MaxContext))
	}
	if err := t.Render(); err != nil {
		return err
	}
	if tty {
		opts.IO.Notef("\nKV per token is at fp16, all layers. Sources: 'gpufinops fit --list-models -o json' and docs/fit.md.\n")
	}
	return nil
}
