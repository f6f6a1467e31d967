package commitplan

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/internal/purchasetest"
	"github.com/gpufinops/gpufinops/pkg/cmd/factory"
	"github.com/gpufinops/gpufinops/pkg/cmdutil"
	"github.com/gpufinops/gpufinops/pkg/cmdutil/cmdtest"
	cplan "github.com/gpufinops/gpufinops/pkg/commitplan"
	"github.com/gpufinops/gpufinops/pkg/config"
	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pkg/iostreams"
	"github.com/gpufinops/gpufinops/pkg/recommend"
	"github.com/gpufinops/gpufinops/pkg/testutil"
	"github.com/gpufinops/gpufinops/pricing"
	"github.com/gpufinops/gpufinops/pricing/catalog"
	"github.com/gpufinops/gpufinops/providers/file"
)

func TestNewCmdCommitPlan(t *testing.T) {
	for _, tc := range []struct {
		args    string
		want    CommitPlanOptions
		wantErr string
	}{
		{args: "--demo", want: CommitPlanOptions{Input: cmdutil.FleetFlags{Demo: true}, Term: "both", Output: "table"}},
		{args: "--fleet f.yaml --term 1y -o json", want: CommitPlanOptions{Input: cmdutil.FleetFlags{Path: "f.yaml"}, Term: "1y", Output: "json"}},
		{args: "-f - --term 3y", want: CommitPlanOptions{Input: cmdutil.FleetFlags{Path: "-"}, Term: "3y", Output: "table"}},
		{args: "", wantErr: "give a fleet: --fleet FILE, --demo or --provider aws"},
		{args: "--demo --term 2y", wantErr: `--term: "2y" is not 1y, 3y or both`},
		{args: "--demo -o csv", wantErr: `"csv" is not one of table, json`},
		{args: "--demo --fleet x.yaml", wantErr: "none of the others can be"},
		{args: "--demo extra", wantErr: `unknown command "extra"`},
	} {
		t.Run(tc.args, func(t *testing.T) {
			got, err := cmdtest.Parse(t, NewCmdCommitPlan, strings.Fields(tc.args))
			if cmdtest.CheckErr(t, err, tc.wantErr) {
				return
			}
			if (got.Input.Path != tc.want.Input.Path || got.Input.Demo != tc.want.Input.Demo) || got.Term != tc.want.Term || got.Output != tc.want.Output {
				t.Errorf("got input %+v term %q output %q", got.Input, got.Term, got.Output)
			}
		})
	}
}

// demoOptions runs against the real embedded catalog and demo fleet.
func demoOptions(t *testing.T, output string, tty bool, policy recommend.Policy) (*CommitPlanOptions, *bytes.Buffer) {
	t.Helper()
	ios, _, out, _ := iostreams.Test()
	ios.SetStdoutTTY(tty)
	return &CommitPlanOptions{
		IO:      ios,
		Config:  func() (*config.Config, error) { return &config.Config{Policy: policy}, nil },
		Catalog: catalog.Embedded,
		Fleet:   factory.FileFleet(ios),
		Now:     testutil.Now,
		Input:   cmdutil.FleetFlags{Demo: true},
		Term:    "both",
		Output:  output,
	}, out
}

func TestCommitPlanDemoGolden(t *testing.T) {
	for _, tc := range []struct {
		name, output, term string
		tty                bool
	}{
		{"table", "table", "both", false},
		{"table-tty", "table", "both", true},
		{"table-1y", "table", "1y", false},
		{"json", "json", "both", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts, out := demoOptions(t, tc.output, tc.tty, recommend.DefaultPolicy().WithPurchases(purchasetest.Purchases()))
			opts.Term = tc.term
			if err := commitPlanRun(opts); err != nil {
				t.Fatal(err)
			}
			ext := ".txt"
			if tc.output == "json" {
				ext = ".json"
			}
			testutil.AssertGolden(t, "testdata/demo-"+tc.name+ext, out.Bytes())
		})
	}
}

// demoPlan is the demo's engine plan and commitment plan (both terms).
func demoPlan(t *testing.T) (*fleet.Fleet, pricing.Catalog, recommend.Plan, cplan.Plan) {
	t.Helper()
	fl, err := file.Demo()
	if err != nil {
		t.Fatal(err)
	}
	cat, err := catalog.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	if err := pricing.Complete(fl, cat); err != nil {
		t.Fatal(err)
	}
	pol := recommend.DefaultPolicy().WithPurchases(purchasetest.Purchases())
	eng := recommend.Run(fl, cat, pol)
	return fl, cat, eng, eng.Commitments
}

// TestDemoAgreesWithTheEngine checks the plan against the engine's own
// figures: the burst layer costs what the engine's spot instances cost, every
// group's all-on-demand cost is the instances' on-demand hours at catalog
// prices, and where the engine commits an instance (1-year), the 1-year plan's
// saving for it agrees to the cent (rounding per instance against per group).
func TestDemoAgreesWithTheEngine(t *testing.T) {
	_, _, eng, p := demoPlan(t)
	spotCost := map[string]decimal.Decimal{}
	for _, ic := range eng.Instances {
		if ic.Final != nil && ic.Final.Lifecycle == fleet.Spot && !ic.Final.Stopped {
			spotCost[ic.ResourceID] = ic.OptimizedCost
		}
	}
	oneYear := map[string]decimal.Decimal{}
	inGroup := map[string]bool{}
	for _, g := range p.Groups {
		var wantSpot decimal.Decimal
		for _, id := range g.SpotItems {
			c, ok := spotCost[id]
			if !ok {
				t.Errorf("%s is in the burst layer but the engine does not run it on spot", id)
			}
			wantSpot = wantSpot.Add(c)
			inGroup[id] = true
		}
		for _, id := range g.Items {
			inGroup[id] = true
		}
		for _, tp := range g.Terms {
			// Spot money = the spot instances + spot-eligible usage above c (none in the demo).
			if !tp.SpotMonthly.Equal(wantSpot) {
				t.Errorf("%s %s: spot %s, the engine's spot instances cost %s", g.Family, tp.Term, tp.SpotMonthly, wantSpot)
			}
			if tp.Term == cplan.Term1y {
				for _, a := range tp.Allocations {
					oneYear[a.ID] = a.SavingsMonthly
				}
			}
		}
	}
	for id := range spotCost {
		if !inGroup[id] {
			t.Errorf("spot instance %s is in no group", id)
		}
	}
	engineCommitted := 0
	for _, r := range eng.Recommendations {
		if r.Kind != recommend.KindCommitment {
			continue
		}
		engineCommitted++
		got, ok := oneYear[r.ResourceID]
		if !ok || got.Sub(r.MonthlySavings).Abs().GreaterThan(decimal.RequireFromString("0.01")) {
			t.Errorf("%s: engine saves %s with a 1-year commitment, the plan allocates %s (found %v)", r.ResourceID, r.MonthlySavings, got, ok)
		}
	}
	if engineCommitted == 0 {
		t.Error("the engine commits nothing in the demo; the cross-check is empty")
	}
}

// TestDemoHandChecked recomputes the committed groups of the demo by hand
// from catalog prices: every instance in them runs 24/7, so c is the sum of
// their on-demand prices, fully used, and the saving is c·730 − c·(1−d)·730.
func TestDemoHandChecked(t *testing.T) {
	_, _, _, p := demoPlan(t)
	hours := decimal.NewFromInt(730)
	checked := 0
	for _, g := range p.Groups {
		if g.Recommended == cplan.None {
			continue
		}
		if g.Usage.Min != g.Usage.Max {
			t.Errorf("%s: expected flat usage in the demo's committed groups, got %+v", g.Family, g.Usage)
			continue
		}
		c := decimal.NewFromFloat(g.Usage.Max)
		for _, tp := range g.Terms {
			d := decimal.NewFromFloat(tp.Discount)
			committed := c.Mul(decimal.NewFromInt(1).Sub(d)).Mul(hours).Round(2)
			saving := c.Mul(hours).Round(2).Sub(committed)
			if !tp.CommitHourly.Equal(c) || !tp.CommittedMonthly.Equal(committed) || !tp.SavingsMonthly.Equal(saving) || tp.Utilization != 1 {
				t.Errorf("%s %s: commit %s committed %s saving %s util %v; by hand %s %s %s 1",
					g.Family, tp.Term, tp.CommitHourly, tp.CommittedMonthly, tp.SavingsMonthly, tp.Utilization, c, committed, saving)
			}
			checked++
		}
		// The policy's term (1y by default) is the one bought, as analyze
		// buys it, though a fully used 3-year commitment saves more.
		if g.Recommended != cplan.Term1y {
			t.Errorf("%s: recommended %s; the policy buys 1y", g.Family, g.Recommended)
		}
		if len(g.Terms) != 2 || !g.Terms[1].SavingsMonthly.GreaterThan(g.Terms[0].SavingsMonthly) {
			t.Errorf("%s: a fully used 3-year commitment should save more than a 1-year one: %+v", g.Family, g.Terms)
		}
	}
	if checked == 0 {
		t.Error("no committed group in the demo")
	}
	// The scheduled notebooks run about 30 % of hours, below both break-evens.
	for _, g := range p.Groups {
		if g.Family == "g4dn" && (g.Recommended != cplan.None || g.Usage.RunningShare > 0.45) {
			t.Errorf("g4dn: recommended %s, running %v", g.Recommended, g.Usage.RunningShare)
		}
	}
}

func TestCommitPlanJSONAddsUp(t *testing.T) {
	opts, out := demoOptions(t, "json", false, recommend.DefaultPolicy().WithPurchases(purchasetest.Purchases()))
	if err := commitPlanRun(opts); err != nil {
		t.Fatal(err)
	}
	var p cplan.Plan
	if err := json.Unmarshal(out.Bytes(), &p); err != nil {
		t.Fatal(err)
	}
	total := decimal.Zero
	for id, v := range cplan.Allocate(p) {
		if v.IsNegative() {
			t.Errorf("%s: negative allocation %s", id, v)
		}
		total = total.Add(v)
	}
	if !total.Equal(p.SavingsMonthly) || !p.SavingsMonthly.IsPositive() {
		t.Errorf("allocations add up to %s, the plan saves %s", total, p.SavingsMonthly)
	}
	for _, g := range p.Groups {
		for _, tp := range g.Terms {
			if !tp.TotalMonthly.Equal(tp.CommittedMonthly.Add(tp.OnDemandMonthly).Add(tp.SpotMonthly)) {
				t.Errorf("%s %s: total does not add up", g.Family, tp.Term)
			}
		}
	}
}

func TestCommitPlanConfiguredDiscounts(t *testing.T) {
	pol := recommend.DefaultPolicy().WithPurchases(purchasetest.Purchases())
	pol.Commitment.Discounts1y = map[string]float64{"aws": 0.35}
	opts, out := demoOptions(t, "table", false, pol)
	opts.Term = "1y"
	if err := commitPlanRun(opts); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	for _, want := range []string{
		"configured discounts: aws Compute Savings Plan 1y 35.0 %\n",
		"35.0 %",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("output lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, "3y ") {
		t.Errorf("--term 1y shows a 3y term:\n%s", s)
	}
}

func TestCommitPlanBadFleet(t *testing.T) {
	opts, _ := demoOptions(t, "table", false, recommend.DefaultPolicy().WithPurchases(purchasetest.Purchases()))
	opts.Input = cmdutil.FleetFlags{Path: "testdata/no-such-fleet.yaml"}
	err := commitPlanRun(opts)
	if err == nil || strings.Contains(err.Error(), "\n") {
		t.Fatalf("error %v, want one line", err)
	}
	var in *cmdutil.InputError
	if !asInputError(err, &in) {
		t.Errorf("error %T, want an InputError (exit 2)", err)
	}
}

func asInputError(err error, target **cmdutil.InputError) bool {
	e, ok := err.(*cmdutil.InputError)
	if ok {
		*target = e
	}
	return ok
}

// TestGroupKindNote: a group whose planner weighed two kinds (an Azure
// savings plan against reservations) says what each saves; one that did
// not prints no kind line.
func TestGroupKindNote(t *testing.T) {
	for _, tc := range []struct {
		note string
		want bool
	}{{"an Azure savings plan for compute saves $2014.80 a month on this usage, a Reserved VM Instance $0.00: the savings plan is bought", true}, {"", false}} {
		var b bytes.Buffer
		g := cplan.GroupPlan{Provider: fleet.Azure, Region: "eastus", Family: "NCads_A100_v4", Kind: "azure-savings-plan", KindNote: tc.note, Recommended: cplan.None}
		if err := writeGroup(&b, false, 0, g); err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(b.String(), "\nkind: "+tc.note+"\n"); got != tc.want {
			t.Errorf("note %q: output %q", tc.note, b.String())
		}
	}
}
