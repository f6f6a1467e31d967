package recommend

import (
	"math/rand"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/internal/purchasetest"
	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pricing"
	"github.com/gpufinops/gpufinops/pricing/catalog"
	"github.com/gpufinops/gpufinops/pricing/pricingtest"
)

func embeddedCatalog(t *testing.T) pricing.Catalog {
	t.Helper()
	c, err := catalog.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func training(p fleet.Provider, region, typ string, mods ...func(*fleet.Instance)) fleet.Instance {
	in := inst("job", typ, withUtil(agg(busy, memHigh, hostMid, hostMid)), withWorkload(fleet.Training, yes()))
	in.Provider, in.Region = p, region
	for _, m := range mods {
		m(&in)
	}
	return in
}

func planWith(t *testing.T, cat pricing.Catalog, instances ...fleet.Instance) Plan {
	t.Helper()
	f := &fleet.Fleet{APIVersion: fleet.APIVersion, Kind: fleet.Kind, Instances: instances}
	p := Run(f, cat, DefaultPolicy().WithPurchases(purchasetest.Purchases()))
	checkSums(t, p)
	return p
}

func spotRec(p Plan) *Recommendation {
	for i := range p.Recommendations {
		if p.Recommendations[i].Kind == KindSpot {
			return &p.Recommendations[i]
		}
	}
	return nil
}

// The advisor promises 89 % off g5.24xlarge in ap-southeast-2, but the
// cheapest zone's market price is the on-demand price: the saving follows
// the market, so there is none to advise.
func TestSpotFollowsTheMarketWhereTheAdvisorIsRosier(t *testing.T) {
	cat := embeddedCatalog(t)
	adv, ok := cat.SpotAdvice(fleet.AWS, "ap-southeast-2", "g5.24xlarge")
	if !ok || adv.SavingsPercent != 89 {
		t.Fatalf("embedded advice for g5.24xlarge ap-southeast-2 = %+v, %v; the test expects the 89 %% of the 2025-06 feed", adv, ok)
	}
	p := planWith(t, cat, training(fleet.AWS, "ap-southeast-2", "g5.24xlarge"))
	if r := spotRec(p); r != nil && r.MonthlySavings.GreaterThan(decimal.NewFromInt(1)) {
		t.Fatalf("spot advice saves %s/month; the market price equals on-demand, so it should save ≈ nothing", r.MonthlySavings)
	}
	if v := p.Summary.SavingsByKind[KindSpot]; v.GreaterThan(decimal.NewFromInt(1)) {
		t.Errorf("spot saves %s/month; before the fix it promised $6,877", v)
	}
}

// Across regions and types of the embedded catalog, spot advice is never
// rosier than the market nor than the advisor; where they disagree by more
// than 20 points the evidence says so and confidence is not high.
func TestSpotIsTheHigherOfAdvisorAndMarket(t *testing.T) {
	cat := embeddedCatalog(t)
	cases := []struct {
		region, typ string
		// want is "advisor" or "market": which price is the higher one.
		want string
	}{
		{"us-east-1", "p5.48xlarge", "advisor"}, // advisor 52 %, market 81 %
		{"us-east-1", "g5.xlarge", "market"},    // market 0.4246 > advisor 59 % off 1.006
		{"us-west-2", "g6.xlarge", ""},
		{"eu-west-1", "g5.xlarge", ""},
		{"ap-southeast-2", "g5.24xlarge", "market"},
	}
	for _, tc := range cases {
		t.Run(tc.region+"/"+tc.typ, func(t *testing.T) {
			e := &engine{cat: cat, policy: DefaultPolicy().WithPurchases(purchasetest.Purchases())}
			q, ok := e.spotQuote(fleet.AWS, tc.region, tc.typ)
			if !ok {
				t.Fatal("no spot quote")
			}
			off, _ := cat.Offer(fleet.AWS, tc.region, tc.typ)
			adv, hasAdv := cat.SpotAdvice(fleet.AWS, tc.region, tc.typ)
			market := off.Spot.Hourly
			if q.price.Hourly.LessThan(market) {
				t.Errorf("planned %s below the market %s", q.price.Hourly, market)
			}
			if hasAdv {
				est := off.OnDemand.Hourly.Mul(decimal.NewFromInt(int64(100 - adv.SavingsPercent))).Div(decimal.NewFromInt(100)).Round(6)
				if q.price.Hourly.LessThan(est) {
					t.Errorf("planned %s below the advisor's estimate %s", q.price.Hourly, est)
				}
				switch tc.want {
				case "advisor":
					if !q.price.Hourly.Equal(est) || !strings.Contains(q.price.Source, "typical spot saving") {
						t.Errorf("planned %s (%s), want the advisor's %s", q.price.Hourly, q.price.Source, est)
					}
				case "market":
					if !q.price.Hourly.Equal(market) {
						t.Errorf("planned %s, want the market's %s", q.price.Hourly, market)
					}
				}
				gap := savingPercent(market, off.OnDemand.Hourly) - float64(adv.SavingsPercent)
				if disagree := gap > 20 || gap < -20; disagree != q.disagree {
					t.Errorf("gap %.1f points: disagree = %v", gap, q.disagree)
				}
			}
		})
	}
}

// Every spot offer of the embedded catalog, priced for a training job:
// the spot advice never saves more than either basis allows, and the
// confidence follows the evidence.
func TestSpotEveryEmbeddedOffer(t *testing.T) {
	cat := embeddedCatalog(t)
	e := &engine{cat: cat, policy: DefaultPolicy().WithPurchases(purchasetest.Purchases())}
	n, disagree, estimate := 0, 0, 0
	for _, off := range cat.Offers(pricing.Query{}) {
		if off.Spot == nil || off.OnDemand == nil || !off.Spot.Hourly.IsPositive() {
			continue
		}
		q, ok := e.spotQuote(off.Type.Provider, off.Region, off.Type.Name)
		if !ok {
			t.Fatalf("%s %s %s: no quote", off.Type.Provider, off.Region, off.Type.Name)
		}
		n++
		if q.price.Hourly.LessThan(off.Spot.Hourly) {
			t.Errorf("%s %s: planned %s below the market %s", off.Region, off.Type.Name, q.price.Hourly, off.Spot.Hourly)
		}
		if q.disagree {
			disagree++
			if c := q.confidence(High); c == High {
				t.Errorf("%s %s: advisor and market disagree but confidence stays high", off.Region, off.Type.Name)
			}
			if !hasNote(q.notes, "disagree by") {
				t.Errorf("%s %s: disagreement not in the notes: %q", off.Region, off.Type.Name, q.notes)
			}
		}
		if q.estimate && q.price.Hourly.Equal(q.market.Hourly) {
			estimate++
			if c := q.confidence(High); c != Low {
				t.Errorf("%s %s: a formula price gives confidence %s, want low", off.Region, off.Type.Name, c)
			}
		}
	}
	if n < 1000 || disagree == 0 || estimate == 0 {
		t.Errorf("quoted %d offers, %d disagreeing, %d estimates: the embedded catalog has more of each", n, disagree, estimate)
	}
}

func hasNote(notes []string, sub string) bool {
	for _, n := range notes {
		if strings.Contains(n, sub) {
			return true
		}
	}
	return false
}

// Azure's snapshot spot prices that are exactly a whole percentage of
// on-demand are a formula: advised at low confidence, marked in evidence.
func TestSpotFormulaPriceIsAnEstimate(t *testing.T) {
	cat := embeddedCatalog(t)
	for _, tc := range []struct{ region, typ string }{
		{"francecentral", "Standard_NC16as_T4_v3"}, // 0.40803 = 29 % of 1.407
		{"australiaeast", "Standard_NC16as_T4_v3"}, // 0.45385 = 29 % of 1.565
	} {
		t.Run(tc.typ+"/"+tc.region, func(t *testing.T) {
			p := planWith(t, cat, training(fleet.Azure, tc.region, tc.typ))
			r := spotRec(p)
			if r == nil {
				t.Fatal("no spot advice")
			}
			if r.Confidence != Low {
				t.Errorf("confidence %s, want low", r.Confidence)
			}
			if r.Evidence.Metrics["spotPriceIsEstimate"] != 1 || !hasNote(r.Evidence.Notes, "a formula, not market data") {
				t.Errorf("evidence does not mark the estimate: %v %q", r.Evidence.Metrics, r.Evidence.Notes)
			}
		})
	}
	// A market price that is no whole percentage stays market data.
	p := planWith(t, cat, training(fleet.Azure, "eastus", "Standard_NC16as_T4_v3")) // 0.467513 of 1.204
	if r := spotRec(p); r == nil || r.Evidence.Metrics["spotPriceIsEstimate"] == 1 {
		t.Errorf("eastus T4 spot: %+v, want market data", r)
	}
}

// A machine already on spot is priced on the same basis as advice to move
// to spot: its current hourly price is what the advice would plan with.
func TestSpotSameBasisForCurrentAndProjected(t *testing.T) {
	cat := embeddedCatalog(t)
	for _, tc := range []struct {
		p           fleet.Provider
		region, typ string
	}{
		{fleet.AWS, "us-east-1", "p5.48xlarge"},
		{fleet.AWS, "us-east-1", "g5.xlarge"},
		{fleet.AWS, "ap-southeast-2", "g5.24xlarge"},
		{fleet.Azure, "centralus", "Standard_NC16as_T4_v3"},
	} {
		onSpot := planWith(t, cat, training(tc.p, tc.region, tc.typ, func(in *fleet.Instance) { in.Lifecycle = fleet.Spot }))
		onDemand := planWith(t, cat, training(tc.p, tc.region, tc.typ))
		cur := onSpot.Instances[0].Hourly
		if cur == nil {
			t.Fatalf("%s: the spot machine is unpriced", tc.typ)
		}
		r := spotRec(onDemand)
		if r == nil {
			continue // no discount: nothing to compare against
		}
		if planned := r.Evidence.Prices[1]; !planned.Hourly.Equal(cur.Hourly) || planned.Source != cur.Source {
			t.Errorf("%s %s: a spot machine pays %s (%s), spot advice plans %s (%s)", tc.region, tc.typ, cur.Hourly, cur.Source, planned.Hourly, planned.Source)
		}
	}
}

// Live prices carry a median over zones and the window: it is the market
// price, and it wins over the cheapest zone and the advisor when higher.
func TestSpotLiveMedian(t *testing.T) {
	c := &pricingtest.Catalog{}
	c.AddGPU(pricing.GPUSpec{Name: "A10G", Vendor: "nvidia", MemoryGiB: 24, MemoryBandwidthGBs: 600})
	typ := pricing.InstanceType{Provider: fleet.AWS, Name: "g5.xlarge", GPUModel: "A10G", GPUCount: 1, GPUMemoryGiB: 22.35, VCPUs: 4, MemoryGiB: 16}
	c.AddOffer(typ, "us-east-1", "1.0", "0.30")
	c.List[0].Spot.History = &pricing.PriceHistory{Min: decimal.RequireFromString("0.3"), Avg: decimal.RequireFromString("0.32"), Max: decimal.RequireFromString("0.9"),
		Since: "2026-10-31", Until: "2026-11-30", Median: decimal.RequireFromString("0.55"), Zones: 6}
	c.AddAdvice(fleet.AWS, "us-east-1", "g5.xlarge", pricing.SpotAdvice{SavingsPercent: 60, Band: "<5%", MaxInterruptPercent: 5, Source: "AWS Spot Instance Advisor", AsOf: "2025-06-28"})
	e := &engine{cat: c, policy: DefaultPolicy().WithPurchases(purchasetest.Purchases())}
	q, _ := e.spotQuote(fleet.AWS, "us-east-1", "g5.xlarge")
	if !q.price.Hourly.Equal(decimal.RequireFromString("0.55")) {
		t.Errorf("planned %s, want the 6-zone median 0.55", q.price.Hourly)
	}
	if q.estimate || q.disagree {
		t.Errorf("estimate %v, disagree %v: live market data 45 %% off against the advisor's 60 %% is neither", q.estimate, q.disagree)
	}
	c.List[0].Spot.History.Median = decimal.RequireFromString("0.15")
	e = &engine{cat: c, policy: e.policy} // a quote is made once per engine
	q, _ = e.spotQuote(fleet.AWS, "us-east-1", "g5.xlarge")
	if !q.price.Hourly.Equal(decimal.RequireFromString("0.4")) || !q.disagree {
		t.Errorf("planned %s (disagree %v), want the advisor's 0.4 and a 25-point disagreement", q.price.Hourly, q.disagree)
	}
}

func TestFixedFraction(t *testing.T) {
	for _, tc := range []struct {
		spot, od string
		want     int
		ok       bool
	}{
		{"0.1496", "1.36", 11, true},
		{"0.198", "1.8", 11, true},
		{"0.7956", "6.12", 13, true},
		{"0.4056", "4.056", 10, true},
		{"0.143517", "1.204", 0, false},
		{"10.5888", "10.58882", 0, false}, // within a cent of on-demand: no discount, not a fraction
		{"1.8", "1.8", 0, false},
		{"2.0", "1.8", 0, false},
		{"0.000001", "1.8", 0, false},
		{"0.4246", "1.006", 0, false},
	} {
		got, ok := fixedFraction(decimal.RequireFromString(tc.spot), decimal.RequireFromString(tc.od))
		if got != tc.want || ok != tc.ok {
			t.Errorf("fixedFraction(%s, %s) = %d, %v; want %d, %v", tc.spot, tc.od, got, ok, tc.want, tc.ok)
		}
	}
	// Property: od × p % is always found as p, whatever the on-demand price.
	rng := rand.New(rand.NewSource(11))
	for i := 0; i < 2000; i++ {
		od := decimal.New(rng.Int63n(100_000_000)+1000, -6)
		p := rng.Intn(99) + 1
		spot := od.Mul(decimal.NewFromInt(int64(p))).Div(decimal.NewFromInt(100)).Round(6)
		if got, ok := fixedFraction(spot, od); !ok || got != p {
			t.Fatalf("fixedFraction(%s, %s) = %d, %v; want %d", spot, od, got, ok, p)
		}
	}
}

func FuzzSpotQuote(f *testing.F) {
	f.Add("1.36", "0.1496", 60, "0")
	f.Add("10.58882", "10.5888", 89, "0")
	f.Add("55.04", "10.2397", 52, "12.5")
	f.Add("1", "2", 0, "0.5")
	f.Fuzz(func(t *testing.T, od, spot string, saving int, median string) {
		odD, err1 := decimal.NewFromString(od)
		spD, err2 := decimal.NewFromString(spot)
		mdD, err3 := decimal.NewFromString(median)
		if err1 != nil || err2 != nil || err3 != nil || saving < 0 || saving > 100 ||
			odD.Abs().GreaterThan(decimal.NewFromInt(1e6)) || spD.Abs().GreaterThan(decimal.NewFromInt(1e6)) || mdD.Abs().GreaterThan(decimal.NewFromInt(1e6)) {
			t.Skip()
		}
		c := &pricingtest.Catalog{}
		typ := pricing.InstanceType{Provider: fleet.AWS, Name: "x", GPUModel: "A10G", GPUCount: 1}
		c.AddOffer(typ, "r", odD.String(), spD.String())
		if mdD.IsPositive() {
			c.List[0].Spot.History = &pricing.PriceHistory{Median: mdD, Zones: 2}
		}
		c.AddAdvice(fleet.AWS, "r", "x", pricing.SpotAdvice{SavingsPercent: saving})
		e := &engine{cat: c, policy: DefaultPolicy().WithPurchases(purchasetest.Purchases())}
		q, ok := e.spotQuote(fleet.AWS, "r", "x")
		if !ok {
			if spD.IsPositive() {
				t.Fatalf("no quote for a positive spot price %s", spD)
			}
			return
		}
		market := spD
		if mdD.IsPositive() {
			market = mdD
		}
		if q.price.Hourly.LessThan(market) {
			t.Fatalf("planned %s below the market %s", q.price.Hourly, market)
		}
		if odD.IsPositive() {
			est := odD.Mul(decimal.NewFromInt(int64(100 - saving))).Div(decimal.NewFromInt(100)).Round(6)
			if q.price.Hourly.LessThan(est) {
				t.Fatalf("planned %s below the advisor's %s", q.price.Hourly, est)
			}
		}
	})
}
