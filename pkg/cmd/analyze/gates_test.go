package analyze

import (
	"bytes"
	"errors"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/gpufinops/gpufinops/internal/purchasetest"
	"github.com/gpufinops/gpufinops/pkg/cmdutil"
	"github.com/gpufinops/gpufinops/pkg/config"
	"github.com/gpufinops/gpufinops/pkg/recommend"
	"github.com/gpufinops/gpufinops/pkg/report"
	"github.com/gpufinops/gpufinops/pkg/testutil"
)

// runAnalyze runs `gpufinops analyze args` on the demo wiring, as the root
// command would, and returns stdout, the error and its exit code.
func runAnalyze(t *testing.T, cfg *config.Config, tty bool, args ...string) (string, error, cmdutil.ExitCode) {
	t.Helper()
	opts, out := demoOptions(t, "table", tty)
	if cfg != nil {
		opts.Config = func() (*config.Config, error) { return cfg, nil }
	}
	f := &cmdutil.Factory{IOStreams: opts.IO, Config: opts.Config, Catalog: opts.Catalog, Fleet: opts.Fleet, Now: opts.Now}
	cmd := NewCmdAnalyze(f, nil)
	cmd.SetArgs(args)
	cmd.SetOut(&bytes.Buffer{})
	cmd.SetErr(&bytes.Buffer{})
	err := cmd.Execute()
	return out.String(), err, cmdutil.ExitCodeFor(err)
}

func golden(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The demo saves 118,994.97 a month (USD): 86,812.42 on its VMs plus the
// SageMaker endpoint deleted (10,351.40), the Azure ML compute instance
// stopped (2,681.29), the Vertex AI endpoint cut from 3 replicas to 1
// (18,433.84) and the SageMaker notebook's idle shutdown (716.02).
func TestFailOnGates(t *testing.T) {
	for _, tc := range []struct {
		gate   string
		reason string // empty: does not trip
	}{
		{"savings>5000", "savings 118994.97 > 5000"},
		{"savings>118994.97", ""},
		{"savings>=118994.97", "savings 118994.97 >= 118994.97"},
		{"savings-percent>20", "savings-percent "},
		{"savings-percent>99", ""},
		{"current-cost>1000", "current-cost "},
		{"current-cost<1000", ""},
		{"untagged-spend>=0", "untagged-spend "},
		{"untagged-spend>100000000", ""},
		{"idle-gpus>0", "idle-gpus "},
		{"idle-gpus>1000", ""},
		{"recommendations>0", "recommendations "},
		{"recommendations=0", ""},
		// The demo's four warnings: no SageMaker Savings Plans rate, and
		// three stale price sources (two spot, Vertex AI's list).
		{"warnings=0", ""},
		{"warnings>0", "warnings 4 > 0"},
		{"warnings>4", ""},
		{"savings:spot>1000", "savings:spot "},
		{"savings:quantize>100000", ""},
		{"savings>5000&&confidence=high", "savings "},
		{"savings>5000&&provider=aws&&kind=spot", "savings "},
		{"savings>0&&confidence=low&&kind=idle-stop", ""},
		{"savings>99999999, idle-gpus>0", "idle-gpus "},
	} {
		t.Run(tc.gate, func(t *testing.T) {
			out, err, code := runAnalyze(t, nil, false, "--demo", "-o", "json", "--fail-on", tc.gate)
			// The whole report is written first, whether the gate trips or not.
			if want := golden(t, "testdata/demo-json.json"); out != want {
				t.Errorf("stdout is not the complete report (%d bytes, want %d)", len(out), len(want))
			}
			if tc.reason == "" {
				if err != nil || code != cmdutil.ExitOK {
					t.Fatalf("tripped: %v (exit %d)", err, code)
				}
				return
			}
			var gateErr *cmdutil.GateError
			if !errors.As(err, &gateErr) || code != cmdutil.ExitGate {
				t.Fatalf("error %v (exit %d), want a gate error, exit 5", err, code)
			}
			if !strings.HasPrefix(err.Error(), "gate tripped: "+tc.reason) || strings.Contains(err.Error(), "\n") {
				t.Errorf("reason %q, want one line starting %q", err, "gate tripped: "+tc.reason)
			}
		})
	}
}

func TestFailOnTableAndReasons(t *testing.T) {
	out, err, code := runAnalyze(t, nil, false, "--demo", "--fail-on", "savings>5000", "--fail-on", "warnings>0,idle-gpus>=1")
	if want := golden(t, "testdata/demo-table.txt"); out != want {
		t.Error("the table is not complete before the gate error")
	}
	if code != cmdutil.ExitGate || !strings.HasPrefix(err.Error(), "gate tripped: savings 118994.97 > 5000; warnings 4 > 0; idle-gpus ") {
		t.Errorf("error %v (exit %d)", err, code)
	}
}

func TestFailOnMalformed(t *testing.T) {
	for _, tc := range []struct{ gate, want string }{
		{"savings>>5000", `--fail-on "savings>>5000": at column 9: expected a number after ">", got ">5000"`},
		{"savings", `at column 8: expected an operator`},
		{"saving>1", `expected a metric`},
		{"savings>1&&confidence=certain", `expected confidence to be one of low, medium, high, got "certain"`},
		{"savings>1,", `expected an expression after ","`},
	} {
		t.Run(tc.gate, func(t *testing.T) {
			out, err, code := runAnalyze(t, nil, false, "--demo", "--fail-on", tc.gate)
			var flagErr *cmdutil.FlagError
			if !errors.As(err, &flagErr) || code != cmdutil.ExitUsage || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v (exit %d), want a usage error containing %q", err, code, tc.want)
			}
			if out != "" {
				t.Errorf("wrote output on a bad flag: %q", out)
			}
		})
	}
}

func TestJQ(t *testing.T) {
	out, err, _ := runAnalyze(t, nil, false, "--demo", "-o", "json", "--jq", ".summary.monthlySavings")
	if err != nil || out != "118994.97\n" {
		t.Errorf("got %q, %v", out, err)
	}
	out, err, _ = runAnalyze(t, nil, false, "--demo", "-o", "json", "-q", `[.recommendations[] | select(.kind == "idle-stop") | .resourceId] | sort | .[0]`)
	if err != nil || out != "/subscriptions/0b1f6471-1bf0-4dda-aec3-cb9272f09590/resourceGroups/nlp-ml/providers/Microsoft.MachineLearningServices/workspaces/ws-nlp/computes/ci-erin\n" {
		t.Errorf("got %q, %v", out, err)
	}
	// --jq and --template without -o select json, as gh's do.
	out, err, _ = runAnalyze(t, nil, false, "--demo", "--jq", ".summary.monthlySavings")
	if err != nil || out != "118994.97\n" {
		t.Errorf("--jq without -o: got %q, %v", out, err)
	}
	out, err, _ = runAnalyze(t, nil, false, "--demo", "--template", `{{.schemaVersion}} {{money .summary.monthlySavings .currency}} {{percent .summary.savingsPercent}}{{"\n"}}`)
	if err != nil || !strings.HasSuffix(out, " $118,994.97 87.5 %\n") {
		t.Errorf("--template: got %q, %v", out, err)
	}
	// A gate still applies, after the filtered output.
	out, err, code := runAnalyze(t, nil, false, "--demo", "-o", "json", "--jq", ".currency", "--fail-on", "savings>5000")
	if out != "USD\n" || code != cmdutil.ExitGate {
		t.Errorf("got %q, %v (exit %d)", out, err, code)
	}
	for _, tc := range []struct {
		args []string
		want string
		code cmdutil.ExitCode
	}{
		{[]string{"-o", "table", "--jq", ".summary"}, "--jq needs -o json (the output is table)", cmdutil.ExitUsage},
		{[]string{"-o", "markdown", "--template", "{{.currency}}"}, "--template needs -o json (the output is markdown)", cmdutil.ExitUsage},
		{[]string{"--template", "{{.currency"}, "--template: ", cmdutil.ExitUsage},
		{[]string{"-o", "json", "--jq", ".summary |"}, `--jq ".summary |": unexpected EOF`, cmdutil.ExitUsage},
		{[]string{"-o", "json", "--jq", "nope"}, `--jq "nope": function not defined: nope/0`, cmdutil.ExitUsage},
		{[]string{"-o", "json", "--jq", ".summary.monthlySavings | keys"}, `--jq ".summary.monthlySavings | keys": `, cmdutil.ExitError},
	} {
		out, err, code := runAnalyze(t, nil, false, append([]string{"--demo"}, tc.args...)...)
		if err == nil || code != tc.code || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%v: error %v (exit %d), want %q (exit %d)", tc.args, err, code, tc.want, tc.code)
		}
		if out != "" {
			t.Errorf("%v: wrote %q", tc.args, out)
		}
	}
}

func TestCurrencyGolden(t *testing.T) {
	for _, tc := range []struct {
		name   string
		format string
		tty    bool
	}{
		{"table-tty", "table", true},
		{"table", "table", false},
		{"json", "json", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err, _ := runAnalyze(t, nil, tc.tty, "--demo", "-o", tc.format, "--currency", "eur", "--exchange-rate", "0.92")
			if err != nil {
				t.Fatal(err)
			}
			ext := map[string]string{"json": ".json"}[tc.format]
			if ext == "" {
				ext = ".txt"
			}
			testutil.AssertGolden(t, "testdata/demo-eur-"+tc.name+ext, []byte(out))
			if tc.format == "json" {
				rep, err := report.Load(strings.NewReader(out))
				if err != nil {
					t.Fatal(err)
				}
				if err := rep.Verify(); err != nil {
					t.Errorf("the EUR report does not add up: %v", err)
				}
				if rep.Currency != "EUR" || rep.ExchangeRate.String() != "0.92" || rep.ExchangeRateSource != "--exchange-rate" {
					t.Errorf("currency %s rate %s source %q", rep.Currency, rep.ExchangeRate, rep.ExchangeRateSource)
				}
			}
		})
	}
}

func TestCurrencyRate(t *testing.T) {
	withRates := &config.Config{Policy: recommend.DefaultPolicy().WithPurchases(purchasetest.Purchases()), Report: config.ReportConfig{ExchangeRates: map[string]float64{"gbp": 0.79}}, File: "c.yaml"}
	out, err, _ := runAnalyze(t, withRates, false, "--demo", "-o", "json", "--currency", "GBP", "--jq", "[.currency, .exchangeRate, .exchangeRateSource]|@tsv")
	if err != nil || out != "GBP\t0.79\tconfig file c.yaml\n" {
		t.Errorf("config rate: %q, %v", out, err)
	}
	// The flag wins over the configuration.
	out, _, _ = runAnalyze(t, withRates, false, "--demo", "-o", "json", "--currency", "GBP", "--exchange-rate", "0.8", "--jq", ".exchangeRate")
	if out != "0.8\n" {
		t.Errorf("flag rate: %q", out)
	}
	// Gates compare USD figures whatever the currency printed.
	_, err, code := runAnalyze(t, withRates, false, "--demo", "--currency", "GBP", "--fail-on", "savings>99845")
	if code != cmdutil.ExitGate || err.Error() != "gate tripped: savings 118994.97 > 99845 (amounts in USD)" {
		t.Errorf("gate on a GBP report: %v (exit %d)", err, code)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--currency", "EUR"}, "--currency EUR needs a rate: give --exchange-rate, set report.exchange_rates.EUR in the config file, or GPUFINOPS_REPORT_EXCHANGE_RATES_EUR"},
		{[]string{"--currency", "euro", "--exchange-rate", "1.1"}, `--currency: "euro" is not a currency code (three letters, e.g. EUR)`},
		{[]string{"--currency", "ZZZ", "--exchange-rate", "1.1"}, `--currency: "ZZZ" is not an ISO 4217 currency code (e.g. EUR, GBP, JPY)`},
		{[]string{"--currency", "e1r", "--exchange-rate", "1.1"}, `--currency: "e1r" is not an ISO 4217 currency code`},
		{[]string{"--currency", "EUR", "--exchange-rate", "-1"}, `--exchange-rate: "-1" is not a number above zero (units of EUR per USD)`},
		{[]string{"--currency", "EUR", "--exchange-rate", "abc"}, `--exchange-rate: "abc" is not a number above zero`},
		{[]string{"--exchange-rate", "0.92"}, "--exchange-rate needs --currency"},
	} {
		out, err, code := runAnalyze(t, withRates, false, append([]string{"--demo"}, tc.args...)...)
		var flagErr *cmdutil.FlagError
		if !errors.As(err, &flagErr) || code != cmdutil.ExitUsage || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v (exit %d), want a usage error containing %q", tc.args, err, code, tc.want)
		}
		if out != "" {
			t.Errorf("%v: wrote output %q", tc.args, out)
		}
	}
}

// NO_COLOR (applied by iostreams) turns colour off; with it off a terminal
// gets the same table without a single escape sequence.
func TestNoColorOnTTY(t *testing.T) {
	colored, plain := func() (string, string) {
		opts, out := demoOptions(t, "table", true)
		opts.IO.SetColorEnabled(true)
		if err := analyzeRun(opts); err != nil {
			t.Fatal(err)
		}
		opts2, out2 := demoOptions(t, "table", true)
		opts2.IO.SetColorEnabled(false)
		if err := analyzeRun(opts2); err != nil {
			t.Fatal(err)
		}
		return out.String(), out2.String()
	}()
	if !strings.Contains(colored, "\x1b[") {
		t.Fatal("no colour with colour enabled")
	}
	if strings.Contains(plain, "\x1b[") {
		t.Error("escape sequences with colour off")
	}
}

// -o json keeps a stable order: two runs are byte for byte the same, and the
// maps (savingsByKind, evidence) come out with sorted keys.
func TestJSONStableOrder(t *testing.T) {
	a, _, _ := runAnalyze(t, nil, false, "--demo", "-o", "json")
	b, _, _ := runAnalyze(t, nil, false, "--demo", "-o", "json")
	if a != b {
		t.Fatal("two runs differ")
	}
	i := strings.Index(a, `"savingsByKind": {`)
	j := strings.Index(a[i:], "}")
	var keys []string
	for _, line := range strings.Split(a[i:i+j], "\n")[1:] {
		if k, _, ok := strings.Cut(strings.TrimSpace(line), ":"); ok {
			keys = append(keys, k)
		}
	}
	for n := 1; n < len(keys); n++ {
		if keys[n-1] >= keys[n] {
			t.Errorf("savingsByKind keys not sorted: %v", keys)
		}
	}
}

// TestCurrencyMinorUnits: yen have no minor units and KWD three, in every
// format; the converted report still adds up.
func TestCurrencyMinorUnits(t *testing.T) {
	for _, tc := range []struct{ code, rate, sign, amount string }{
		{"JPY", "151.37", "¥", `"currentMonthlyCost": [0-9]+,`},
		{"KWD", "0.3071", "KWD ", `"currentMonthlyCost": [0-9]+\.[0-9]{3},`},
	} {
		out, err, _ := runAnalyze(t, nil, false, "--demo", "-o", "json", "--currency", tc.code, "--exchange-rate", tc.rate)
		if err != nil {
			t.Fatal(err)
		}
		if !regexp.MustCompile(tc.amount).MatchString(out) {
			t.Errorf("%s JSON has no amount like %s", tc.code, tc.amount)
		}
		rep, err := report.Load(strings.NewReader(out))
		if err != nil {
			t.Fatal(err)
		}
		if err := rep.Verify(); err != nil {
			t.Errorf("%s: %v", tc.code, err)
		}
		for _, r := range rep.Recommendations {
			if r.ProjectedMonthlyCost.Decimal().IsNegative() {
				t.Errorf("%s: %s projects %s", tc.code, r.ID, r.ProjectedMonthlyCost)
			}
		}
		table, _, _ := runAnalyze(t, nil, true, "--demo", "--currency", tc.code, "--exchange-rate", tc.rate)
		if !strings.Contains(table, "Current "+tc.sign) {
			t.Errorf("%s table does not lead with %q:\n%.300s", tc.code, tc.sign, table)
		}
	}
}
