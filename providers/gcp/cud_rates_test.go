package gcp

import (
	"context"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pricing"
	"github.com/gpufinops/gpufinops/pricing/catalog"
	"github.com/gpufinops/gpufinops/providers"
	"github.com/gpufinops/gpufinops/providers/gcp/sim"
)

// TestLiveCUDRatesAnswerCommitmentQueries: the Billing Catalog's
// "Commitment v1" SKUs (usage types Commit1Yr, Commit3Yr), read through the
// SDK from the simulator, make a machine type's resource-based CUD rate
// (vCPUs × core + GiB × RAM + GPUs × GPU rate), and the catalog the engine
// asks answers a resource-CUD query with that live rate rather than the
// embedded one. The SKUs are written here, in the Billing Catalog's
// wording, at made-up rates no embedded price has.
func TestLiveCUDRatesAnswerCommitmentQueries(t *testing.T) {
	f := testFleet(t)
	opts := simOptions(t, f)
	const region = "europe-west4"
	var skus []sim.SKU
	for _, s := range opts.SKUs {
		if !strings.Contains(s.Description, "G2") && !strings.Contains(s.Description, "L4") {
			skus = append(skus, s)
		}
	}
	add := func(id, desc, group, usage, unit, price string) {
		skus = append(skus, sim.SKU{ID: id, Description: desc, ResourceGroup: group, UsageType: usage, Regions: []string{region}, Unit: unit, Price: price})
	}
	add("T001-0001", "G2 Instance Core running in Netherlands", "CPU", "OnDemand", "h", "0.03")
	add("T001-0002", "G2 Instance Ram running in Netherlands", "RAM", "OnDemand", "GiBy.h", "0.004")
	add("T001-0003", "Nvidia L4 GPU running in Netherlands", "GPU", "OnDemand", "h", "0.6")
	add("T001-0004", "Commitment v1: G2 Cpu in Netherlands for 1 Year", "CPU", "Commit1Yr", "h", "0.02")
	add("T001-0005", "Commitment v1: G2 Ram in Netherlands for 1 Year", "RAM", "Commit1Yr", "GiBy.h", "0.0025")
	add("T001-0006", "Commitment v1: Nvidia L4 GPU in Netherlands for 1 Year", "GPU", "Commit1Yr", "h", "0.4")
	add("T001-0007", "Commitment v1: G2 Cpu in Netherlands for 3 Years", "CPU", "Commit3Yr", "h", "0.015")
	add("T001-0008", "Commitment v1: G2 Ram in Netherlands for 3 Years", "RAM", "Commit3Yr", "GiBy.h", "0.002")
	add("T001-0009", "Commitment v1: Nvidia L4 GPU in Netherlands for 3 Years", "GPU", "Commit3Yr", "h", "0.27")
	opts.SKUs = skus
	p := newProvider(t, startSim(t, sim.New(f, opts)), []string{region})
	got, err := p.ReadPrices(context.Background(), providers.Scope{Provider: fleet.GCP, Account: testProject, Region: region}, []string{"g2-standard-8"})
	if err != nil {
		t.Fatal(err)
	}
	base, err := catalog.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	cat := pricing.Overlay(base, got)
	// g2-standard-8: 8 vCPUs, 32 GiB, 1 L4.
	for _, tc := range []struct{ term, want string }{{pricing.Term1y, "0.64"}, {pricing.Term3y, "0.454"}} {
		q := pricing.CommitmentQuery{Provider: fleet.GCP, Region: region, InstanceType: "g2-standard-8", Kind: pricing.ResourceCUD, Term: tc.term}
		r, ok := pricing.LookupCommitment(cat, q)
		if !ok {
			t.Fatalf("%s: no CUD rate", tc.term)
		}
		if !r.Live || !r.Hourly.Equal(decimal.RequireFromString(tc.want)) || r.Payment != pricing.PayMonthly || !strings.Contains(r.Source, "Commitment v1") {
			t.Errorf("%s: %+v, want the live %s/h (8 × core + 32 × RAM + 1 × L4 commitment SKUs), billed monthly", tc.term, r, tc.want)
		}
		if !r.OnDemandHourly.Equal(decimal.RequireFromString("0.968")) {
			t.Errorf("%s: on-demand %s beside the rate, want the live 0.968", tc.term, r.OnDemandHourly)
		}
		if e, ok := pricing.LookupCommitment(base, q); ok && e.Hourly.Equal(r.Hourly) {
			t.Errorf("%s: the embedded rate equals the live one (%s): the test cannot tell them apart", tc.term, e.Hourly)
		}
	}
	for _, pr := range got {
		if _, commit := pricing.CommitmentTerm(pr.Option); commit != (pr.Commitment == pricing.ResourceCUD) {
			t.Errorf("%s %s: commitment kind %q", pr.InstanceType, pr.Option, pr.Commitment)
		}
	}
}
