package gates

import (
	"errors"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/report"
)

func money(s string) report.Money { return report.NewMoney(decimal.RequireFromString(s)) }

func moneyPtr(s string) *report.Money { m := money(s); return &m }

// fixture: two priced instances (aws 4 GPUs $1,000, azure 8 GPUs $3,000), one
// unpriced aws instance; an idle-stop (aws, high), a spot (azure, medium) and a
// commitment (azure, low) recommendation saving 1,000, 1,200 and 300; the
// azure instance untagged; one warning on the unpriced instance.
func fixture() *report.Report {
	return &report.Report{
		SchemaVersion: report.SchemaVersion,
		Currency:      "USD",
		Summary: report.Summary{
			CurrentMonthlyCost: money("4000"), OptimizedMonthlyCost: money("1500"), MonthlySavings: money("2500"),
			SavingsPercent: report.NewNumber(decimal.RequireFromString("62.5")), InstanceCount: 3, GPUCount: 13, UnpricedCount: 1,
		},
		Instances: []report.Instance{
			{ResourceID: "i-1", Provider: "aws", GPUCount: 4, Priced: true, CurrentMonthlyCost: moneyPtr("1000")},
			{ResourceID: "i-2", Provider: "azure", GPUCount: 8, Priced: true, CurrentMonthlyCost: moneyPtr("3000")},
			{ResourceID: "i-3", Provider: "aws", GPUCount: 1},
		},
		Recommendations: []report.Recommendation{
			{ID: "r1", ResourceID: "i-1", Provider: "aws", Kind: "idle-stop", Confidence: "high", MonthlySavings: money("1000")},
			{ID: "r2", ResourceID: "i-2", Provider: "azure", Kind: "spot", Confidence: "medium", MonthlySavings: money("1200")},
			{ID: "r3", ResourceID: "i-2", Provider: "azure", Kind: "commitment", Confidence: "low", MonthlySavings: money("300"), After: "r2"},
		},
		Warnings: []report.Warning{{ResourceID: "i-3", Code: "unpriced", Message: "no price"}},
		TagAudit: &report.TagAudit{
			InstanceCount: 3, CompliantCount: 2, UntaggedMonthlyCost: money("3000"),
			Violations: []report.TagViolation{
				{ResourceID: "i-2", Missing: []string{"team"}, MonthlyCost: moneyPtr("3000")},
				{ResourceID: "i-1", Compliant: true, CaseMismatch: []string{"team"}, MonthlyCost: moneyPtr("1000")},
			},
		},
	}
}

func TestEvaluate(t *testing.T) {
	for _, tc := range []struct {
		expr    string
		tripped bool
		reason  string
	}{
		{"savings>2000", true, "savings 2500.00 > 2000"},
		{"savings>2500", false, ""},
		{"savings>=2500", true, "savings 2500.00 >= 2500"},
		{"savings<100", false, ""},
		{"savings>2000&&confidence=high", false, ""},
		{"savings>=1000 && confidence=high", true, "savings 1000.00 >= 1000 where confidence=high"},
		{"savings>2000&&confidence>=medium", true, "savings 2200.00 > 2000 where confidence>=medium"},
		{"savings>0&&confidence<low", false, ""},
		{"savings>1400&&provider=azure", true, "savings 1500.00 > 1400 where provider=azure"},
		{"savings>1500&&provider=azure", false, ""},
		{"savings>1000&&kind!=idle-stop", true, "savings 1500.00 > 1000 where kind!=idle-stop"},
		{"savings:spot>1000", true, "savings:spot 1200.00 > 1000"},
		{"savings:spot>1200", false, ""},
		{"savings:spot>0&&confidence=high", false, ""},
		{"savings-percent>60", true, "savings-percent 62.5 > 60"},
		{"savings-percent>70", false, ""},
		{"savings-percent>49&&provider=azure", true, "savings-percent 50.0 > 49 where provider=azure"},
		{"savings-percent>50&&provider=azure", false, ""},
		{"current-cost>=4000", true, "current-cost 4000.00 >= 4000"},
		{"current-cost>4000", false, ""},
		{"current-cost=1000&&provider=aws", true, "current-cost 1000.00 = 1000 where provider=aws"},
		{"untagged-spend>1000", true, "untagged-spend 3000.00 > 1000"},
		{"untagged-spend>3000", false, ""},
		{"untagged-spend>0&&provider=aws", false, ""},
		{"idle-gpus>0", true, "idle-gpus 4 > 0"},
		{"idle-gpus>4", false, ""},
		{"idle-gpus>0&&provider=azure", false, ""},
		{"recommendations>2", true, "recommendations 3 > 2"},
		{"recommendations!=3", false, ""},
		{"recommendations=2&&provider=azure", true, "recommendations 2 = 2 where provider=azure"},
		{"warnings>0", true, "warnings 1 > 0"},
		{"warnings>0&&provider=azure", false, ""},
		{"warnings>=1 && savings>2000", true, "warnings 1 >= 1 and savings 2500.00 > 2000"},
		{"warnings>=1 && savings>9000", false, ""},
	} {
		t.Run(tc.expr, func(t *testing.T) {
			gs, err := Parse([]string{tc.expr})
			if err != nil {
				t.Fatal(err)
			}
			res := Evaluate(gs, fixture())
			if len(res) != 1 {
				t.Fatalf("%d results", len(res))
			}
			if res[0].Tripped != tc.tripped || res[0].Reason != tc.reason {
				t.Errorf("tripped %v reason %q, want %v %q", res[0].Tripped, res[0].Reason, tc.tripped, tc.reason)
			}
		})
	}
}

func TestEvaluateWithoutTagAudit(t *testing.T) {
	r := fixture()
	r.TagAudit = nil // a 1.0 report
	gs, err := Parse([]string{"untagged-spend>0"})
	if err != nil {
		t.Fatal(err)
	}
	if res := Evaluate(gs, r); res[0].Tripped {
		t.Errorf("tripped on a report without a tag audit: %q", res[0].Reason)
	}
}

func TestParseSeveral(t *testing.T) {
	gs, err := Parse([]string{"savings>5000, idle-gpus>0", "confidence=high&&savings>1"})
	if err != nil {
		t.Fatal(err)
	}
	var exprs []string
	for _, g := range gs {
		exprs = append(exprs, g.Expr)
	}
	if got := strings.Join(exprs, " | "); got != "savings>5000 | idle-gpus>0 | confidence=high&&savings>1" {
		t.Errorf("expressions %q", got)
	}
	tripped := Tripped(Evaluate(gs, fixture()))
	if len(tripped) != 2 || tripped[0].Gate.Expr != "idle-gpus>0" {
		t.Errorf("tripped %+v", tripped)
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct{ value, want string }{
		{"", `--fail-on "": at column 1: expected an expression such as savings>5000`},
		{"savings", `--fail-on "savings": at column 8: expected an operator (> >= < <= = !=) after "savings"`},
		{"savings>>5000", `--fail-on "savings>>5000": at column 9: expected a number after ">", got ">5000"`},
		{"savings>", `at column 9: expected a value after ">"`},
		{"savings>5k", `at column 9: expected a number after ">", got "5k"`},
		{"savings>1e3", `at column 9: expected a number after ">", got "1e3"`},
		{"saving>5", `at column 1: expected a metric (savings, savings-percent, current-cost, untagged-spend, idle-gpus, recommendations, warnings, savings:<kind>) or a filter (confidence, kind, provider), got "saving"; did you mean "savings"?`},
		{"idle-gpu>0", `got "idle-gpu"; did you mean "idle-gpus"?`},
		{"savings:spto>0", `got "spto"; did you mean "spot"?`},
		{">5", `at column 1: expected a metric`},
		{"savings=>5", `at column 9: expected a number after "=", got ">5"`},
		{"savings!5", `at column 8: expected an operator (> >= < <= = !=), got "!"`},
		{"savings:spott>5", `at column 9: expected a kind (idle-stop, schedule, rightsize, quantize, share, spot, commitment, tagging) after "savings:", got "spott"`},
		{"warnings:spot>5", `at column 1: expected a metric`},
		{"savings>5,", `at column 11: expected an expression after ","`},
		{"savings>5&&", `at column 12: expected a term after "&&"`},
		{"&&savings>5", `at column 1: expected a term before "&&"`},
		{"confidence=high", `at column 1: expected a comparison such as savings>5000 besides the filters`},
		{"savings>5&&confidence=hi", `at column 23: expected confidence to be one of low, medium, high, got "hi"`},
		{"savings>5&&kind=spto", `got "spto"; did you mean "spot"?`},
		{"savings>5&&kind>spot", `at column 16: expected = or != after kind, got ">"`},
		{"savings>5&&provider=oci", `at column 21: expected provider to be one of aws, azure, gcp, got "oci"`},
		{"current-cost>5&&confidence=high", `at column 17: confidence does not apply to current-cost (at column 1); it takes only provider=`},
		{"savings>1, warnings>0&&kind=spot", `at column 24: kind does not apply to warnings (at column 12); it takes only provider=`},
	} {
		t.Run(tc.value, func(t *testing.T) {
			_, err := Parse([]string{tc.value})
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error %v, want a ParseError", err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error\n %s\nwant it to contain\n %s", err, tc.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error is not one line: %q", err)
			}
		})
	}
}

// TestWarningsCountScanScopes: a scan warning has no resource; its scope's
// provider is what a provider filter matches.
func TestWarningsCountScanScopes(t *testing.T) {
	r := fixture()
	r.Warnings = append(r.Warnings,
		report.Warning{Code: "scope-failed", Message: "eu-west-1 not scanned", Scope: &report.WarningScope{Provider: "azure", Account: "sub", Region: "westeurope"}},
		report.Warning{Code: "metrics-failed", Message: "prometheus down", Scope: &report.WarningScope{Source: "prometheus"}},
	)
	for _, tc := range []struct {
		expr   string
		reason string
	}{
		{"warnings>2", "warnings 3 > 2"},
		{"warnings>0&&provider=azure", "warnings 1 > 0 where provider=azure"},
		{"warnings=1&&provider=aws", "warnings 1 = 1 where provider=aws"},
		{"warnings>1&&provider=azure", ""},
	} {
		gs, err := Parse([]string{tc.expr})
		if err != nil {
			t.Fatal(err)
		}
		res := Evaluate(gs, r)
		if res[0].Reason != tc.reason || res[0].Tripped != (tc.reason != "") {
			t.Errorf("%s: %+v, want %q", tc.expr, res[0], tc.reason)
		}
	}
}
