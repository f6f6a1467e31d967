package report

import (
	"encoding/csv"
	"encoding/json"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/gpufinops/gpufinops/pkg/fleet"
)

// FormatFOCUS is `analyze -o focus`: the per-instance costs and the
// recommendations as FOCUS-shaped CSV rows, to load beside the bill.
const FormatFOCUS = "focus"

// FOCUSHeader is the columns of -o focus: FOCUS 1.2 names for what a
// report knows, then its own x_ columns.
var FOCUSHeader = []string{
	"BillingAccountId", "BillingCurrency", "BillingPeriodStart", "BillingPeriodEnd", "ChargePeriodStart", "ChargePeriodEnd",
	"ChargeCategory", "ChargeClass", "ChargeDescription", "ChargeFrequency", "BilledCost", "EffectiveCost",
	"ListCost", "ConsumedQuantity", "ConsumedUnit", "PricingCategory", "PricingQuantity", "PricingUnit", "ProviderName", "PublisherName",
	"RegionId", "ResourceId", "ResourceType", "ServiceCategory", "SkuPriceDetails", "SubAccountId",
	"x_GpuModel", "x_GpuCount", "x_GpuHours", "x_GpuUtilization", "x_RecommendedAction", "x_MonthlySavings",
	"x_OptimizedMonthlyCost", "x_PriceBasis", "x_RecommendationIds", "x_Priced", "x_UnitPrice", "x_PriceSource",
}

// focusCategory is the PricingCategory of a lifecycle.
func focusCategory(lifecycle string) string {
	switch lifecycle {
	case "spot":
		return "Dynamic"
	case "committed":
		return "Committed"
	}
	return "Standard"
}

// WriteFOCUS writes one row per instance for the report's month: its
// monthly cost as BilledCost and
// EffectiveCost, its monthly hours as ConsumedQuantity, and what the
// recommendations for it do.
// ListCost is the monthly cost of a list-priced instance and null for one
// priced from a bill (its list price is not known then). An unpriced
// instance has null costs and savings (x_Priced false), and one whose GPUs
// are unknown null x_GpuCount and x_GpuHours: unknown is never written as 0.
//
// ProviderName and PublisherName are providerName(the instance's
// provider): the name the cloud's own FOCUS export gives it, which its
// adapter registers (providers.FOCUSName); a nil providerName writes the
// provider as it is.
//
// The month is the one every monthly figure of the report uses,
// fleet.HoursPerMonth (730) hours, from the first of the calendar month the
// report was generated in: the billing and charge periods span exactly
// those hours (to the 31st at 10:00 UTC, or 3 March at 10:00 after a
// February), so that BilledCost is the unit price times the period's hours
// for an instance that runs all of it.
func WriteFOCUS(w io.Writer, r *Report, providerName func(provider string) string) error {
	if providerName == nil {
		providerName = func(p string) string { return p }
	}
	cw := csv.NewWriter(w)
	if err := cw.Write(FOCUSHeader); err != nil {
		return err
	}
	type recs struct {
		actions, ids []string
	}
	by := map[string]*recs{}
	for _, rec := range r.Recommendations {
		e := by[rec.ResourceID]
		if e == nil {
			e = &recs{}
			by[rec.ResourceID] = e
		}
		a := rec.ShortAction
		if a == "" {
			a = rec.Action
		}
		e.actions = append(e.actions, rec.Kind+": "+a)
		e.ids = append(e.ids, rec.ID)
	}
	g := r.GeneratedAt.UTC()
	start := time.Date(g.Year(), g.Month(), 1, 0, 0, 0, 0, time.UTC)
	end := start.Add(time.Duration(fleet.HoursPerMonth * float64(time.Hour)))
	const stamp = "2006-01-02T15:04:05Z"
	num := func(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }
	for _, in := range r.Instances {
		// An instance whose GPUs are unknown (a type neither the cloud nor
		// the catalog describes) has no GPU count or GPU-hours, never 0.
		sku, _ := json.Marshal(struct {
			InstanceType string  `json:"InstanceType"`
			GpuCount     float64 `json:"GpuCount,omitempty"`
		}{in.InstanceType, in.GPUCount})
		row := []string{
			in.Account, r.Currency, start.Format(stamp), end.Format(stamp), start.Format(stamp), end.Format(stamp),
			"Usage", "", "GPU instance " + in.InstanceType + " (" + in.State + ")", "Usage-Based", "0", "0", "",
			num(in.MonthlyHours), "Hours", focusCategory(in.Lifecycle), num(in.MonthlyHours), "Hours",
			providerName(in.Provider), providerName(in.Provider), in.Region, in.ResourceID, "Virtual Machine", "Compute",
			string(sku), in.Account, in.GPUModel, num(in.GPUCount), num(in.GPUCount * in.MonthlyHours), "",
			"", "0", "0", in.PriceBasis, "", strconv.FormatBool(in.Priced), "", "",
		}
		if !(in.GPUCount > 0) {
			row[27], row[28] = "", ""
		}
		if !in.Priced {
			// Unpriced: its cost is unknown, never 0.
			row[10], row[11], row[31], row[32] = "", "", "", ""
		}
		if in.GPUUtilP95 != nil {
			row[29] = num(*in.GPUUtilP95)
		}
		if in.CurrentMonthlyCost != nil {
			row[10], row[11] = in.CurrentMonthlyCost.String(), in.CurrentMonthlyCost.String()
			if in.PriceBasis != "bill" {
				row[12] = in.CurrentMonthlyCost.String()
			}
		}
		if in.MonthlySavings != nil {
			row[31] = in.MonthlySavings.String()
		}
		if in.OptimizedMonthlyCost != nil {
			row[32] = in.OptimizedMonthlyCost.String()
		}
		if e := by[in.ResourceID]; e != nil {
			row[30], row[34] = strings.Join(e.actions, "; "), strings.Join(e.ids, " ")
		}
		if p := in.HourlyPrice; p != nil {
			row[36], row[37] = p.Hourly.String(), p.Source
		}
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}
