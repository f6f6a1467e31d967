package report

import (
	"bytes"
	"encoding/csv"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gpufinops/gpufinops/pkg/fleet"
)

// -o focus states one month throughout, whatever the calendar month: the
// charge period spans the hours per month that BilledCost, the consumed
// quantity and the unit price use (730), inside the billing period, in
// February, in a 30-day and a 31-day month and in a leap year.
func TestFOCUSPeriodMatchesHoursPerMonth(t *testing.T) {
	for _, at := range []string{"2026-02-15T12:00:00Z", "2026-04-30T23:59:59Z", "2026-12-06T00:00:00Z", "2028-02-29T08:00:00Z", "2026-01-01T00:00:00Z"} {
		r := loadTestReport(t)
		r.GeneratedAt, _ = time.Parse(time.RFC3339, at)
		var b bytes.Buffer
		if err := WriteFOCUS(&b, r, nil); err != nil {
			t.Fatal(err)
		}
		rows, err := csv.NewReader(&b).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		col := map[string]int{}
		for i, h := range rows[0] {
			col[h] = i
		}
		ts := func(row []string, c string) time.Time {
			v, err := time.Parse(time.RFC3339, row[col[c]])
			if err != nil {
				t.Fatalf("%s: %s %q: %v", at, c, row[col[c]], err)
			}
			return v
		}
		num := func(row []string, c string) float64 {
			v, _ := strconv.ParseFloat(row[col[c]], 64)
			return v
		}
		checked := 0
		for _, row := range rows[1:] {
			cs, ce := ts(row, "ChargePeriodStart"), ts(row, "ChargePeriodEnd")
			bs, be := ts(row, "BillingPeriodStart"), ts(row, "BillingPeriodEnd")
			if h := ce.Sub(cs).Hours(); h != fleet.HoursPerMonth {
				t.Errorf("%s %s: charge period of %v hours, costs of %v", at, row[col["ResourceId"]], h, fleet.HoursPerMonth)
			}
			if cs.Before(bs) || ce.After(be) {
				t.Errorf("%s: charge period %s–%s outside the billing period %s–%s", at, cs, ce, bs, be)
			}
			if g := r.GeneratedAt; cs.Year() != g.Year() || cs.Month() != g.Month() || cs.Day() != 1 {
				t.Errorf("%s: the period starts %s", at, cs)
			}
			if q := num(row, "ConsumedQuantity"); q > ce.Sub(cs).Hours()+1e-9 {
				t.Errorf("%s %s: %v hours consumed in a %v-hour period", at, row[col["ResourceId"]], q, ce.Sub(cs).Hours())
			}
			// A list-priced instance running the whole month costs its unit
			// price times the period's hours.
			unit, cost := num(row, "x_UnitPrice"), num(row, "BilledCost")
			if row[col["x_PriceBasis"]] == "bill" || unit == 0 || num(row, "ConsumedQuantity") != fleet.HoursPerMonth {
				continue
			}
			checked++
			if want := unit * ce.Sub(cs).Hours(); math.Abs(cost-want) > 0.01*want+0.01 {
				t.Errorf("%s %s: BilledCost %v, unit price %v × %v hours = %v", at, row[col["ResourceId"]], cost, unit, ce.Sub(cs).Hours(), want)
			}
		}
		if checked == 0 {
			t.Logf("%s: no list-priced instance running the whole month", at)
		}
	}
}

// -o focus names each provider as the caller's providerName says (the
// adapters' registrations, in the binary), and as it is without one: the
// report knows no cloud's FOCUS name.
func TestFOCUSProviderNameIsGiven(t *testing.T) {
	r := loadTestReport(t)
	for _, tc := range []struct {
		names func(string) string
		want  func(string) string
	}{
		{nil, func(p string) string { return p }},
		{func(p string) string { return "Cloud " + strings.ToUpper(p) }, func(p string) string { return "Cloud " + strings.ToUpper(p) }},
	} {
		var b bytes.Buffer
		if err := WriteFOCUS(&b, r, tc.names); err != nil {
			t.Fatal(err)
		}
		rows, err := csv.NewReader(&b).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		col := map[string]int{}
		for i, h := range rows[0] {
			col[h] = i
		}
		if len(rows) != len(r.Instances)+1 {
			t.Fatalf("%d rows for %d instances", len(rows)-1, len(r.Instances))
		}
		for i, row := range rows[1:] {
			want := tc.want(r.Instances[i].Provider)
			if row[col["ProviderName"]] != want || row[col["PublisherName"]] != want {
				t.Errorf("%s: ProviderName %q, PublisherName %q, want %q", row[col["ResourceId"]], row[col["ProviderName"]], row[col["PublisherName"]], want)
			}
		}
	}
}
