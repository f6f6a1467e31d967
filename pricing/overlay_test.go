package pricing_test

import (
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pricing"
	"github.com/gpufinops/gpufinops/pricing/catalog"
	"github.com/gpufinops/gpufinops/pricing/pricingtest"
)

var (
	g5  = pricing.InstanceType{Provider: fleet.AWS, Name: "g5.xlarge", GPUModel: "A10G", GPUCount: 1, GPUMemoryGiB: 24, VCPUs: 4, MemoryGiB: 16}
	p5  = pricing.InstanceType{Provider: fleet.AWS, Name: "p5.48xlarge", GPUModel: "H100", GPUCount: 8, GPUMemoryGiB: 80, VCPUs: 192, MemoryGiB: 2048}
	a2  = pricing.InstanceType{Provider: fleet.GCP, Name: "a2-highgpu-1g", GPUModel: "A100", GPUCount: 1, GPUMemoryGiB: 40}
	day = "2026-12-01"
)

func baseCatalog() *pricingtest.Catalog {
	c := &pricingtest.Catalog{}
	c.AddOffer(g5, "us-east-1", "1.006", "0.4")
	c.AddOffer(g5, "us-west-2", "1.006", "0.45")
	c.AddOffer(p5, "us-east-1", "98.32", "")
	c.AddOffer(a2, "us-central1", "3.67339", "1.1")
	c.AddAdvice(fleet.AWS, "us-east-1", "g5.xlarge", pricing.SpotAdvice{SavingsPercent: 59, Band: "<5%", Source: "advisor", AsOf: "2025-06-28"})
	return c
}

func live(region, typ string, opt pricing.Option, hourly string) pricing.Price {
	return pricing.Price{
		Provider: fleet.AWS, Region: region, InstanceType: typ, Option: opt,
		Hourly: decimal.RequireFromString(hourly), Currency: pricing.Currency, Unit: pricing.UnitHour,
		Source: "AWS live test", AsOf: day,
	}
}

func hourly(p *pricing.Price) string {
	if p == nil {
		return "none"
	}
	return p.Hourly.String() + " (" + p.Source + ")"
}

func TestOverlayReplacesOnlyWhatItHas(t *testing.T) {
	base := baseCatalog()
	cat := pricing.Overlay(base, []pricing.Price{live("us-east-1", "g5.xlarge", pricing.OnDemand, "0.99")})

	o, ok := cat.Offer(fleet.AWS, "us-east-1", "g5.xlarge")
	if !ok {
		t.Fatal("offer lost")
	}
	if got := hourly(o.OnDemand); got != "0.99 (AWS live test)" {
		t.Errorf("on-demand = %s; want the live price", got)
	}
	if got := hourly(o.Spot); got != "0.4 (test catalog)" {
		t.Errorf("spot = %s; want the base price (no live spot)", got)
	}
	if o.Commitments != nil {
		t.Errorf("commitments = %v; want none", o.Commitments)
	}
	// Other regions, types and clouds are untouched.
	for _, k := range []struct {
		p            fleet.Provider
		region, typ  string
		onDemand     string
		spot         string
		wantOffer    bool
		wantHardware pricing.InstanceType
	}{
		{fleet.AWS, "us-west-2", "g5.xlarge", "1.006 (test catalog)", "0.45 (test catalog)", true, g5},
		{fleet.AWS, "us-east-1", "p5.48xlarge", "98.32 (test catalog)", "none", true, p5},
		{fleet.GCP, "us-central1", "a2-highgpu-1g", "3.67339 (test catalog)", "1.1 (test catalog)", true, a2},
	} {
		o, ok := cat.Offer(k.p, k.region, k.typ)
		if !ok || hourly(o.OnDemand) != k.onDemand || hourly(o.Spot) != k.spot || o.Type.Name != k.wantHardware.Name {
			t.Errorf("Offer(%s %s %s) = %s / %s, %v; want %s / %s", k.p, k.region, k.typ, hourly(o.OnDemand), hourly(o.Spot), ok, k.onDemand, k.spot)
		}
	}
	if _, ok := cat.Offer(fleet.AWS, "eu-west-1", "g5.xlarge"); ok {
		t.Error("an offer appeared without any price")
	}
	// The base catalog is not changed.
	bo, _ := base.Offer(fleet.AWS, "us-east-1", "g5.xlarge")
	if got := hourly(bo.OnDemand); got != "1.006 (test catalog)" {
		t.Errorf("base on-demand became %s", got)
	}
	// Offers agrees with Offer.
	all := cat.Offers(pricing.Query{Provider: fleet.AWS, InstanceType: "g5.xlarge"})
	if len(all) != 2 || all[0].Region != "us-east-1" || hourly(all[0].OnDemand) != "0.99 (AWS live test)" || hourly(all[1].OnDemand) != "1.006 (test catalog)" {
		t.Errorf("Offers = %+v", all)
	}
	// Everything else is base's.
	if a, ok := cat.SpotAdvice(fleet.AWS, "us-east-1", "g5.xlarge"); !ok || a.SavingsPercent != 59 {
		t.Errorf("SpotAdvice = %+v, %v", a, ok)
	}
	if it, ok := cat.InstanceType(fleet.AWS, "p5.48xlarge"); !ok || it.GPUCount != 8 {
		t.Errorf("InstanceType = %+v, %v", it, ok)
	}
}

func TestOverlaySpotAndCommitments(t *testing.T) {
	spot := live("us-east-1", "g5.xlarge", pricing.Spot, "0.3712")
	spot.Zone = "us-east-1d"
	spot.History = &pricing.PriceHistory{Min: decimal.RequireFromString("0.35"), Avg: decimal.RequireFromString("0.38"), Max: decimal.RequireFromString("0.41"), Since: "2026-11-01", Until: day, Points: 12}
	cat := pricing.Overlay(baseCatalog(), []pricing.Price{
		spot,
		live("us-east-1", "g5.xlarge", pricing.SavingsPlan1y, "0.7"),
		live("us-east-1", "g5.xlarge", pricing.SavingsPlan3y, "0.5"),
		live("us-east-1", "p5.48xlarge", pricing.SavingsPlan3y, "55.1"),
	})
	o, _ := cat.Offer(fleet.AWS, "us-east-1", "g5.xlarge")
	if o.Spot == nil || o.Spot.Zone != "us-east-1d" || o.Spot.History == nil || o.Spot.History.Points != 12 || hourly(o.Spot) != "0.3712 (AWS live test)" {
		t.Errorf("spot = %+v", o.Spot)
	}
	if hourly(o.OnDemand) != "1.006 (test catalog)" {
		t.Errorf("on-demand = %s; want base", hourly(o.OnDemand))
	}
	if len(o.Commitments) != 2 || hourly(o.Commitments[pricing.Term1y]) != "0.7 (AWS live test)" || hourly(o.Commitments[pricing.Term3y]) != "0.5 (AWS live test)" {
		t.Errorf("commitments = %v", o.Commitments)
	}
	p, _ := cat.Offer(fleet.AWS, "us-east-1", "p5.48xlarge")
	if len(p.Commitments) != 1 || hourly(p.Commitments["3y"]) != "55.1 (AWS live test)" || hourly(p.OnDemand) != "98.32 (test catalog)" {
		t.Errorf("p5 = %+v", p)
	}
	// Callers cannot change the overlay through what it returns.
	o.Commitments["1y"].Hourly = decimal.Zero
	o.Spot.Hourly = decimal.Zero
	again, _ := cat.Offer(fleet.AWS, "us-east-1", "g5.xlarge")
	if hourly(again.Commitments["1y"]) != "0.7 (AWS live test)" || hourly(again.Spot) != "0.3712 (AWS live test)" {
		t.Error("a returned offer shares its prices with the overlay")
	}
}

func TestOverlayAddsOffersForKnownTypesOnly(t *testing.T) {
	cat := pricing.Overlay(baseCatalog(), []pricing.Price{
		live("eu-west-1", "g5.xlarge", pricing.OnDemand, "1.123"),
		live("eu-west-1", "x9.unknown", pricing.OnDemand, "5"),
	})
	o, ok := cat.Offer(fleet.AWS, "eu-west-1", "g5.xlarge")
	if !ok || o.Type.GPUModel != "A10G" || o.Region != "eu-west-1" || hourly(o.OnDemand) != "1.123 (AWS live test)" || o.Spot != nil {
		t.Errorf("new-region offer = %+v, %v", o, ok)
	}
	if _, ok := cat.Offer(fleet.AWS, "eu-west-1", "x9.unknown"); ok {
		t.Error("an offer without hardware facts appeared")
	}
	all := cat.Offers(pricing.Query{Provider: fleet.AWS})
	var got []string
	for _, o := range all {
		got = append(got, o.Region+"/"+o.Type.Name)
	}
	if want := "eu-west-1/g5.xlarge us-east-1/g5.xlarge us-east-1/p5.48xlarge us-west-2/g5.xlarge"; strings.Join(got, " ") != want {
		t.Errorf("Offers order = %s; want %s", strings.Join(got, " "), want)
	}
	if n := len(cat.Offers(pricing.Query{GPUModel: "H100"})); n != 1 {
		t.Errorf("Offers(H100) = %d offers; want 1", n)
	}
	if n := len(cat.Offers(pricing.Query{Region: "eu-west-1", MinGPUMemoryGiB: 48})); n != 0 {
		t.Errorf("Offers(eu-west-1, 48 GiB) = %d offers; want 0", n)
	}
}

func TestOverlayPicksNewestThenCheapest(t *testing.T) {
	old := live("us-east-1", "g5.xlarge", pricing.Spot, "0.2")
	old.AsOf = "2026-11-20"
	a := live("us-east-1", "g5.xlarge", pricing.Spot, "0.39")
	b := live("us-east-1", "g5.xlarge", pricing.Spot, "0.38")
	for _, order := range [][]pricing.Price{{old, a, b}, {b, a, old}, {a, old, b}} {
		o, _ := pricing.Overlay(baseCatalog(), order).Offer(fleet.AWS, "us-east-1", "g5.xlarge")
		if !o.Spot.Hourly.Equal(decimal.RequireFromString("0.38")) {
			t.Errorf("picked %s; want the newest, cheapest 0.38", o.Spot.Hourly)
		}
	}
}

func TestOverlayIgnoresUnusablePrices(t *testing.T) {
	cny := live("us-east-1", "g5.xlarge", pricing.OnDemand, "7")
	cny.Currency = "CNY"
	month := live("us-east-1", "g5.xlarge", pricing.OnDemand, "700")
	month.Unit = "month"
	zero := live("us-east-1", "g5.xlarge", pricing.Spot, "0")
	odd := live("us-east-1", "g5.xlarge", pricing.Option("reserved-5y"), "0.1")
	base := baseCatalog()
	cat := pricing.Overlay(base, []pricing.Price{cny, month, zero, odd})
	if cat != pricing.Catalog(base) {
		t.Error("with no usable live price, Overlay should return the base catalog")
	}
	if cat := pricing.Overlay(base, nil); cat != pricing.Catalog(base) {
		t.Error("Overlay(base, nil) is not base")
	}
}

func TestOverlaySources(t *testing.T) {
	cached := live("us-west-2", "g5.xlarge", pricing.OnDemand, "1.0")
	cached.Source += " (cached 2026-11-30)"
	cached.AsOf = "2026-11-30"
	cat := pricing.Overlay(baseCatalog(), []pricing.Price{
		live("us-east-1", "g5.xlarge", pricing.OnDemand, "0.99"),
		live("us-east-1", "g5.xlarge", pricing.Spot, "0.3"),
		live("us-east-1", "g5.xlarge", pricing.SavingsPlan1y, "0.7"),
		cached,
	})
	src := cat.Sources()
	if len(src) != 2 || src[0].Name != "test catalog" {
		t.Fatalf("Sources = %+v", src)
	}
	s := src[1]
	if s.Name != "AWS live prices" || s.Provider != "aws" || s.AsOf != day {
		t.Errorf("live source = %+v", s)
	}
	for _, want := range []string{"4 prices (on-demand 2, spot 1, savings-plan-1y 1) for 1 types in 2 regions", "1 from the on-disk cache", "dated 2026-11-30 to 2026-12-01"} {
		if !strings.Contains(s.Note, want) {
			t.Errorf("note %q lacks %q", s.Note, want)
		}
	}
}

func TestOverlayNilBase(t *testing.T) {
	cat := pricing.Overlay(nil, []pricing.Price{live("us-east-1", "g5.xlarge", pricing.OnDemand, "1")})
	if _, ok := cat.Offer(fleet.AWS, "us-east-1", "g5.xlarge"); ok {
		t.Error("an offer without hardware facts appeared")
	}
	if len(cat.Offers(pricing.Query{})) != 0 || len(cat.Sources()) != 1 {
		t.Error("nil base misbehaves")
	}
}

func TestOverlayOnEmbeddedCatalog(t *testing.T) {
	base, err := catalog.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	before, ok := base.Offer(fleet.AWS, "us-east-1", "g5.xlarge")
	if !ok || before.OnDemand == nil {
		t.Skip("the embedded catalog has no g5.xlarge in us-east-1")
	}
	cat := pricing.Overlay(base, []pricing.Price{live("us-east-1", "g5.xlarge", pricing.OnDemand, "1.2345")})
	o, _ := cat.Offer(fleet.AWS, "us-east-1", "g5.xlarge")
	if hourly(o.OnDemand) != "1.2345 (AWS live test)" {
		t.Errorf("on-demand = %s", hourly(o.OnDemand))
	}
	if (o.Spot == nil) != (before.Spot == nil) || (o.Spot != nil && !o.Spot.Hourly.Equal(before.Spot.Hourly)) {
		t.Errorf("spot changed: %s → %s", hourly(before.Spot), hourly(o.Spot))
	}
	if got, want := len(cat.Offers(pricing.Query{})), len(base.Offers(pricing.Query{})); got != want {
		t.Errorf("%d offers; base has %d", got, want)
	}
	if got, want := len(cat.Sources()), len(base.Sources())+1; got != want {
		t.Errorf("%d sources; want %d", got, want)
	}
}

// A live Savings Plans rate answers CommitmentRate for its plan kind, marked
// live, with the discount against the live on-demand price; other kinds,
// payments and types fall through to the base catalog's (offline) rates.
func TestOverlayCommitmentRate(t *testing.T) {
	base := baseCatalog()
	base.AddCommitment(fleet.AWS, "us-east-1", "g5.xlarge", pricing.ComputeSavingsPlan, "3y", 46)
	live := []pricing.Price{
		{Provider: fleet.AWS, Region: "us-east-1", InstanceType: "g5.xlarge", Option: pricing.OnDemand, Hourly: decimal.RequireFromString("1.006"), Currency: pricing.Currency, Unit: pricing.UnitHour, Source: "live", AsOf: day},
		{Provider: fleet.AWS, Region: "us-east-1", InstanceType: "g5.xlarge", Option: pricing.SavingsPlan1y, Hourly: decimal.RequireFromString("0.7545"), Currency: pricing.Currency, Unit: pricing.UnitHour,
			Source: "AWS Savings Plans DescribeSavingsPlansOfferingRates, Compute Savings Plan 1y No Upfront, live", AsOf: day},
	}
	o := pricing.Overlay(base, live)
	q := pricing.CommitmentQuery{Provider: fleet.AWS, Region: "us-east-1", InstanceType: "g5.xlarge", Kind: pricing.ComputeSavingsPlan, Term: "1y", Payment: pricing.PayNoUpfront}
	r, ok := pricing.LookupCommitment(o, q)
	if !ok || !r.Live || r.DiscountPercent != 25 || r.Origin != "live" || r.AsOf != day {
		t.Fatalf("live rate %+v (%v)", r, ok)
	}
	for _, tc := range []struct {
		name string
		q    pricing.CommitmentQuery
		ok   bool
	}{
		{"EC2 Instance kind: the live rate is a Compute SP one", pricing.CommitmentQuery{Provider: fleet.AWS, Region: "us-east-1", InstanceType: "g5.xlarge", Kind: pricing.EC2InstanceSavingsPlan, Term: "1y"}, false},
		{"all upfront is not what is read live", pricing.CommitmentQuery{Provider: fleet.AWS, Region: "us-east-1", InstanceType: "g5.xlarge", Kind: pricing.ComputeSavingsPlan, Term: "1y", Payment: pricing.PayAllUpfront}, false},
		{"3y falls through to base", pricing.CommitmentQuery{Provider: fleet.AWS, Region: "us-east-1", InstanceType: "g5.xlarge", Kind: pricing.ComputeSavingsPlan, Term: "3y"}, true},
	} {
		r, ok := pricing.LookupCommitment(o, tc.q)
		if ok != tc.ok || r.Live {
			t.Errorf("%s: %+v (%v)", tc.name, r, ok)
		}
	}
	if _, ok := pricing.LookupCommitment(pricing.Overlay(nil, live), q); !ok {
		t.Error("live rate lost over an empty base")
	}
}

// TestOverlayAzureReservationAndSavingsPlan: an Azure size has a
// reservation and a savings plan rate of the same term; each answers its
// own kind, and the offer's commitment price of the term is the
// reservation's whichever comes first.
func TestOverlayAzureReservationAndSavingsPlan(t *testing.T) {
	nc := pricing.InstanceType{Provider: fleet.Azure, Name: "Standard_NC24ads_A100_v4", GPUModel: "A100", GPUCount: 1, GPUMemoryGiB: 80}
	base := &pricingtest.Catalog{}
	base.AddOffer(nc, "eastus", "3.673", "")
	mk := func(kind pricing.CommitmentKind, opt pricing.Option, v string) pricing.Price {
		p := live("eastus", nc.Name, opt, v)
		p.Provider, p.Commitment, p.Source = fleet.Azure, kind, "Azure Retail Prices API ("+string(kind)+")"
		return p
	}
	res := mk(pricing.Reservation, pricing.SavingsPlan1y, "2.320776")
	sp1 := mk(pricing.AzureSavingsPlan, pricing.SavingsPlan1y, "2.6213")
	sp3 := mk(pricing.AzureSavingsPlan, pricing.SavingsPlan3y, "1.8542")
	for _, order := range [][]pricing.Price{{res, sp1, sp3}, {sp3, sp1, res}} {
		o := pricing.Overlay(base, order)
		for _, c := range []struct {
			kind pricing.CommitmentKind
			term string
			want string
			ok   bool
		}{
			{pricing.Reservation, "1y", "2.320776", true},
			{pricing.AzureSavingsPlan, "1y", "2.6213", true},
			{pricing.AzureSavingsPlan, "3y", "1.8542", true},
			{pricing.Reservation, "3y", "", false}, // a savings plan never answers a reservation query
		} {
			r, ok := pricing.LookupCommitment(o, pricing.CommitmentQuery{Provider: fleet.Azure, Region: "eastus", InstanceType: nc.Name, Kind: c.kind, Term: c.term})
			if ok != c.ok || ok && (r.Hourly.String() != c.want || !r.Live || r.Kind != c.kind || r.Payment != pricing.PayUpfrontOrMonthly) {
				t.Errorf("%s %s: %+v %v, want %s %v", c.kind, c.term, r, ok, c.want, c.ok)
			}
		}
		off, _ := o.Offer(fleet.Azure, "eastus", nc.Name)
		if p := off.Commitments["1y"]; p == nil || p.Commitment != pricing.Reservation {
			t.Errorf("offer's 1y commitment %+v, want the reservation", p)
		}
	}
}
