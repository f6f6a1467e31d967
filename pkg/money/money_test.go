package money

import (
	"encoding/json"
	"math/rand"
	"strings"
	"testing"

	"github.com/shopspring/decimal"
	"golang.org/x/text/currency"
)

func d(s string) decimal.Decimal { return decimal.RequireFromString(s) }

func TestFormat(t *testing.T) {
	for _, tc := range []struct {
		amount, code, want string
	}{
		{"12345.67", "", "$12,345.67"},
		{"12345.67", "USD", "$12,345.67"},
		{"-1234.5", "USD", "-$1,234.50"},
		{"0", "USD", "$0.00"},
		{"-0.004", "USD", "$0.00"},
		{"999.995", "USD", "$1,000.00"},
		{"1234567.891", "EUR", "€1,234,567.89"},
		{"1234.5", "GBP", "£1,234.50"},
		{"1234.5", "JPY", "¥1,235"},
		{"-1234.4", "JPY", "-¥1,234"},
		{"1234.5678", "KWD", "KWD 1,234.568"},
		{"0.5", "BHD", "BHD 0.500"},
		{"99", "CHF", "CHF 99.00"},
		{"1000000", "INR", "₹1,000,000.00"},
		{"12.3", "CAD", "CA$12.30"},
		{"5", "XYZ", "XYZ 5.00"},
		{"5", "\t", "¤5.00"},
		{"-5", "eur!", "-¤5.00"},
		{"123456789012345.67", "USD", "$123,456,789,012,345.67"},
	} {
		if got := Format(d(tc.amount), tc.code); got != tc.want {
			t.Errorf("Format(%s, %q) = %q, want %q", tc.amount, tc.code, got, tc.want)
		}
	}
	if got := FormatPlaces(d("1.006"), "USD", 4); got != "$1.0060" {
		t.Errorf("FormatPlaces = %q", got)
	}
}

func TestPlainAndScale(t *testing.T) {
	for _, tc := range []struct {
		code  string
		scale int32
		plain string
	}{{"", 2, "-1234.57"}, {"USD", 2, "-1234.57"}, {"EUR", 2, "-1234.57"}, {"JPY", 0, "-1235"}, {"KRW", 0, "-1235"}, {"KWD", 3, "-1234.568"}, {"XYZ", 2, "-1234.57"}} {
		if got := Scale(tc.code); got != tc.scale {
			t.Errorf("Scale(%q) = %d, want %d", tc.code, got, tc.scale)
		}
		if got := Plain(d("-1234.5675"), tc.code); got != tc.plain {
			t.Errorf("Plain(%q) = %q, want %q", tc.code, got, tc.plain)
		}
	}
	if !Minor("JPY").Equal(d("1")) || !Minor("KWD").Equal(d("0.001")) || !Minor("").Equal(d("0.01")) {
		t.Error("Minor")
	}
}

func TestParse(t *testing.T) {
	for in, want := range map[string]string{"eur": "EUR", " GBP ": "GBP", "jpy": "JPY", "Kwd": "KWD"} {
		if got, err := Parse(in); err != nil || got != want {
			t.Errorf("Parse(%q) = %q, %v", in, got, err)
		}
	}
	for _, in := range []string{"", "EU", "EURO", "ZZZ", "€", "12A", "e u"} {
		if got, err := Parse(in); err == nil || strings.Contains(err.Error(), "\n") {
			t.Errorf("Parse(%q) = %q, %v; want a one-line error", in, got, err)
		}
	}
}

// Property: Format and Plain agree on the digits for random amounts in
// every currency x/text knows with the standard minor units.
func TestFormatMatchesPlain(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	codes := []string{"USD", "EUR", "GBP", "JPY", "KWD", "BHD", "CHF", "INR", "SEK", "KRW", "CLP", "TND", "AUD"}
	for i := 0; i < 5000; i++ {
		code := codes[rng.Intn(len(codes))]
		amt := decimal.New(rng.Int63n(1e15)-5e14, -int32(rng.Intn(5)))
		f, p := Format(amt, code), Plain(amt, code)
		digits := strings.NewReplacer(",", "", Symbol(code), "", " ", "").Replace(f)
		if digits != p {
			t.Fatalf("Format(%s, %s) = %q, Plain = %q", amt, code, f, p)
		}
		u, _ := currency.ParseISO(code)
		scale, _ := currency.Standard.Rounding(u)
		if _, frac, _ := strings.Cut(p, "."); len(frac) != scale {
			t.Fatalf("Plain(%s, %s) = %q: %d decimals, want %d", amt, code, p, len(frac), scale)
		}
	}
}

func FuzzFormat(f *testing.F) {
	f.Add("1234.5", "USD")
	f.Add("-0.005", "JPY")
	f.Add("1e20", "KWD")
	f.Add("0.0000001", "")
	f.Fuzz(func(t *testing.T, amount, code string) {
		a, err := decimal.NewFromString(amount)
		if err != nil || a.Abs().GreaterThan(decimal.New(1, 30)) || a.Exponent() < -40 {
			t.Skip()
		}
		s := Format(a, code)
		if strings.ContainsAny(s, "\n\t") || s == "" {
			t.Fatalf("Format(%s, %q) = %q", a, code, s)
		}
		if a.IsNegative() && !Round(a, code).IsZero() && !strings.HasPrefix(s, "-") {
			t.Fatalf("Format(%s, %q) = %q lost its sign", a, code, s)
		}
	})
}

func TestCellAndPercent(t *testing.T) {
	v := d("12345.675")
	for _, tc := range []struct{ got, want string }{
		{Cell(v, USD, true), "$12,345.68"},
		{Cell(v, USD, false), "12345.68"},
		{Cell(v, "JPY", true), "¥12,346"},
		{Cell(v, "JPY", false), "12346"},
		{CellPlaces(decimal.RequireFromString("1.006"), USD, 4, true), "$1.0060"},
		{CellPlaces(decimal.RequireFromString("1.006"), USD, 4, false), "1.0060"},
		{Percent(decimal.RequireFromString("92.25")), "92.3 %"},
		{Percent(decimal.Zero), "0.0 %"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}

func TestDecimalsAreJSONNumbers(t *testing.T) {
	b, err := json.Marshal(struct{ A decimal.Decimal }{decimal.RequireFromString("443.40")})
	if err != nil || string(b) != `{"A":443.4}` {
		t.Errorf("got %s, %v: want a number", b, err)
	}
}

// writers are every way this package writes an amount of code, with the
// decimals each keeps.
func writers(a decimal.Decimal, code string, places int32) []struct {
	name   string
	out    string
	places int32
} {
	return []struct {
		name   string
		out    string
		places int32
	}{
		{"Format", Format(a, code), Scale(code)},
		{"FormatPlaces", FormatPlaces(a, code, places), places},
		{"Plain", Plain(a, code), Scale(code)},
		{"Cell tty", Cell(a, code, true), Scale(code)},
		{"Cell pipe", Cell(a, code, false), Scale(code)},
		{"CellPlaces tty", CellPlaces(a, code, places, true), places},
		{"CellPlaces pipe", CellPlaces(a, code, places, false), places},
		{"Inline tty", Inline(a, code, true), Scale(code)},
		{"Inline pipe", Inline(a, code, false), Scale(code)},
		{"Inline tty /month", Inline(a, code, true) + "/month", Scale(code)},
		{"hourly tty", FormatPlaces(a, code, places) + "/h", places},
	}
}

// FuzzAmountRoundTrip: every money string the package writes, for every
// currency, reads back (ParseAmount) as the amount rounded to the decimals
// it shows, half away from zero: no writer loses a digit, a sign or a
// grouping, and none shows an amount other than the one it was given.
func FuzzAmountRoundTrip(f *testing.F) {
	f.Add("1234.5", "USD", uint8(2))
	f.Add("-0.005", "JPY", uint8(0))
	f.Add("-1234567.891", "KWD", uint8(4))
	f.Add("0.00004999", "EUR", uint8(4))
	f.Add("999999.995", "CHF", uint8(2))
	f.Add("-0.4", "", uint8(0))
	f.Fuzz(func(t *testing.T, amount, code string, places uint8) {
		a, err := decimal.NewFromString(amount)
		if err != nil || a.Abs().GreaterThan(decimal.New(1, 17)) || a.Exponent() < -20 {
			t.Skip()
		}
		if _, err := Parse(code); err != nil && code != "" {
			t.Skip()
		}
		p := int32(places % 7)
		for _, w := range writers(a, code, p) {
			got, err := ParseAmount(w.out, code)
			if err != nil {
				t.Fatalf("%s(%s, %q) = %q does not read back: %v", w.name, a, code, w.out, err)
			}
			if want := a.Round(w.places); !got.Equal(want) {
				t.Fatalf("%s(%s, %q) = %q reads back as %s, want %s", w.name, a, code, w.out, got, want)
			}
		}
		pct := PercentFloat(a.InexactFloat64())
		if got, err := ParsePercent(pct); err != nil || got.Sub(a).Abs().GreaterThan(decimal.RequireFromString("0.05").Add(a.Abs().Mul(decimal.New(1, -12)))) {
			t.Fatalf("PercentFloat(%s) = %q reads back as %s, %v", a, pct, got, err)
		}
	})
}

func TestParseAmountRefuses(t *testing.T) {
	for _, s := range []string{"", "$", "$1,2345.00", "$12,34.00", "1,234.00", "12 EUR", "1e3", "--1", "$ 1", "abc", "1.2.3"} {
		if d, err := ParseAmount(s, USD); err == nil {
			t.Errorf("ParseAmount(%q) = %s, want an error", s, d)
		}
	}
	for _, s := range []string{"12.5", "12.5%", "12.5  %", "%"} {
		if _, err := ParsePercent(s); err == nil {
			t.Errorf("ParsePercent(%q): no error", s)
		}
	}
}
