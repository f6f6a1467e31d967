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
	offer, ok := e.cat.Offer(s.inst.Provider, s.inst.Region, s.typ.Name)
	if !ok || offer.OnDemand == nil {
		return nil
	}
	odHourly := s.price.Hourly
	var spot pricing.Price
	notes := []string{}
	advice, hasAdvice := e.cat.SpotAdvice(s.inst.Provider, s.inst.Region, s.typ.Name)
	switch {
	case hasAdvice && offer.Spot != nil:
		// The advisor's typical monthly saving is steadier than one zone's price.
		spot = *offer.OnDemand
		spot.Option = pricing.Spot
		spot.Hourly = offer.OnDemand.Hourly.Mul(decimal.NewFromInt(int64(100 - advice.SavingsPercent))).Div(decimal.NewFromInt(100)).Round(6)
		spot.Source = fmt.Sprintf("on-demand price less the %s typical spot saving of %d%% (as of %s)", advice.Source, advice.SavingsPercent, advice.AsOf)
		spot.AsOf = advice.AsOf
		notes = append(notes, fmt.Sprintf("the cheapest zone's spot price at catalog time was $%s/h (%s); the advisor's typical saving is used because it holds over a month", offer.Spot.Hourly.String(), offer.Spot.Zone))
	case offer.Spot != nil:
		spot = *offer.Spot
		notes = append(notes, "spot price of the cheapest zone at catalog time: an optimistic bound, spot prices move")
	default:
		e.warn(s.inst.ID, WarnNoSpotPrice, "%s workload could run on spot, but the catalog has no spot price for %s in %s", w.Type, s.typ.Name, s.inst.Region)
		return nil
	}
	if !spot.Hourly.LessThan(odHourly) {
		return nil
	}
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
			Prices:     priceList(s.price, spot),
			Formula:    "projected = spot hourly price × monthly hours × (1 + checkpoint overhead); interval τ = √(2 × write time × mean time between interruptions) (Young/Daly)",
			Notes:      notes,
		},
	}
	c.evidence.Metrics["checkpointWriteMinutes"] = round2(cp.writeMinutes)
	c.evidence.Metrics["meanHoursBetweenInterruptions"] = round2(cp.mtbiHours)
	c.evidence.Metrics["checkpointIntervalMinutes"] = round2(cp.intervalMinutes)
	c.evidence.Metrics["checkpointOverheadPercent"] = round2(cp.overhead * 100)
	c.evidence.Thresholds["restartMinutes"] = e.policy.Spot.RestartMinutes
	c.evidence.Notes = append(c.evidence.Notes, fmt.Sprintf("checkpoint every %s min (write time %s min; %s, mean %s h between interruptions); expected overhead %s%% of run time, included in the projected cost",
		num(math.Round(cp.intervalMinutes)), num(cp.writeMinutes), cp.basis, num(math.Round(cp.mtbiHours)), pct(cp.overhead*100)))
	if cp.sizeGB > 0 {
		c.evidence.Metrics["checkpointSizeGB"] = round2(cp.sizeGB)
	}
	band := "unknown"
	if hasAdvice {
		if advice.BandIndex > e.policy.Spot.MaxBandIndex {
			return nil
		}
		band = advice.Band
		c.evidence.Metrics["interruptionBand"] = float64(advice.BandIndex)
		c.evidence.Metrics["advisorSavingsPercent"] = float64(advice.SavingsPercent)
		if advice.BandIndex >= 3 {
			c.riskNotes = append(c.riskNotes, fmt.Sprintf("interruptions are frequent here (%s a month): checkpoint often, or spread over several instance types and zones", advice.Band))
		}
	} else {
		c.confidence = Medium
		c.riskNotes = append(c.riskNotes, "the cloud publishes no interruption rate for this type and region")
	}
	switch {
	case w.Checkpoints == nil:
		c.riskNotes = append(c.riskNotes, "spot capacity can be reclaimed at short notice: the job must checkpoint and resume; the fleet does not say whether it does")
	case !*w.Checkpoints:
		c.risk = High
		c.riskNotes = append(c.riskNotes, "the workload does not checkpoint: an interruption loses all progress since it started; add checkpointing before moving to spot")
	default:
		c.riskNotes = append(c.riskNotes, "keep checkpointing on; an interruption costs the work since the last checkpoint")
	}
	c.action = fmt.Sprintf("Run the %s workload on spot at $%s/h instead of $%s/h (interruptions %s); checkpoint every %s min", w.Type, spot.Hourly.StringFixed(4), odHourly.StringFixed(4), band, num(math.Round(cp.intervalMinutes)))
	c.rationale = fmt.Sprintf("%s jobs can be interrupted and resumed, so they need not pay the on-demand price.", titleCase(string(w.Type)))
	return c
}

// commitmentName is what the policy calls the provider's commitment.
func (e *engine) commitmentName(p fleet.Provider) string {
	if n := e.policy.Commitment.Names[string(p)]; n != "" {
		return n
	}
	return "commitment"
}
