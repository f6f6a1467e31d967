package recommend

import (
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/internal/purchasetest"
	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pricing"
	"github.com/gpufinops/gpufinops/pricing/pricingtest"
)

const azRegion = "eastus"

// azureLiveCatalog has two sizes of one series at list prices, and lays
// over them live 1-year savings plan rates, and a reservation rate of the
// smaller size only, as the Retail Prices API gives them (each price naming
// its kind).
func azureLiveCatalog(reservation, savingsPlan bool) pricing.Catalog {
	c := &pricingtest.Catalog{}
	c.AddGPU(pricing.GPUSpec{Name: "A100", Vendor: "nvidia", MemoryGiB: 80, MemoryBandwidthGBs: 1935})
	for _, s := range []struct {
		name, od    string
		gpus, vcpus float64
	}{{"Standard_NC24ads_A100_v4", "5.52", 1, 24}, {"Standard_NC48ads_A100_v4", "11.04", 2, 48}} {
		c.AddOffer(pricing.InstanceType{Provider: fleet.Azure, Name: s.name, Family: "NCads_A100_v4", GPUModel: "A100", GPUCount: s.gpus, GPUMemoryGiB: 80, VCPUs: s.vcpus, MemoryGiB: 220 * s.gpus}, azRegion, s.od, "")
	}
	var live []pricing.Price
	add := func(size string, kind pricing.CommitmentKind, v string) {
		live = append(live, pricing.Price{Provider: fleet.Azure, Region: azRegion, InstanceType: size, Option: pricing.SavingsPlan1y, Commitment: kind,
			Hourly: decimal.RequireFromString(v), Currency: pricing.Currency, Unit: pricing.UnitHour, Source: "Azure Retail Prices API (" + string(kind) + ")", AsOf: "2026-12-06"})
	}
	if reservation {
		add("Standard_NC24ads_A100_v4", pricing.Reservation, "3.48") // 36.96 % off
	}
	if savingsPlan {
		add("Standard_NC24ads_A100_v4", pricing.AzureSavingsPlan, "4.14") // 25 % off
		add("Standard_NC48ads_A100_v4", pricing.AzureSavingsPlan, "8.28")
	}
	return pricing.Overlay(c, live)
}

func azureVM(id, size string, mods ...func(*fleet.Instance)) fleet.Instance {
	return inst(id, size, append([]func(*fleet.Instance){withUtil(agg(busy, memHigh, hostMid, hostMid)), func(in *fleet.Instance) {
		in.Provider, in.Region = fleet.Azure, azRegion
	}}, mods...)...)
}

func onSchedule(start, end string) func(*fleet.Instance) {
	return func(in *fleet.Instance) {
		in.Usage.Schedule = &fleet.Schedule{Timezone: "UTC", Windows: []fleet.Window{{Days: []string{"mon", "tue", "wed", "thu", "fri", "sat", "sun"}, Start: start, End: end}}}
	}
}

func commitmentRecs(p Plan) []Recommendation {
	var out []Recommendation
	for _, r := range p.Recommendations {
		if r.Kind == KindCommitment {
			out = append(out, r)
		}
	}
	return out
}

// TestAzureSavingsPlanOrReservation: the planner weighs an Azure savings
// plan against reservations for the same usage and buys the one that
// saves more: reservations for steady usage of one size (the deeper
// discount), the savings plan where usage moves between sizes (each size
// runs half the day, too little for a reservation of it, while the
// series' spend is steady); offline, with no savings-plan rate, it says so
// and assumes none.
func TestAzureSavingsPlanOrReservation(t *testing.T) {
	pol := DefaultPolicy().WithPurchases(purchasetest.Purchases())
	t.Run("steady usage of one size: reservations", func(t *testing.T) {
		f := &fleet.Fleet{APIVersion: fleet.APIVersion, Kind: fleet.Kind, Instances: []fleet.Instance{
			azureVM("a", "Standard_NC24ads_A100_v4"), azureVM("b", "Standard_NC24ads_A100_v4")}}
		p := Run(f, azureLiveCatalog(true, true), pol)
		checkSums(t, p)
		recs := commitmentRecs(p)
		// 2 × (5.52 − 3.48) × 730 against the plan's 2 × 5.52 × 25 % × 730.
		saved := decimal.Zero
		for _, r := range recs {
			saved = saved.Add(r.MonthlySavings)
			if pu := r.Evidence.Purchase; pu.Kind != string(pricing.Reservation) || pu.Quantity != 2 || !pu.Live {
				t.Errorf("%s buys %+v, want 2 live reservations", r.ID, pu)
			}
			if !strings.Contains(strings.Join(r.Evidence.Notes, " "), "a Reserved VM Instance saves $2,978.40 a month on this usage, an Azure savings plan for compute $2,014.80: the Reserved VM Instance is bought") {
				t.Errorf("notes %q", r.Evidence.Notes)
			}
		}
		if len(recs) != 2 || !saved.Equal(decimal.RequireFromString("2978.4")) {
			t.Errorf("%d commitment recommendations saving %s", len(recs), saved)
		}
		if g := p.Commitments.Groups[0]; g.Kind != string(pricing.Reservation) {
			t.Errorf("group kind %q", g.Kind)
		}
	})
	t.Run("a size with no reservation offer: the savings plan", func(t *testing.T) {
		f := &fleet.Fleet{APIVersion: fleet.APIVersion, Kind: fleet.Kind, Instances: []fleet.Instance{
			azureVM("big", "Standard_NC48ads_A100_v4"), azureVM("small", "Standard_NC24ads_A100_v4", onSchedule("08:00", "20:00"))}}
		p := Run(f, azureLiveCatalog(true, true), pol)
		checkSums(t, p)
		recs := commitmentRecs(p)
		saved := decimal.Zero
		for _, r := range recs {
			saved = saved.Add(r.MonthlySavings)
			pu := r.Evidence.Purchase
			if pu.Kind != string(pricing.AzureSavingsPlan) || pu.Quantity != 0 || !pu.Live || !strings.Contains(r.Action, "Azure savings plan for compute") || !strings.HasPrefix(r.ShortAction, "1y savings plan ") {
				t.Errorf("%s buys %+v (%s), want an hourly Azure savings plan", r.ID, pu, r.Action)
			}
		}
		g := p.Commitments.Groups[0]
		if g.Kind != string(pricing.AzureSavingsPlan) || !strings.Contains(g.KindNote, "the savings plan is bought") {
			t.Errorf("group kind %q, note %q", g.Kind, g.KindNote)
		}
		// The savings plan commits to the series' $11.04/h of steady spend
		// (the big VM) at 25 % off: 11.04 × 0.25 × 730 = 2014.80; a
		// reservation of the small size, half the day, would save nothing.
		if want := decimal.RequireFromString("2014.8"); len(recs) == 0 || !saved.Equal(want) {
			t.Errorf("%d recommendations save %s, want %s: %+v", len(recs), saved, want, g)
		}
	})
	t.Run("offline: no savings-plan rate, none assumed", func(t *testing.T) {
		f := &fleet.Fleet{APIVersion: fleet.APIVersion, Kind: fleet.Kind, Instances: []fleet.Instance{
			azureVM("a", "Standard_NC24ads_A100_v4"), azureVM("b", "Standard_NC24ads_A100_v4")}}
		p := Run(f, azureLiveCatalog(true, false), pol)
		recs := commitmentRecs(p)
		if len(recs) != 2 || recs[0].Evidence.Purchase.Kind != string(pricing.Reservation) {
			t.Fatalf("recommendations %+v", recs)
		}
		if !strings.Contains(strings.Join(p.Commitments.Assumptions, " "), "no Azure savings-plan rate offline") ||
			!strings.Contains(strings.Join(recs[0].Evidence.Notes, " "), "no Azure savings-plan rate offline") {
			t.Errorf("assumptions %q, notes %q", p.Commitments.Assumptions, recs[0].Evidence.Notes)
		}
	})
}
