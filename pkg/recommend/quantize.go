package recommend

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pkg/llm"
	"github.com/gpufinops/gpufinops/pkg/money"
	"github.com/gpufinops/gpufinops/pricing"
)

// QuantizePolicy configures the quantization rule.
type QuantizePolicy struct {
	// TargetUtilPercent is the GPU load a quantized replica may be planned to.
	TargetUtilPercent float64 `json:"targetUtilPercent" mapstructure:"target_util_percent"`
	// MinReplicas is the fewest replicas kept for a model served by several (availability).
	MinReplicas int `json:"minReplicas" mapstructure:"min_replicas"`
	// Context and Batch size the KV cache of a replica (tokens per sequence,
	// sequences decoded at once) when the fleet does not say.
	Context int `json:"context" mapstructure:"context"`
	Batch   int `json:"batch" mapstructure:"batch"`
	// MinSavingsPercent: quantizing must save at least this share of the replicas' cost.
	MinSavingsPercent float64 `json:"minSavingsPercent" mapstructure:"min_savings_percent"`
}

// replicaGroup is the instances serving one model at one precision on one
// instance type in one place.
type replicaGroup struct {
	key      string
	model    llm.Model
	from     llm.Precision
	states   []*state
	typ      pricing.InstanceType
	demand   float64 // in replicas of the current type at full load, at the current precision
	capFrom  float64 // tokens/s of one current replica at the current precision
	minKeep  int
	provider fleet.Provider
	region   string
}

// quantizeOption is a way to serve a group at a lower precision.
type quantizeOption struct {
	prec     llm.Precision
	typ      pricing.InstanceType
	price    pricing.Price
	replicas int
	capTo    float64
	monthly  decimal.Decimal
}

// quantizeRule serves FP16/BF16 inference models at INT8 when that lets them
// run on a cheaper GPU or on fewer replicas. INT4 is shown as an alternative.
func quantizeRule(e *engine, active []*state) map[*state]*change {
	out := map[*state]*change{}
	for _, g := range e.replicaGroups(active) {
		current := decimal.Zero
		for _, s := range g.states {
			current = current.Add(s.cost())
		}
		int8Opt, ok := e.quantizeOption(g, llm.INT8)
		if !ok || current.IsZero() {
			continue
		}
		saving := current.Sub(int8Opt.monthly)
		if saving.Mul(decimal.NewFromInt(100)).Div(current).LessThan(decimal.NewFromFloat(e.policy.Quantize.MinSavingsPercent)) {
			continue
		}
		int4Opt, has4 := e.quantizeOption(g, llm.INT4)
		e.quantizeChanges(g, int8Opt, int4Opt, has4 && int4Opt.monthly.LessThan(int8Opt.monthly), current, out)
	}
	return out
}

// replicaGroups finds inference workloads with a known model at FP16/BF16.
func (e *engine) replicaGroups(active []*state) []*replicaGroup {
	groups := map[string]*replicaGroup{}
	var keys []string
	for _, s := range active {
		w := s.inst.Workload
		if w == nil || w.Type != fleet.Inference || s.summary == nil || s.summary.GPU == nil || !s.typeKnown || s.lifecycle != fleet.OnDemand {
			continue
		}
		prec, err := llm.ParsePrecision(w.Precision)
		if err != nil || (prec != llm.FP16 && prec != llm.BF16) {
			continue
		}
		m, ok := llm.Lookup(w.Model)
		if !ok {
			if w.ParamsBillions <= 0 {
				continue
			}
			m = llm.EstimateModel(w.ParamsBillions * 1e9)
		}
		key := strings.Join([]string{string(s.inst.Provider), s.inst.Account, s.inst.Region, s.typ.Name, m.Name, string(prec)}, "|")
		g, ok := groups[key]
		if !ok {
			g = &replicaGroup{key: key, model: m, from: prec, typ: *s.typ, provider: s.inst.Provider, region: s.inst.Region}
			groups[key] = g
			keys = append(keys, key)
		}
		g.states = append(g.states, s)
	}
	sort.Strings(keys)
	var out []*replicaGroup
	for _, k := range keys {
		g := groups[k]
		gpu, ok := e.cat.GPU(g.typ.GPUModel)
		if !ok {
			continue
		}
		g.capFrom = e.servingWorkload(g.from).Decode(g.model, gpu, g.typ.GPUCount).TokensPerSecond
		if g.capFrom <= 0 {
			continue
		}
		sort.Slice(g.states, func(i, j int) bool { return g.states[i].inst.ID < g.states[j].inst.ID })
		for _, s := range g.states {
			g.demand += s.summary.GPU.P95 / 100
		}
		g.minKeep = 1
		if len(g.states) > 1 {
			g.minKeep = min(e.policy.Quantize.MinReplicas, len(g.states))
		}
		out = append(out, g)
	}
	return out
}

func (e *engine) servingWorkload(p llm.Precision) llm.Workload {
	return llm.Workload{Precision: p, Context: e.policy.Quantize.Context, Batch: e.policy.Quantize.Batch}
}

// quantizeOption finds the cheapest way to serve the group's load at prec:
// the instance type (same provider, region and purchase option) and replica
// count, never more replicas than today.
func (e *engine) quantizeOption(g *replicaGroup, prec llm.Precision) (quantizeOption, bool) {
	need := e.servingWorkload(prec).Need(g.model)
	load := g.demand * g.capFrom // tokens/s at today's p95
	target := e.policy.Quantize.TargetUtilPercent / 100
	var best quantizeOption
	found := false
	for _, o := range e.offersIn(g.provider, g.region) {
		t := o.Type
		if o.OnDemand == nil || !t.MoveTarget() || t.Arch != g.typ.Arch || t.Fractional() || !llm.Fits(need, t) {
			continue
		}
		gpu, ok := e.cat.GPU(t.GPUModel)
		if !ok || gpu.Vendor != "nvidia" {
			continue
		}
		capTo := e.servingWorkload(prec).Decode(g.model, gpu, t.GPUCount).TokensPerSecond
		if capTo <= 0 {
			continue
		}
		n := max(int(math.Ceil(load/(capTo*target)-1e-9)), g.minKeep, 1)
		if n > len(g.states) {
			continue
		}
		total := decimal.Zero
		for _, s := range g.states[:n] {
			total = total.Add(monthly(o.OnDemand.Hourly, s.hours))
		}
		better := !found || total.LessThan(best.monthly) ||
			(total.Equal(best.monthly) && t.Name == g.typ.Name && best.typ.Name != g.typ.Name)
		if better {
			best = quantizeOption{prec: prec, typ: t, price: *o.OnDemand, replicas: n, capTo: capTo, monthly: total}
			found = true
		}
	}
	return best, found
}

func (e *engine) quantizeChanges(g *replicaGroup, o, alt quantizeOption, showAlt bool, current decimal.Decimal, out map[*state]*change) {
	kept := make([]string, o.replicas)
	for i, s := range g.states[:o.replicas] {
		kept[i] = s.inst.ID
	}
	fromNeed := e.servingWorkload(g.from).Need(g.model)
	toNeed := e.servingWorkload(o.prec).Need(g.model)
	load := g.demand / (o.capTo / g.capFrom) / float64(o.replicas) * 100
	evidence := func() Evidence {
		ev := Evidence{
			Metrics: map[string]float64{
				"replicasBefore":               float64(len(g.states)),
				"replicasAfter":                float64(o.replicas),
				"loadInCurrentReplicas":        round2(g.demand),
				"tokensPerSecondPerReplicaNow": round2(g.capFrom),
				"tokensPerSecondPerReplicaInt": round2(o.capTo),
				"requiredGiBNow":               round2(fromNeed.RequiredGiB),
				"requiredGiBInt":               round2(toNeed.RequiredGiB),
				"plannedLoadPercent":           round2(load),
			},
			Thresholds: map[string]float64{
				"targetUtilPercent": e.policy.Quantize.TargetUtilPercent,
				"minReplicas":       float64(g.minKeep),
				"context":           float64(e.policy.Quantize.Context),
				"batch":             float64(e.policy.Quantize.Batch),
				"minSavingsPercent": e.policy.Quantize.MinSavingsPercent,
			},
			Prices: priceList(g.states[0].price, o.price),
			Formula: "replicas = ceil(Σ GPU p95 of today's replicas × tokens/s per replica now ÷ (tokens/s per " +
				"quantized replica × target load)); tokens/s from memory bandwidth (docs/fit.md); projected = price × hours of the replicas kept",
			Notes: []string{fmt.Sprintf("%s: weights %s GiB at %s → %s GiB at %s", g.model.Name,
				num(fromNeed.WeightsGiB), g.from, num(toNeed.WeightsGiB), o.prec)},
		}
		if g.model.Estimated {
			ev.Notes = append(ev.Notes, "the model's shape is estimated from its parameter count: "+g.model.Source)
		}
		if showAlt {
			ev.Metrics["int4Replicas"] = float64(alt.replicas)
			ev.Notes = append(ev.Notes, fmt.Sprintf("alternative, riskier: INT4 (GPTQ or AWQ, not naive rounding) would serve it with %d × %s for $%s a month, $%s less than INT8; expect 1–3 %% accuracy loss, worse on maths and reasoning",
				alt.replicas, alt.typ.Name, money.Group(alt.monthly, 2), money.Group(o.monthly.Sub(alt.monthly), 2)))
		}
		return ev
	}
	riskNotes := []string{
		"INT8 typically costs < 1.5 % accuracy; validate on your own evaluation set before switching traffic",
		"use a calibrated method (e.g. SmoothQuant, GPTQ or AWQ INT8 weights) supported by your serving stack",
	}
	conf := e.confidenceFor(g.states[0])
	if g.model.Estimated && conf == High {
		conf = Medium
	}
	summary := fmt.Sprintf("serve %s at %s on %d × %s", g.model.Name, strings.ToUpper(string(o.prec)), o.replicas, o.typ.Name)
	for i, s := range g.states {
		c := &change{
			kind:       KindQuantize,
			confidence: conf,
			risk:       Medium,
			riskNotes:  riskNotes,
			evidence:   evidence(),
		}
		if i < o.replicas {
			if o.typ.Name == s.typ.Name {
				continue
			}
			t := o.typ
			c.typ, c.price, c.hours = &t, o.price, s.hours
			c.target = o.typ.Name + " " + strings.ToUpper(string(o.prec))
			c.short = strings.ToUpper(string(o.prec)) + " → " + o.typ.Name
			c.action = fmt.Sprintf("Quantize to %s and move to %s: %s (%s GiB instead of %s)", strings.ToUpper(string(o.prec)), o.typ.Name, summary, num(toNeed.RequiredGiB), num(fromNeed.RequiredGiB))
		} else {
			c.stop = true
			c.target = "removed"
			c.short = "remove (" + strings.ToUpper(string(o.prec)) + " replicas)"
			c.action = fmt.Sprintf("Remove this replica: at %s, %s (%s) carry today's load", strings.ToUpper(string(o.prec)), strings.Join(kept, ", "), o.typ.Name)
		}
		c.rationale = fmt.Sprintf("%d replicas of %s at %s carry a load of %s replicas (sum of GPU p95); at %s a replica decodes %s tokens/s instead of %s, so %d replica(s) at ≤ %s %% load suffice: %s.",
			len(g.states), g.model.Name, strings.ToUpper(string(g.from)), num(g.demand), strings.ToUpper(string(o.prec)), num(math.Round(o.capTo)), num(math.Round(g.capFrom)), o.replicas, pct(e.policy.Quantize.TargetUtilPercent), summary)
		out[s] = c
	}
}
