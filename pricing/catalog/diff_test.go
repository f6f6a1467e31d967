package catalog

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pricing"
	"github.com/gpufinops/gpufinops/pricing/pricingtest"
)

func typ(p fleet.Provider, name string) pricing.InstanceType {
	return pricing.InstanceType{Provider: p, Name: name, GPUModel: "L4", GPUCount: 1, VCPUs: 4, MemoryGiB: 16, Arch: "x86_64"}
}

func TestDiff(t *testing.T) {
	old := (&pricingtest.Catalog{}).
		AddOffer(typ(fleet.AWS, "g6.xlarge"), "us-east-1", "0.8048", "0.30").
		AddOffer(typ(fleet.AWS, "g6.xlarge"), "us-west-2", "0.8048", "0.30").
		AddOffer(typ(fleet.AWS, "g3.4xlarge"), "us-east-1", "1.14", "").
		AddOffer(typ(fleet.GCP, "g2-standard-4"), "us-central1", "0.70683", "0.2")
	new := (&pricingtest.Catalog{}).
		AddOffer(typ(fleet.AWS, "g6.xlarge"), "us-east-1", "0.885", "0.30"). // +9.96 %: not moved
		AddOffer(typ(fleet.AWS, "g6.xlarge"), "eu-west-1", "0.9", "").       // offer added
		AddOffer(typ(fleet.AWS, "p5.48xlarge"), "us-east-1", "55.04", "").   // type added
		AddOffer(typ(fleet.GCP, "g2-standard-4"), "us-central1", "0.8", "")  // +13.2 %, spot removed
	ch := Diff(old, new)
	got := fmt.Sprintf("%v|%v|%v|%v", ch.AddedTypes, ch.RemovedTypes, ch.AddedOffers, ch.RemovedOffers)
	want := "[{aws p5.48xlarge}]|[{aws g3.4xlarge}]|[{aws eu-west-1 g6.xlarge} {aws us-east-1 p5.48xlarge}]|[{aws us-east-1 g3.4xlarge} {aws us-west-2 g6.xlarge}]"
	if got != want {
		t.Errorf("Diff =\n%s\nwant\n%s", got, want)
	}
	if len(ch.Moved) != 2 {
		t.Fatalf("moved = %+v, want the GCP on-demand (+13.2 %%) and the GCP spot (removed)", ch.Moved)
	}
	if m := ch.Moved[0]; m.Option != pricing.OnDemand || m.Percent != 13.2 || m.Old.String() != "0.70683" || m.New.String() != "0.8" {
		t.Errorf("moved[0] = %+v", m)
	}
	if m := ch.Moved[1]; m.Option != pricing.Spot || m.New != nil || m.Old.String() != "0.2" {
		t.Errorf("moved[1] = %+v", m)
	}
	var md, txt bytes.Buffer
	if err := ch.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	if err := ch.WriteText(&txt); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"1 types added, 1 removed; 2 offers added, 2 removed; 2 prices moved more than 10 %",
		"| gcp | us-central1 | g2-standard-4 | on-demand | 0.70683 | 0.8 | +13.2 % |", "| aws | p5.48xlarge |", "price removed"} {
		if !strings.Contains(md.String(), s) {
			t.Errorf("markdown lacks %q:\n%s", s, md.String())
		}
	}
	for _, s := range []string{"+ type  aws p5.48xlarge", "- offer aws us-west-2 g6.xlarge", "~ price gcp us-central1 g2-standard-4 on-demand: 0.70683 -> 0.8 (+13.2 %)"} {
		if !strings.Contains(txt.String(), s) {
			t.Errorf("text lacks %q:\n%s", s, txt.String())
		}
	}
	if Diff(old, old).Empty() != true || ch.Empty() {
		t.Error("Empty: a catalog against itself must be empty, these changes not")
	}
}

// TestDiffProperties: for random catalogs a and b, Diff(a, a) is empty;
// what Diff(a, b) adds Diff(b, a) removes; and a price moved by a random
// factor is reported exactly when it moved more than MoveThreshold %.
func TestDiffProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 4))
	for i := range 200 {
		a, b := &pricingtest.Catalog{}, &pricingtest.Catalog{}
		moved := map[string]bool{}
		for j := range 1 + rng.IntN(12) {
			name := fmt.Sprintf("t%d.xlarge", j)
			region := []string{"us-east-1", "eu-west-1"}[rng.IntN(2)]
			od := decimal.NewFromInt(int64(1 + rng.IntN(5000))).Div(decimal.NewFromInt(100))
			inA, inB := rng.IntN(4) != 0, rng.IntN(4) != 0
			factor := decimal.NewFromFloat(0.5 + rng.Float64()).Round(3)
			if inA {
				a.AddOffer(typ(fleet.AWS, name), region, od.String(), "")
			}
			if inB {
				b.AddOffer(typ(fleet.AWS, name), region, od.Mul(factor).String(), "")
			}
			if inA && inB {
				pct := factor.Sub(decimal.NewFromInt(1)).Abs().Mul(decimal.NewFromInt(100))
				moved[name] = pct.GreaterThan(decimal.NewFromInt(MoveThreshold))
			}
		}
		if !Diff(a, a).Empty() {
			t.Fatalf("case %d: Diff(a, a) = %+v", i, Diff(a, a))
		}
		ab, ba := Diff(a, b), Diff(b, a)
		if fmt.Sprint(ab.AddedOffers) != fmt.Sprint(ba.RemovedOffers) || fmt.Sprint(ab.AddedTypes) != fmt.Sprint(ba.RemovedTypes) {
			t.Fatalf("case %d: Diff(a,b) adds %v, Diff(b,a) removes %v", i, ab.AddedOffers, ba.RemovedOffers)
		}
		got := map[string]bool{}
		for _, m := range ab.Moved {
			got[m.InstanceType] = true
		}
		for name, want := range moved {
			if got[name] != want {
				t.Fatalf("case %d: %s moved = %v, want %v (%+v)", i, name, got[name], want, ab.Moved)
			}
		}
	}
}

// TestDiffEmbedded compares the embedded catalog with a copy that drops a
// type, adds one and doubles a price: the report names exactly those.
func TestDiffEmbedded(t *testing.T) {
	c := embeddedForTest(t)
	if d := Diff(c, c); !d.Empty() {
		t.Fatalf("Diff(embedded, embedded) = %+v", d)
	}
	mod := &pricingtest.Catalog{}
	for _, o := range c.Offers(pricing.Query{}) {
		switch {
		case o.Type.Name == "g3s.xlarge":
			continue
		case o.Type.Provider == fleet.GCP && o.Region == "europe-west4" && o.Type.Name == "a2-highgpu-1g":
			p := *o.OnDemand
			p.Hourly = p.Hourly.Mul(decimal.NewFromInt(2))
			o.OnDemand = &p
		}
		mod.List = append(mod.List, o)
	}
	mod.AddOffer(typ(fleet.Azure, "Standard_NC999_future"), "westeurope", "1", "")
	d := Diff(c, mod)
	if len(d.RemovedTypes) != 1 || d.RemovedTypes[0].InstanceType != "g3s.xlarge" ||
		len(d.AddedTypes) != 1 || d.AddedTypes[0].InstanceType != "Standard_NC999_future" ||
		len(d.Moved) != 1 || d.Moved[0].Percent != 100 {
		t.Errorf("Diff = types +%v -%v, moved %+v", d.AddedTypes, d.RemovedTypes, d.Moved)
	}
}
