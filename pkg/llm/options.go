package llm

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pricing"
)

// Option is an instance type that holds a model, as sold in one region at its
// on-demand price.
type Option struct {
	Provider     fleet.Provider
	Region       string
	InstanceType string
	GPUModel     string
	GPUCount     float64
	// GPUMemoryGiB is per GPU.
	GPUMemoryGiB float64
	// TensorParallel is the GPUs one replica spans; Replicas = GPUCount /
	// TensorParallel copies of the model run side by side.
	TensorParallel int
	Replicas       int
	// RequiredGiB is what one replica needs on its TensorParallel GPUs.
	RequiredGiB float64
	// Hourly is the instance's on-demand price in USD.
	Hourly decimal.Decimal
	// TokensPerSecond is the decode estimate of all replicas together.
	TokensPerSecond float64
	// Bound is what limits TokensPerSecond.
	Bound Bound
	// CostPer1MTokens = Hourly / (TokensPerSecond × 3600) × 1e6, in USD.
	CostPer1MTokens decimal.Decimal
	// AsOf is the price's date.
	AsOf string
}

// MultiInstance says a model fits on no single instance: it needs at least
// Instances of the largest type, splitting the model across instances
// (pipeline parallel) and across each instance's GPUs (tensor parallel).
type MultiInstance struct {
	Provider     fleet.Provider
	Region       string
	InstanceType string
	GPUModel     string
	GPUCount     float64
	GPUMemoryGiB float64
	Instances    int
	// Hourly is one instance's on-demand price; TotalHourly is Instances × Hourly.
	Hourly      decimal.Decimal
	TotalHourly decimal.Decimal
	AsOf        string
}

// String is the one-line verdict, e.g. "needs more than one instance: at
// least 2 × p5en.48xlarge (8 × H200) on aws in us-east-1".
func (mi MultiInstance) String() string {
	return fmt.Sprintf("needs more than one instance: at least %d × %s (%s × %s) on %s in %s",
		mi.Instances, mi.InstanceType, formatCount(mi.GPUCount), mi.GPUModel, mi.Provider, mi.Region)
}

// Plan is what it takes to serve a model: its memory need, the cheapest
// single instances that hold it and, where there are none, how many of the
// largest instances it needs.
type Plan struct {
	Need Need
	// Options are the cheapest single instances that hold one replica, one per
	// provider (per provider and region when asked), sorted by hourly price,
	// then $/1M tokens.
	Options []Option
	// MultiInstance has, for each provider (and region) where no single
	// instance holds the model, the fewest instances of its largest type;
	// sorted by total hourly price. With no Options it is the whole answer.
	MultiInstance []MultiInstance
}

// Options returns the cheapest instance per provider, among the catalog's
// offers matching q, that holds one replica of m at weight precision p (default
// KV cache precision), sorted by hourly price then $/1M tokens. It is empty when
// nothing fits; Workload.Plan also says how many instances it takes then.
func Options(cat pricing.Catalog, m Model, p Precision, context, batch int, q pricing.Query) []Option {
	return Workload{Precision: p, Context: context, Batch: batch}.Plan(cat, m, q, false).Options
}

// candidate is an offer gpufinops can size a model on.
type candidate struct {
	offer  pricing.Offer
	gpu    pricing.GPUSpec
	it     pricing.InstanceType // GPUMemoryGiB filled from the spec when missing
	hourly decimal.Decimal
}

// servable reports whether an offer can be sized: an on-demand price, whole
// NVIDIA or AMD GPUs whose memory bandwidth is known. Inferentia, Trainium,
// Gaudi and FPGAs are left out: their memory figures and serving stacks
// (Neuron, SynapseAI, HLS) do not follow the GPU arithmetic here, and the
// catalog has no bandwidth for them.
func servable(cat pricing.Catalog, o pricing.Offer) (candidate, bool) {
	if o.OnDemand == nil {
		return candidate{}, false
	}
	if _, whole := wholeGPUs(o.Type.GPUCount); !whole {
		return candidate{}, false
	}
	g, ok := cat.GPU(o.Type.GPUModel)
	if !ok || g.MemoryBandwidthGBs <= 0 {
		return candidate{}, false
	}
	switch strings.ToLower(g.Vendor) {
	case "nvidia", "amd":
	default:
		return candidate{}, false
	}
	it := o.Type
	if it.GPUMemoryGiB <= 0 {
		it.GPUMemoryGiB = g.MemoryGiB
	}
	if it.GPUMemoryGiB <= 0 {
		return candidate{}, false
	}
	return candidate{offer: o, gpu: g, it: it, hourly: o.OnDemand.Hourly}, true
}

// Plan sizes m under w against the catalog's offers matching q: per provider
// (per provider and region when perRegion), the cheapest instance that holds
// one replica or, where none does, the fewest instances of the largest type.
// Invalid workloads (see Validate) give an empty plan.
func (w Workload) Plan(cat pricing.Catalog, m Model, q pricing.Query, perRegion bool) Plan {
	plan := Plan{Need: w.Need(m)}
	if w.Validate() != nil || plan.Need.RequiredGiB <= 0 {
		return plan
	}
	group := func(o pricing.Offer) string {
		if perRegion {
			return string(o.Type.Provider) + "/" + strings.ToLower(o.Region)
		}
		return string(o.Type.Provider)
	}
	var cands []candidate
	best := map[string]Option{}
	for _, o := range cat.Offers(q) {
		c, ok := servable(cat, o)
		if !ok {
			continue
		}
		cands = append(cands, c)
		k, fits := TensorParallel(plan.Need, c.it)
		if !fits {
			continue
		}
		opt := w.option(m, plan.Need, c, k)
		if opt.TokensPerSecond <= 0 {
			continue
		}
		g := group(o)
		if cur, ok := best[g]; !ok || compareOptions(opt, cur) < 0 {
			best[g] = opt
		}
	}
	for _, o := range best {
		plan.Options = append(plan.Options, o)
	}
	slices.SortFunc(plan.Options, compareOptions)

	largest := map[string]MultiInstance{}
	for _, c := range cands {
		g := group(c.offer)
		if _, ok := best[g]; ok {
			continue
		}
		mi, ok := multiInstance(plan.Need, c)
		if !ok {
			continue
		}
		if cur, ok := largest[g]; !ok || compareLargest(mi, cur) < 0 {
			largest[g] = mi
		}
	}
	for _, mi := range largest {
		plan.MultiInstance = append(plan.MultiInstance, mi)
	}
	slices.SortFunc(plan.MultiInstance, func(a, b MultiInstance) int {
		return cmp.Or(a.TotalHourly.Cmp(b.TotalHourly), cmp.Compare(a.Provider, b.Provider),
			cmp.Compare(a.Region, b.Region), cmp.Compare(a.InstanceType, b.InstanceType))
	})
	return plan
}

// option prices one fitting candidate at tensor-parallel degree k.
func (w Workload) option(m Model, n Need, c candidate, k int) Option {
	count := int(c.it.GPUCount)
	replicas := count / k
	d := w.Decode(m, c.gpu, float64(k))
	o := Option{
		Provider: c.it.Provider, Region: c.offer.Region, InstanceType: c.it.Name, GPUModel: c.it.GPUModel,
		GPUCount: c.it.GPUCount, GPUMemoryGiB: c.it.GPUMemoryGiB,
		TensorParallel: k, Replicas: replicas, RequiredGiB: n.OnGPUs(k),
		Hourly:          c.hourly,
		TokensPerSecond: d.TokensPerSecond * float64(replicas),
		Bound:           d.Bound,
		AsOf:            c.offer.OnDemand.AsOf,
	}
	o.CostPer1MTokens = CostPer1MTokens(o.Hourly, o.TokensPerSecond)
	return o
}

// CostPer1MTokens is an hourly price spread over the tokens produced in an
// hour: hourly / (tokens/s × 3600) × 1e6. Zero when tokensPerSecond is not
// positive.
func CostPer1MTokens(hourly decimal.Decimal, tokensPerSecond float64) decimal.Decimal {
	if tokensPerSecond <= 0 || math.IsInf(tokensPerSecond, 0) || math.IsNaN(tokensPerSecond) {
		return decimal.Zero
	}
	perHour := decimal.NewFromFloat(tokensPerSecond).Mul(decimal.NewFromInt(3600))
	return hourly.Mul(decimal.NewFromInt(1_000_000)).DivRound(perHour, 10)
}

// compareOptions orders by hourly price, then $/1M tokens, then name.
func compareOptions(a, b Option) int {
	return cmp.Or(a.Hourly.Cmp(b.Hourly), a.CostPer1MTokens.Cmp(b.CostPer1MTokens),
		cmp.Compare(a.Provider, b.Provider), cmp.Compare(a.Region, b.Region), cmp.Compare(a.InstanceType, b.InstanceType))
}

// multiInstance is how many instances of a candidate hold the model, each
// tensor parallel over all its GPUs. ok is false when the type cannot hold a
// part: its GPU count is not a power of two dividing the model's heads.
func multiInstance(n Need, c candidate) (MultiInstance, bool) {
	count, _ := wholeGPUs(c.it.GPUCount)
	if count&(count-1) != 0 || n.Heads > 0 && n.Heads%count != 0 {
		return MultiInstance{}, false
	}
	usable := float64(count) * c.it.GPUMemoryGiB * UsableFraction
	instances := int(math.Ceil(n.OnGPUs(count) / usable))
	if instances < 2 {
		// One instance would do; Plan asks only where none does.
		return MultiInstance{}, false
	}
	return MultiInstance{
		Provider: c.it.Provider, Region: c.offer.Region, InstanceType: c.it.Name, GPUModel: c.it.GPUModel,
		GPUCount: c.it.GPUCount, GPUMemoryGiB: c.it.GPUMemoryGiB, Instances: instances,
		Hourly: c.hourly, TotalHourly: c.hourly.Mul(decimal.NewFromInt(int64(instances))),
		AsOf: c.offer.OnDemand.AsOf,
	}, true
}

// compareLargest orders by GPU memory per instance (largest first), then by
// total hourly price, then name.
func compareLargest(a, b MultiInstance) int {
	return cmp.Or(cmp.Compare(b.GPUCount*b.GPUMemoryGiB, a.GPUCount*a.GPUMemoryGiB),
		a.TotalHourly.Cmp(b.TotalHourly), cmp.Compare(a.Region, b.Region), cmp.Compare(a.InstanceType, b.InstanceType))
}

func formatCount(v float64) string {
	return strings.TrimSuffix(fmt.Sprintf("%.2f", v), ".00")
}
