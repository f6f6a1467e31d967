package analyze

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/billing"
	billingCmd "github.com/gpufinops/gpufinops/pkg/cmd/billing"
	"github.com/gpufinops/gpufinops/pkg/cmdutil"
	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pkg/recommend"
	"github.com/gpufinops/gpufinops/pkg/report"
	"github.com/gpufinops/gpufinops/pricing"
)

// billed reads the bill, joins it to the fleet and gives the engine each
// matched instance's effective rate; the reconciliation is completed by
// reconcile once the plan is made.
type billed struct {
	source  string
	summary *billing.Summary
	joined  billing.Joined
	rates   map[string]recommend.BilledRate
}

func readBill(ctx context.Context, opts *AnalyzeOptions, cat pricing.Catalog, fl *fleet.Fleet) (*billed, error) {
	s, err := billingCmd.Read(ctx, opts.Billing, billing.Options{Start: opts.BillingStart, End: opts.BillingEnd, Keep: billing.Keys(fl.Instances)}, cat)
	if err != nil {
		return nil, err
	}
	if !strings.EqualFold(s.Currency, pricing.Currency) {
		return nil, &cmdutil.InputError{Err: fmt.Errorf("--billing %s: the bill is in %s; the engine prices in %s, so only a %s bill can price it", opts.Billing, s.Currency, pricing.Currency, pricing.Currency)}
	}
	b := &billed{source: opts.Billing, summary: s, joined: s.Join(fl.Instances), rates: map[string]recommend.BilledRate{}}
	window := windowText(s)
	for i := range fl.Instances {
		in := &fl.Instances[i]
		r := b.joined.ByInstance[in.ID]
		if r == nil {
			continue
		}
		rate, ok := r.EffectiveHourly()
		if !ok {
			continue
		}
		asOf := ""
		if !r.Last.IsZero() {
			asOf = r.Last.UTC().Format("2006-01-02")
		}
		b.rates[in.ID] = recommend.BilledRate{
			Price: pricing.Price{Provider: in.Provider, Region: in.Region, InstanceType: in.InstanceType,
				Option: pricing.Option(in.Lifecycle), Hourly: rate, Currency: pricing.Currency, Unit: pricing.UnitHour,
				Source: fmt.Sprintf("FOCUS bill %s: EffectiveCost %s ÷ %s h, %s", opts.Billing, r.EffectiveCost, r.Hours, window),
				AsOf:   asOf},
			CommittedShare: r.CommitmentShare(),
		}
	}
	return b, nil
}

func windowText(s *billing.Summary) string {
	switch {
	case s.Start.IsZero() && s.End.IsZero():
		return "whole export"
	case s.End.IsZero():
		return "from " + s.Start.Format("2006-01-02")
	case s.Start.IsZero():
		return "before " + s.End.Format("2006-01-02")
	}
	return s.Start.Format("2006-01-02") + " to " + s.End.Format("2006-01-02")
}

// reconcile is the report's billing section: the bill's GPU EffectiveCost
// against the report's instances at their bill rates over the billed hours.
func (b *billed) reconcile(plan *recommend.Plan) *report.Billing {
	s, j := b.summary, b.joined
	out := &report.Billing{Source: b.source, Currency: s.Currency, Unmatched: []report.BillingGap{}, UnusedCommitments: []report.BillingCommitment{}}
	if !s.Start.IsZero() {
		out.WindowStart = &s.Start
	}
	if !s.End.IsZero() {
		out.WindowEnd = &s.End
	}
	reportCost := decimal.Zero
	noHours, noHoursCost := 0, decimal.Zero
	for _, ic := range plan.Instances {
		switch {
		case !ic.Priced:
		case ic.PriceBasis == recommend.BasisBill:
			out.InstancesAtBillRate++
		default:
			out.InstancesAtListPrice++
		}
	}
	ids := make([]string, 0, len(j.ByInstance))
	for id := range j.ByInstance {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		r := j.ByInstance[id]
		rate, ok := b.rates[id]
		if !ok {
			noHours++
			noHoursCost = noHoursCost.Add(r.EffectiveCost)
			continue
		}
		reportCost = reportCost.Add(rate.Price.Hourly.Mul(r.Hours))
	}
	// Differences are taken before rounding: two sums rounded apart can
	// differ by a cent that no rate explains.
	rawDiff := s.EffectiveCost.Sub(reportCost)
	residual := rawDiff.Sub(j.UnmatchedSum).Sub(noHoursCost).Round(2)
	reportCost = reportCost.Round(2)
	bill := s.EffectiveCost.Round(2)
	unmatched := j.UnmatchedSum.Round(2)
	diff := rawDiff.Round(2)
	out.BillEffectiveCost, out.ReportWindowCost = report.NewNumber(bill), report.NewNumber(reportCost)
	out.UnmatchedEffectiveCost, out.Difference = report.NewNumber(unmatched), report.NewNumber(diff)
	out.Reconciled = residual.IsZero()
	var reasons []string
	if unmatched.IsPositive() {
		var scopes []string
		for i, g := range j.Unmatched {
			if i == 3 {
				scopes = append(scopes, fmt.Sprintf("and %d more", len(j.Unmatched)-3))
				break
			}
			scopes = append(scopes, fmt.Sprintf("%s %s %s %s", g.Provider, dash(g.Account), dash(g.Region), g.EffectiveCost.StringFixed(2)))
		}
		reasons = append(reasons, fmt.Sprintf("%s in GPU instances no scanned instance matched (accounts or regions not scanned: %s)", unmatched.StringFixed(2), strings.Join(scopes, "; ")))
	}
	if noHours > 0 {
		reasons = append(reasons, fmt.Sprintf("%s for %d matched instance(s) whose rows have no hours, priced at list", noHoursCost.StringFixed(2), noHours))
	}
	if !residual.IsZero() {
		reasons = append(reasons, fmt.Sprintf("%s from rounding the hourly rates to eight places", residual.StringFixed(2)))
	}
	line := fmt.Sprintf("GPU EffectiveCost %s %s (%s); this report's instances at their bill rates %s; difference %s",
		bill.StringFixed(2), s.Currency, windowText(s), reportCost.StringFixed(2), diff.StringFixed(2))
	if len(reasons) > 0 {
		line += ": " + strings.Join(reasons, ", ")
	}
	if out.InstancesAtListPrice > 0 {
		line += fmt.Sprintf(". %d instance(s) are not in the bill and are priced at list", out.InstancesAtListPrice)
	}
	if len(plan.Held) > 0 {
		out.CoverageDiffers = coverageDiffers(plan, j)
		if n := len(out.CoverageDiffers); n > 0 {
			line += fmt.Sprintf(". %d instance(s) are covered otherwise in the bill than by the commitments read (coverageDiffers): a commitment not read, applied elsewhere or ended", n)
		}
	}
	out.Line = line + "."
	for _, g := range j.Unmatched {
		out.Unmatched = append(out.Unmatched, report.BillingGap{Provider: string(g.Provider), Account: g.Account, Region: g.Region,
			Resources: g.Resources, EffectiveCost: report.NewNumber(g.EffectiveCost), Hours: report.NewNumber(g.Hours)})
	}
	for _, c := range s.Unused {
		out.UnusedCommitments = append(out.UnusedCommitments, report.BillingCommitment{ID: c.ID, Provider: string(c.Provider),
			Type: c.Type, InstanceType: c.InstanceType, GPU: c.GPU, UnusedEffectiveCost: report.NewNumber(c.UnusedEffectiveCost)})
	}
	return out
}

// coverageDiffers compares, for each instance the bill has, the share of
// its billed hours the bill shows covered with the share the commitments
// held cover.
func coverageDiffers(plan *recommend.Plan, j billing.Joined) []report.BillingCoverage {
	var out []report.BillingCoverage
	for _, ic := range plan.Instances {
		r := j.ByInstance[ic.ResourceID]
		if r == nil || !r.Hours.IsPositive() {
			continue
		}
		held, by := 0.0, []string(nil)
		if c := plan.HeldInstances[ic.ResourceID]; c != nil {
			held = c.Share
			for _, p := range c.Parts {
				by = append(by, p.CommitmentID)
			}
		}
		bill := r.CommitmentShare()
		if math.Abs(bill-held) <= report.CoverageTolerance {
			continue
		}
		out = append(out, report.BillingCoverage{ResourceID: ic.ResourceID,
			BillShare: report.NewNumber(decimal.NewFromFloat(bill).Round(4)), HeldShare: report.NewNumber(decimal.NewFromFloat(held).Round(4)),
			BillCommitments: slices.Clone(r.Commitments), CoveredBy: by})
	}
	slices.SortFunc(out, func(a, b report.BillingCoverage) int { return strings.Compare(a.ResourceID, b.ResourceID) })
	return out
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
