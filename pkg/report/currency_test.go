package report

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pkg/recommend"
)

func TestConvert(t *testing.T) {
	usd := testReport()
	before := write(t, usd, "json", PrintOptions{})
	for _, rate := range []string{"0.92", "0.8765", "151.37", "1.0001", "0.0123"} {
		t.Run(rate, func(t *testing.T) {
			got, err := Convert(usd, Conversion{Currency: "EUR", Rate: dec(rate), Source: "--exchange-rate"})
			if err != nil {
				t.Fatal(err)
			}
			if err := got.Verify(); err != nil {
				t.Fatalf("the converted report does not add up: %v", err)
			}
			if write(t, usd, "json", PrintOptions{}) != before {
				t.Fatal("Convert changed the USD report")
			}
			if got.Currency != "EUR" || got.ExchangeRate == nil || got.ExchangeRate.String() != rate || got.ExchangeRateSource != "--exchange-rate" {
				t.Errorf("currency %q rate %v source %q", got.Currency, got.ExchangeRate, got.ExchangeRateSource)
			}
			// Every part is its USD amount converted, within the cent that
			// rounding and the re-summing move.
			k := dec(rate)
			near := func(what string, got Money, usd Money) {
				t.Helper()
				want := usd.d.Mul(k)
				if got.d.Sub(want).Abs().GreaterThan(dec("0.02")) {
					t.Errorf("%s: %s, want about %s", what, got, want.StringFixed(4))
				}
			}
			for i, rec := range got.Recommendations {
				near(rec.ID+" savings", rec.MonthlySavings, usd.Recommendations[i].MonthlySavings)
				near(rec.ID+" current", rec.CurrentMonthlyCost, usd.Recommendations[i].CurrentMonthlyCost)
				for j, p := range rec.Evidence.Prices {
					if p.Currency != "USD" || !p.Hourly.d.Equal(usd.Recommendations[i].Evidence.Prices[j].Hourly.d) {
						t.Errorf("%s: evidence price %+v changed; prices stay USD", rec.ID, p)
					}
				}
			}
			// The totals move by at most a cent per part.
			n := decimal.NewFromInt(int64(len(got.Recommendations)))
			want := usd.Summary.MonthlySavings.d.Mul(k)
			if got.Summary.MonthlySavings.d.Sub(want).Abs().GreaterThan(n.Mul(dec("0.01"))) {
				t.Errorf("savings %s, want about %s", got.Summary.MonthlySavings, want)
			}
			for _, in := range got.Instances {
				if in.HourlyPrice != nil && in.HourlyPrice.Currency != "USD" {
					t.Errorf("%s: hourly price in %s; prices stay USD", in.ResourceID, in.HourlyPrice.Currency)
				}
			}
			if got.Summary.SavingsPercent.d.Sub(usd.Summary.SavingsPercent.d).Abs().GreaterThan(dec("0.1")) {
				t.Errorf("savings percent %s, USD %s", got.Summary.SavingsPercent, usd.Summary.SavingsPercent)
			}
		})
	}
}

// hourlyUSD matches the hourly prices a short action names: they stay USD,
// as the evidence's prices do.
var hourlyUSD = regexp.MustCompile(`\$[0-9.,]+/h`)

func TestConvertRoundTripsThroughLoad(t *testing.T) {
	got, err := Convert(testReport(), Conversion{Currency: "EUR", Rate: dec("0.92"), Source: "config file c.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	doc := write(t, got, "json", PrintOptions{})
	for _, want := range []string{`"currency": "EUR",`, `"exchangeRate": 0.92,`, `"exchangeRateSource": "config file c.yaml",`, `"schemaVersion": "` + SchemaVersion + `"`} {
		if !strings.Contains(doc, want) {
			t.Errorf("JSON lacks %s", want)
		}
	}
	loaded, err := Load(strings.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	if err := loaded.Verify(); err != nil {
		t.Fatal(err)
	}
	if again := write(t, loaded, "json", PrintOptions{}); again != doc {
		t.Error("the loaded EUR report writes differently")
	}
	table := write(t, loaded, "table", PrintOptions{TTY: true})
	if !strings.Contains(table, "Amounts in EUR at 0.92 per USD (config file c.yaml); prices in the evidence stay USD.") ||
		!strings.Contains(table, "€") || strings.Contains(hourlyUSD.ReplaceAllString(table, ""), "$") {
		t.Errorf("the table does not state the currency:\n%s", table)
	}
	plain := write(t, loaded, "table", PrintOptions{})
	if !strings.Contains(plain, " EUR/mo") || strings.Contains(plain, "USD/mo") || !strings.Contains(plain, "Amounts are EUR per month") {
		t.Errorf("the plain table does not state the currency:\n%s", plain)
	}
	md := write(t, loaded, "markdown", PrintOptions{})
	// Actions and rationales are the engine's sentences, written in USD.
	if !strings.Contains(md, "**Current €") || strings.Contains(md, "| $") {
		t.Errorf("markdown amounts not in EUR:\n%s", md)
	}
}

func TestConvertUSDIsTheSameReport(t *testing.T) {
	r := testReport()
	got, err := Convert(r, Conversion{Currency: "USD", Rate: dec("1")})
	if err != nil || got != r {
		t.Fatalf("Convert to USD at 1: %v, %v", got == r, err)
	}
	if _, err := Convert(r, Conversion{Currency: "EUR", Rate: dec("0")}); err == nil {
		t.Error("a zero rate converted")
	}
	eur, _ := Convert(r, Conversion{Currency: "EUR", Rate: dec("0.9")})
	if _, err := Convert(eur, Conversion{Currency: "GBP", Rate: dec("0.8")}); err == nil || !strings.Contains(err.Error(), "only a USD report converts") {
		t.Errorf("converting twice: %v", err)
	}
}

func TestParseCurrency(t *testing.T) {
	for in, want := range map[string]string{"eur": "EUR", " GBP ": "GBP", "jpy": "JPY", "KWD": "KWD", "E": "", "EURO": "", "€": "", "": "", "ZZZ": "", "AB1": ""} {
		got, err := ParseCurrency(in)
		if got != want || (want == "") != (err != nil) {
			t.Errorf("ParseCurrency(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

func TestApportion(t *testing.T) {
	for _, tc := range []struct {
		parts        []string
		rate, target string
		want         string
	}{
		// 3 × 0.333… = 0.99 rounded; the target 1.00 puts the cent on the first.
		{[]string{"1", "1", "1"}, "0.333333", "1.00", "0.34 0.33 0.33"},
		// Rounding up too much: the cent comes off the part raised most.
		{[]string{"0.01", "0.01", "0.02"}, "0.5", "0.01", "0.00 0.00 0.01"},
		{[]string{"10.00", "20.00"}, "0.92", "27.60", "9.20 18.40"},
		{nil, "0.92", "0", ""},
		// A zero part stays zero, and none goes below zero, even where its
		// rounding cut is the smallest.
		{[]string{"0", "0.01", "0.01", "0.01"}, "0.5", "0.01", "0.00 0.00 0.00 0.01"},
		{[]string{"0.03", "0", "0.03"}, "0.4", "0.02", "0.01 0.00 0.01"},
	} {
		var parts []decimal.Decimal
		for _, p := range tc.parts {
			parts = append(parts, dec(p))
		}
		var got []string
		for _, v := range apportion(parts, dec(tc.rate), dec(tc.target), dec("0.01")) {
			got = append(got, v.StringFixed(2))
		}
		if strings.Join(got, " ") != tc.want {
			t.Errorf("apportion(%v, %s, %s) = %v, want %s", tc.parts, tc.rate, tc.target, got, tc.want)
		}
	}
}

func TestConvertedJSONValidates(t *testing.T) {
	got, err := Convert(testReport(), Conversion{Currency: "JPY", Rate: dec("151.37"), Source: "--exchange-rate"})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := Write(&b, got, "json", PrintOptions{}); err != nil {
		t.Fatal(err)
	}
	sch, err := jsonschema.NewCompiler().Compile("../../docs/schema/report.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	inst, err := jsonschema.UnmarshalJSON(&b)
	if err != nil {
		t.Fatal(err)
	}
	if err := sch.Validate(inst); err != nil {
		t.Errorf("the JPY report does not match the schema: %v", err)
	}
}

// TestUtilizationSource checks the 1.3 instance fields: present when the
// fleet says where utilization came from, absent otherwise.
func TestUtilizationSource(t *testing.T) {
	cov := 0.75
	ic := recommend.InstanceCost{ResourceID: "i-1", Provider: fleet.AWS, UtilizationSource: "prometheus", UtilizationCoverage: &cov}
	in := newInstance(ic, nil)
	if in.UtilizationSource != "prometheus" || in.UtilizationCoverage == nil || *in.UtilizationCoverage != 0.75 {
		t.Errorf("instance = %+v", in)
	}
	if in := newInstance(recommend.InstanceCost{ResourceID: "i-2"}, nil); in.UtilizationSource != "" || in.UtilizationCoverage != nil {
		t.Errorf("instance = %+v", in)
	}
}
