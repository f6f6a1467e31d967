package recommend

import (
	"os"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/internal/purchasetest"
	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pkg/money"
	"github.com/gpufinops/gpufinops/pricing"
	"github.com/gpufinops/gpufinops/pricing/catalog"
)

// usd is an amount as the document writes it: "$21,900.00".
func usd(d decimal.Decimal) string { return money.Format(d, "") }

// TestCommitmentsWorkedExample runs the worked example of
// docs/commitments.md (testdata/commitments/worked-example.yaml) and checks
// every figure the document states, and that the document states them.
func TestCommitmentsWorkedExample(t *testing.T) {
	const path = "../../testdata/commitments/worked-example.yaml"
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := fleet.Parse(path, b)
	if err != nil {
		t.Fatal(err)
	}
	cat, err := catalog.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	if err := pricing.Complete(f, cat); err != nil {
		t.Fatal(err)
	}
	p := Run(f, cat, DefaultPolicy().WithPurchases(purchasetest.Purchases()))
	checkSums(t, p)
	checkHeld(t, p)
	doc, err := os.ReadFile("../../docs/commitments.md")
	if err != nil {
		t.Fatal(err)
	}
	stated := func(figure string) {
		t.Helper()
		if !strings.Contains(string(doc), figure) {
			t.Errorf("docs/commitments.md does not state %q", figure)
		}
	}
	for _, want := range []struct {
		id, cost, commitment string
		share                float64
	}{
		{"p5-idle", "21900", "21900", 1},
		{"g5-idle", "5463.86", "2707.08", 0.54},
		{"g5-busy", "212.92", "212.92", 1},
		{"a100-vm", "1606", "1606", 1},
		{"l4-big", "1825", "1825", 1},
		{"l4-small", "542.33", "0", 0},
	} {
		var ic *InstanceCost
		for i := range p.Instances {
			if p.Instances[i].ResourceID == want.id {
				ic = &p.Instances[i]
			}
		}
		if ic == nil || ic.MonthlyCost.String() != want.cost || ic.CommitmentMonthly.String() != want.commitment || ic.CoveredShare != want.share {
			t.Errorf("%s: %+v, want cost %s, commitments %s, covered %v", want.id, ic, want.cost, want.commitment, want.share)
			continue
		}
		stated("| `" + want.id + "` | " + usd(ic.MonthlyCost) + " | " + usd(ic.CommitmentMonthly) + " |")
	}
	paid := decimal.Zero
	for _, want := range []struct{ id, paid, used, unused string }{
		{"ri-p5", "21900", "21900", "0"},
		{"ri-g5", "2555", "2555", "0"},
		{"sp-compute", "365", "365", "0"},
		{"res-a100", "3212", "1606", "1606"},
		{"cud-l4", "1825", "1825", "0"},
	} {
		found := false
		for _, u := range p.Held {
			if u.ID != want.id {
				continue
			}
			found = true
			if u.PaidMonthly.String() != want.paid || u.UsedMonthly.String() != want.used || u.UnusedMonthly.String() != want.unused {
				t.Errorf("%s: paid %s used %s unused %s, want %s %s %s", u.ID, u.PaidMonthly, u.UsedMonthly, u.UnusedMonthly, want.paid, want.used, want.unused)
			}
			row := rowOf(string(doc), u.ID)
			if !strings.HasSuffix(row, "| "+usd(u.PaidMonthly)+" | "+usd(u.UsedMonthly)+" | "+usd(u.UnusedMonthly)+" |") {
				t.Errorf("docs/commitments.md row of %s is %q", u.ID, row)
			}
			paid = paid.Add(u.PaidMonthly)
		}
		if !found {
			t.Errorf("no usage of %s", want.id)
		}
	}
	var recs []string
	for _, r := range p.Recommendations {
		if r.Kind == KindTagging {
			continue
		}
		recs = append(recs, r.ID+" "+r.MonthlySavings.String())
		stated("| `" + r.ID + "` | " + usd(r.MonthlySavings) + " |")
	}
	if got, want := strings.Join(recs, ", "), "idle-stop:g5-idle 2756.78, commitment:l4-small 200.65"; got != want {
		t.Errorf("recommendations %s, want %s", got, want)
	}
	var codes []string
	for _, w := range p.Warnings {
		if w.Code == WarnUnusedCommitment || w.Code == WarnCoveredNoSaving {
			codes = append(codes, w.ResourceID+" "+w.Code)
		}
	}
	if got, want := strings.Join(codes, ", "), "res-a100 unused-commitment, p5-idle covered-no-saving"; got != want {
		t.Errorf("findings %s, want %s", got, want)
	}
	s := p.Summary
	if s.CurrentMonthly.String() != "33156.11" || s.MonthlySavings.String() != "2957.43" || s.OptimizedMonthly.String() != "30198.68" || s.UnusedCommitmentMonthly.String() != "1606" {
		t.Errorf("summary %+v", s)
	}
	hc := p.HeldCoverage
	if hc.Covered.String() != "49853.55" || hc.OnDemand.String() != "53152.66" {
		t.Errorf("coverage %+v", hc)
	}
	stated(usd(hc.Covered))
	stated(usd(hc.OnDemand))
	stated("coverage " + decimal.NewFromFloat(hc.Share*100).StringFixed(1) + " %")
	machines := s.CurrentMonthly.Sub(s.UnusedCommitmentMonthly)
	for _, d := range []decimal.Decimal{s.CurrentMonthly, s.MonthlySavings, s.OptimizedMonthly, s.UnusedCommitmentMonthly, machines, paid} {
		stated(usd(d))
	}
	// The idle p5 on demand, as the document compares.
	if o, ok := cat.Offer(fleet.AWS, "us-east-1", "p5.48xlarge"); !ok || o.OnDemand == nil {
		t.Error("no p5.48xlarge price")
	} else {
		stated("on demand it would be " + usd(o.OnDemand.Hourly.Mul(decimal.NewFromInt(730)).Round(2)))
	}
}

// rowOf is the table row of the document that starts with id in backticks.
func rowOf(doc, id string) string {
	for line := range strings.Lines(doc) {
		if strings.HasPrefix(line, "| `"+id+"` |") {
			return strings.TrimSpace(line)
		}
	}
	return ""
}
