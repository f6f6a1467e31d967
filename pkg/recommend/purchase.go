package recommend

import (
	"fmt"
	"math"
	"slices"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pricing"
)

// spotRule moves interruptible workloads (training, fine-tuning, HPO, batch by
// default) from on-demand to spot.
func spotRule(e *engine, s *state) *change {
	w := s.inst.Workload
	if s.lifecycle != fleet.OnDemand || w == nil || !slices.Contains(e.policy.Spot.Workloads, w.Type) {
		return nil
	}
	// Spot capacity of a retired, retiring or promotional size is not a
	// move to advise (pricing.InstanceType.MoveTarget).
	if !s.typ.MoveTarget() {
		return nil
	}
	if offer, ok := e.offer(s.inst.Provider, s.inst.Region, s.typ.Name); !ok || offer.OnDemand == nil {
		return nil
	}
	odHourly := s.price.Hourly
	q, ok := e.spotQuote(s.inst.Provider, s.inst.Region, s.typ.Name)
	if !ok {
		e.warn(s.inst.ID, WarnNoSpotPrice, "%s workload could run on spot, but the catalog has no spot price for %s in %s", w.Type, s.typ.Name, s.inst.Region)
		return nil
	}
	spot, advice, hasAdvice := q.price, q.advice, q.hasAdvice
	// A saving under 1 % of on-demand is the market saying "no discount"
	// (e.g. a cheapest zone at the on-demand price), not advice.
	if !spot.Hourly.LessThan(odHourly.Mul(decimal.RequireFromString("0.99"))) {
		return nil
	}
	notes := append([]string(nil), q.notes...)
	var adv *pricing.SpotAdvice
	if hasAdvice {
		adv = &advice
	}
	cp := planCheckpoints(e.policy.Spot, w, adv)
	c := &change{
		kind:       KindSpot,
		target:     "spot",
		lifecycle:  fleet.Spot,
		price:      spot,
		hours:      s.hours * (1 + cp.overhead),
		confidence: High,
		risk:       Medium,
		evidence: Evidence{
			Metrics:    map[string]float64{},
			Thresholds: map[string]float64{"maxInterruptionBand": float64(e.policy.Spot.MaxBandIndex)},
			Prices:     spotPrices(s.price, q),
			Formula:    "projected = spot hourly price × monthly hours × (1 + checkpoint overhead); interval τ = √(2 × write time × mean time between interruptions) (Young/Daly)",
			Notes:      notes,
		},
	}
	c.evidence.Metrics["checkpointWriteMinutes"] = round2(cp.writeMinutes)
	c.evidence.Metrics["meanHoursBetweenInterruptions"] = round2(cp.mtbiHours)
	c.evidence.Metrics["checkpointIntervalMinutes"] = round2(cp.intervalMinutes)
	c.evidence.Metrics["checkpointOverheadPercent"] = round2(cp.overhead * 100)
	c.evidence.Thresholds["restartMinutes"] = e.policy.Spot.RestartMinutes
	c.evidence.Notes = append(c.evidence.Notes, fmt.Sprintf("checkpoint every %s min (write time %s min; %s, mean %s h between interruptions); expected overhead %s %% of run time, included in the projected cost",
		num(math.Round(cp.intervalMinutes)), num(cp.writeMinutes), cp.basis, num(math.Round(cp.mtbiHours)), pct(cp.overhead*100)))
	if cp.sizeGB > 0 {
		c.evidence.Metrics["checkpointSizeGB"] = round2(cp.sizeGB)
	}
	band := "unknown"
	if hasAdvice {
		if advice.BandIndex > e.policy.Spot.MaxBandIndex {
			return nil
		}
		band = spacePercent(advice.Band)
		c.evidence.Metrics["interruptionBand"] = float64(advice.BandIndex)
		c.evidence.Metrics["advisorSavingsPercent"] = float64(advice.SavingsPercent)
		if advice.BandIndex >= 3 {
			c.riskNotes = append(c.riskNotes, fmt.Sprintf("interruptions are frequent here (%s a month): checkpoint often, or spread over several instance types and zones", band))
		}
	} else {
		c.confidence = Medium
		c.riskNotes = append(c.riskNotes, "the cloud publishes no interruption rate for this type and region")
	}
	if q.marketSavingPercent >= 0 {
		c.evidence.Metrics["marketSavingsPercent"] = round2(q.marketSavingPercent)
	}
	if q.estimate {
		c.evidence.Metrics["spotPriceIsEstimate"] = 1
	}
	if q.disagree {
		c.evidence.Thresholds["maxAdvisorMarketGapPoints"] = spotDisagreePoints
	}
	c.confidence = q.confidence(c.confidence)
	switch {
	case w.Checkpoints == nil:
		c.riskNotes = append(c.riskNotes, "spot capacity can be reclaimed at short notice: the job must checkpoint and resume; the fleet does not say whether it does")
	case !*w.Checkpoints:
		c.risk = High
		c.riskNotes = append(c.riskNotes, "the workload does not checkpoint: an interruption loses all progress since it started; add checkpointing before moving to spot")
	default:
		c.riskNotes = append(c.riskNotes, "keep checkpointing on; an interruption costs the work since the last checkpoint")
	}
	c.short = "spot " + hourlyShort(spot.Hourly) + ", ckpt " + minutesShort(cp.intervalMinutes)
	c.action = fmt.Sprintf("Run the %s workload on spot at $%s/h instead of $%s/h (interruptions %s); checkpoint every %s min", w.Type, spot.Hourly.StringFixed(4), odHourly.StringFixed(4), band, num(math.Round(cp.intervalMinutes)))
	c.rationale = fmt.Sprintf("%s jobs can be interrupted and resumed, so they need not pay the on-demand price.", titleCase(string(w.Type)))
	return c
}

// spotPrices lists the prices behind a spot recommendation: the current
// one, the one planned with and, when it differs, the market price it was
// weighed against.
func spotPrices(current pricing.Price, q spotQuote) []pricing.Price {
	ps := priceList(current, q.price)
	if q.market.Source != q.price.Source || !q.market.Hourly.Equal(q.price.Hourly) {
		ps = append(ps, q.market)
	}
	return ps
}

// commitmentName is what the policy calls the provider's commitment.
func (e *engine) commitmentName(p fleet.Provider) string {
	if n := e.policy.Commitment.Names[string(p)]; n != "" {
		return n
	}
	return "commitment"
}
