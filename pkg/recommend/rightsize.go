package recommend

import (
	"fmt"
	"sort"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pricing"
)

// rightsizeRule moves an under-used instance to the cheapest type in the same
// provider and region that still holds its measured peaks with headroom: a
// smaller GPU when GPU compute and memory are low, else a smaller host with the
// same GPUs when host CPU and memory are low.
func rightsizeRule(e *engine, s *state) *change {
	sum := s.summary
	if sum == nil || sum.GPU == nil || !s.typeKnown || s.lifecycle == fleet.Committed {
		return nil
	}
	pol := e.policy.Rightsize
	curGPU, ok := e.cat.GPU(s.typ.GPUModel)
	if !ok || curGPU.Vendor != "nvidia" || s.typ.Fractional() {
		return nil
	}
	head := 1 + pol.HeadroomPercent/100
	need := requirement{arch: s.typ.Arch}
	peak := pol.PeakGPUPercent
	if peak <= 0 {
		peak = DefaultPolicy().Rightsize.PeakGPUPercent
	}
	// A spiky GPU (its max at or above the peak threshold) keeps its class:
	// the p95 alone would size it below its peaks.
	gpuLow := sum.GPUMemory != nil && sum.GPU.P95 < pol.GPUPercent && sum.GPUMemory.P95 < pol.GPUMemoryPercent && sum.GPU.Max < peak
	hostLow := sum.CPU != nil && sum.Memory != nil && sum.CPU.P95 < pol.HostCPUPercent && sum.Memory.P95 < pol.HostMemoryPercent
	switch {
	case gpuLow:
		need.perGPUMemGiB = sum.GPUMemory.Max / 100 * s.typ.GPUMemoryGiB * head
		need.totalMemGiB = need.perGPUMemGiB * s.typ.GPUCount
		need.bandwidthGBs = sum.GPU.P95 / 100 * curGPU.MemoryBandwidthGBs * s.typ.GPUCount * head
	case hostLow:
		need.sameGPU = true
		need.gpuModel = s.typ.GPUModel
		need.gpuCount = s.typ.GPUCount
	default:
		return nil
	}
	if sum.CPU != nil {
		need.vcpus = sum.CPU.P95 / 100 * s.typ.VCPUs * head
	} else {
		need.vcpus = s.typ.VCPUs
	}
	if sum.Memory != nil {
		need.hostMemGiB = sum.Memory.P95 / 100 * s.typ.MemoryGiB * head
	} else {
		need.hostMemGiB = s.typ.MemoryGiB
	}

	option := purchaseOption(s.lifecycle)
	best, bestPrice, found := e.cheapestFit(s, need, option)
	if !found || best.Name == s.typ.Name {
		return nil
	}
	if cov := s.inst.Utilization.EffectiveCoverage(gpuCount(s)); cov < e.policy.Idle.MinCoverage {
		e.warn(s.inst.ID, WarnLowCoverage, "utilization covers %s %% of the window's GPU-hours: not rightsized (its peaks may be in the gaps)", pct(cov*100))
		return nil
	}
	before := s.variable()
	eq, basis := e.comparable(s, bestPrice)
	after := monthly(eq, s.billedAs(best.Name))
	if before.IsZero() || before.Sub(after).Mul(decimal.NewFromInt(100)).Div(before).LessThan(decimal.NewFromFloat(pol.MinSavingsPercent)) {
		return nil
	}

	c := &change{
		kind:       KindRightsize,
		typ:        &best,
		target:     best.Name,
		short:      "→ " + best.Name,
		price:      bestPrice,
		hours:      s.hours,
		confidence: e.confidenceFor(s),
		risk:       Low,
		evidence: Evidence{
			Metrics: utilMetrics(sum),
			Thresholds: map[string]float64{
				"rightsizeGpuPercent":       pol.GPUPercent,
				"rightsizeGpuMemoryPercent": pol.GPUMemoryPercent,
				"hostCpuPercent":            pol.HostCPUPercent,
				"hostMemoryPercent":         pol.HostMemoryPercent,
				"headroomPercent":           pol.HeadroomPercent,
				"minSavingsPercent":         pol.MinSavingsPercent,
			},
			Prices:  priceList(s.price, bestPrice),
			Formula: "projected = target's hourly price × the same monthly hours",
		},
	}
	if basis.note != "" {
		c.evidence.Notes = append(c.evidence.Notes, basis.note)
	}
	if basis.mixed {
		c.projected = &after
		for _, p := range []pricing.Price{basis.current, basis.target} {
			if !samePrice(p, s.price) && !samePrice(p, bestPrice) {
				c.evidence.Prices = append(c.evidence.Prices, p)
			}
		}
		c.evidence.Formula = "projected = (current hourly price − (current's catalog price − target's catalog price)) × the same monthly hours"
	}
	from := hardwareText(*s.typ)
	to := hardwareText(best)
	if gpuLow {
		c.action = fmt.Sprintf("Move to %s (%s): GPU p95 %s %% and GPU memory p95 %s %% leave most of %s unused", best.Name, to, pct(sum.GPU.P95), pct(sum.GPUMemory.P95), from)
		c.rationale = fmt.Sprintf("Needs %s GiB GPU memory per GPU (peak %s %% of %s GiB + %s %% headroom) and %s GB/s of memory bandwidth (p95 %s %% + headroom); %s is the cheapest %s type in %s that has both.",
			num(need.perGPUMemGiB), pct(sum.GPUMemory.Max), num(s.typ.GPUMemoryGiB), pct(pol.HeadroomPercent), num(need.bandwidthGBs), pct(sum.GPU.P95), best.Name, s.inst.Provider, s.inst.Region)
		c.evidence.Metrics["requiredGpuMemoryGiBPerGpu"] = round2(need.perGPUMemGiB)
		c.evidence.Metrics["requiredBandwidthGBs"] = round2(need.bandwidthGBs)
		if best.GPUModel != s.typ.GPUModel {
			c.risk = Medium
			c.riskNotes = append(c.riskNotes, fmt.Sprintf("different GPU (%s instead of %s): validate throughput, latency and CUDA/driver support on the target first", best.GPUModel, s.typ.GPUModel))
		}
		if best.GPUCount < s.typ.GPUCount {
			c.risk = Medium
			c.riskNotes = append(c.riskNotes, fmt.Sprintf("fewer GPUs (%s instead of %s): a job sharded across GPUs must be re-sharded", num(best.GPUCount), num(s.typ.GPUCount)))
		}
	} else {
		c.action = fmt.Sprintf("Move to %s (%s): same GPUs, smaller host (CPU p95 %s %%, memory p95 %s %%)", best.Name, to, pct(sum.CPU.P95), pct(sum.Memory.P95))
		c.rationale = fmt.Sprintf("The GPUs are used but the host is not: %s vCPUs and %s GiB RAM cover the host's p95 with %s %% headroom; %s is the cheapest type in %s with the same %s × %s.",
			num(need.vcpus), num(need.hostMemGiB), pct(pol.HeadroomPercent), best.Name, s.inst.Region, num(best.GPUCount), best.GPUModel)
	}
	c.evidence.Metrics["requiredVcpus"] = round2(need.vcpus)
	c.evidence.Metrics["requiredHostMemoryGiB"] = round2(need.hostMemGiB)
	if c.confidence != High {
		c.riskNotes = append(c.riskNotes, "the utilization window is short: peaks outside it are unknown")
	}
	return c
}

type requirement struct {
	arch         string
	sameGPU      bool
	gpuModel     string
	gpuCount     float64
	perGPUMemGiB float64
	totalMemGiB  float64
	bandwidthGBs float64
	vcpus        float64
	hostMemGiB   float64
}

// cheapestFit finds the cheapest offer in the state's provider and region, in
// the given purchase option, that meets need. Retired, retiring and
// promotional types are never a fit (pricing.InstanceType.MoveTarget). Ties
// go to the current type, then to fewer GPUs, then to the name.
func (e *engine) cheapestFit(s *state, need requirement, option pricing.Option) (pricing.InstanceType, pricing.Price, bool) {
	type cand struct {
		t      pricing.InstanceType
		p      pricing.Price
		listed decimal.Decimal // the offer's price, while p.Hourly is comparable's
	}
	var cands []cand
	for _, o := range e.offersIn(s.inst.Provider, s.inst.Region) {
		p := o.OnDemand
		if option == pricing.Spot {
			p = nil
			if q, ok := e.spotQuote(o.Type.Provider, o.Region, o.Type.Name); ok {
				p = &q.price
			}
		}
		if p == nil || !o.Type.MoveTarget() || !fits(e.cat, o.Type, need) {
			continue
		}
		cands = append(cands, cand{t: o.Type, p: *p})
	}
	if len(cands) == 0 {
		return pricing.InstanceType{}, pricing.Price{}, false
	}
	// Rank on one basis with the current price (see comparable).
	for i := range cands {
		eq, _ := e.comparable(s, cands[i].p)
		cands[i].p.Hourly, cands[i].listed = eq, cands[i].p.Hourly
	}
	sort.SliceStable(cands, func(i, j int) bool {
		a, b := cands[i], cands[j]
		if c := a.p.Hourly.Cmp(b.p.Hourly); c != 0 {
			return c < 0
		}
		if (a.t.Name == s.typ.Name) != (b.t.Name == s.typ.Name) {
			return a.t.Name == s.typ.Name
		}
		if a.t.GPUCount != b.t.GPUCount {
			return a.t.GPUCount < b.t.GPUCount
		}
		return a.t.Name < b.t.Name
	})
	best := cands[0]
	best.p.Hourly = best.listed
	return best.t, best.p, true
}

// priceBasis says on which basis a target's price was compared with the
// current one.
type priceBasis struct {
	// mixed: one of the two prices is live and the other the catalog's, so
	// both were compared at catalog prices; current and target are those.
	mixed           bool
	current, target pricing.Price
	note            string
}

// comparable is the target's hourly price on the current price's basis, so
// that a saving compares like with like: live with live where both prices
// are live (a scan's price API laid over the catalog), else catalog with
// catalog. When one only is live, both are compared at their catalog
// prices: the target's equivalent is the current price less the catalog's
// difference between the two types.
func (e *engine) comparable(s *state, target pricing.Price) (decimal.Decimal, priceBasis) {
	src := func(p pricing.Price, live bool) string {
		kind := "catalog"
		if live {
			kind = "live"
		}
		return fmt.Sprintf("%s %s price $%s/h from %s", p.InstanceType, kind, p.Hourly.String(), p.Source)
	}
	curLive, curBase := e.livePrice(s.price)
	tgtLive, tgtBase := e.livePrice(target)
	var b priceBasis
	if curLive || tgtLive {
		b.note = "prices: current " + src(s.price, curLive) + "; target " + src(target, tgtLive)
	}
	if curLive == tgtLive {
		return target.Hourly, b
	}
	if !curLive {
		curBase = &s.price
	}
	if !tgtLive {
		tgtBase = &target
	}
	if curBase == nil || tgtBase == nil {
		return target.Hourly, b // no catalog price to compare at: as listed
	}
	b.mixed, b.current, b.target = true, *curBase, *tgtBase
	b.note += fmt.Sprintf("; one of them only is live, so both are compared at catalog prices (%s $%s/h, %s $%s/h): the saving is their difference",
		curBase.InstanceType, curBase.Hourly.String(), tgtBase.InstanceType, tgtBase.Hourly.String())
	eq := s.price.Hourly.Sub(curBase.Hourly.Sub(tgtBase.Hourly))
	if eq.IsNegative() {
		eq = decimal.Zero
	}
	return eq, b
}

// samePrice reports whether a and b are one offer's price from one source.
func samePrice(a, b pricing.Price) bool {
	return a.InstanceType == b.InstanceType && a.Option == b.Option && a.Source == b.Source && a.Hourly.Equal(b.Hourly)
}

// liveKey and liveEntry memoize livePrice per offer and option.
type liveKey struct {
	regionType
	option pricing.Option
}

type liveEntry struct {
	listed *pricing.Price // the catalog's (overlay's) price
	base   *pricing.Price // the base catalog's, under the live prices
}

// livePrice reports whether p is a live price the catalog laid over its
// base (the offer's price differs in source from the base catalog's), and
// the base's price of the same offer, if any. A price that is not the
// offer's (a bill's, the fleet's, a spot quote's) is not live.
func (e *engine) livePrice(p pricing.Price) (bool, *pricing.Price) {
	l, ok := e.cat.(interface{ Base() pricing.Catalog })
	if !ok || (p.Option != pricing.OnDemand && p.Option != pricing.Spot) {
		return false, nil
	}
	k := liveKey{regionType{p.Provider, p.Region, p.InstanceType}, p.Option}
	le, ok := e.live[k]
	if !ok {
		pick := func(o pricing.Offer, found bool) *pricing.Price {
			switch {
			case !found:
				return nil
			case p.Option == pricing.Spot:
				return o.Spot
			}
			return o.OnDemand
		}
		le.listed = pick(e.cat.Offer(p.Provider, p.Region, p.InstanceType))
		le.base = pick(l.Base().Offer(p.Provider, p.Region, p.InstanceType))
		if e.live == nil {
			e.live = map[liveKey]liveEntry{}
		}
		e.live[k] = le
	}
	if le.listed == nil || le.listed.Source != p.Source || !le.listed.Hourly.Equal(p.Hourly) {
		return false, nil
	}
	if le.base == nil {
		return true, nil
	}
	return le.base.Source != p.Source, le.base
}

func fits(cat pricing.Catalog, t pricing.InstanceType, need requirement) bool {
	if t.Arch != need.arch || t.Fractional() || t.VCPUs < need.vcpus || t.MemoryGiB < need.hostMemGiB {
		return false
	}
	if need.sameGPU {
		return t.GPUModel == need.gpuModel && t.GPUCount == need.gpuCount
	}
	g, ok := cat.GPU(t.GPUModel)
	if !ok || g.Vendor != "nvidia" {
		return false
	}
	return t.GPUMemoryGiB >= need.perGPUMemGiB &&
		t.GPUMemoryGiB*t.GPUCount >= need.totalMemGiB &&
		g.MemoryBandwidthGBs*t.GPUCount >= need.bandwidthGBs
}

func purchaseOption(l fleet.Lifecycle) pricing.Option {
	if l == fleet.Spot {
		return pricing.Spot
	}
	return pricing.OnDemand
}

func hardwareText(t pricing.InstanceType) string {
	return fmt.Sprintf("%s × %s %s GiB, %s vCPU, %s GiB", num(t.GPUCount), t.GPUModel, num(t.GPUMemoryGiB), num(t.VCPUs), num(t.MemoryGiB))
}
