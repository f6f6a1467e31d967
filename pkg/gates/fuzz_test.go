package gates

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzParse: Parse never panics; an error is a ParseError whose column lies
// inside the value (or just after it); every gate accepted prints (String)
// to an expression that parses back to the same gate.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"savings>5000", "idle-gpus>0", "savings:spot>1000&&confidence=high", "savings>5000,idle-gpus>0",
		"savings-percent>=12.5&&provider=aws", "current-cost<=100000&&provider!=gcp", "warnings>0",
		"recommendations>3&&kind=idle-stop&&confidence>=medium", "untagged-spend>0.01", " savings > 5000 ",
		"savings>", ">5", "savings", "savings>>5", "savings>1e3", "savings>NaN", "savings>Inf", "savings>-0",
		"savings>" + strings.Repeat("9", 40), "savings-percent>101", "idle-gpus>-1", "savings:>1", "savings:nope>1",
		"confidence=high", "kind=spot&&savings>1", ",", "a,,b", "&&", "savings>1&&", "savings>1,", "provider=aws&&current-cost>1",
		"savings>1&&confidence=ultra", "savings>.5", "savings>5.", "savings>+5", "é>1", "savings>1\n", "savings\u00a0>1",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		gs, err := Parse([]string{s})
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("%q: error %v is not a ParseError", s, err)
			}
			if pe.Column < 1 || pe.Column > utf8.RuneCountInString(s)+1 {
				t.Fatalf("%q: column %d outside the value", s, pe.Column)
			}
			return
		}
		if len(gs) == 0 {
			t.Fatalf("%q: no gates and no error", s)
		}
		for _, g := range gs {
			text := g.String()
			again, err := Parse([]string{text})
			if err != nil {
				t.Fatalf("%q: gate %q does not parse back: %v", s, text, err)
			}
			if len(again) != 1 {
				t.Fatalf("%q: %q parses to %d gates", s, text, len(again))
			}
			if !sameGate(g, again[0]) {
				t.Fatalf("%q: %q parses to %+v, want %+v", s, text, again[0], g)
			}
			if again[0].String() != text {
				t.Fatalf("%q: String is not stable: %q then %q", s, text, again[0].String())
			}
		}
	})
}

func sameGate(a, b Gate) bool {
	if len(a.Comparisons) != len(b.Comparisons) || len(a.Filters) != len(b.Filters) {
		return false
	}
	for i := range a.Comparisons {
		x, y := a.Comparisons[i], b.Comparisons[i]
		if x.Metric != y.Metric || x.Kind != y.Kind || x.Op != y.Op || !x.Value.Equal(y.Value) {
			return false
		}
	}
	for i := range a.Filters {
		if a.Filters[i] != b.Filters[i] {
			return false
		}
	}
	return true
}

func TestParseBounds(t *testing.T) {
	for _, tc := range []struct{ expr, want string }{
		{"savings>" + strings.Repeat("9", 40), "out of range"},
		{"savings>1000000000000001", "out of range"},
		{"savings>-1000000000000001", "out of range"},
		{"savings-percent>100.1", "percentage 0–100"},
		{"savings-percent>-1", "percentage 0–100"},
		{"idle-gpus>-1", "a count (0 or more)"},
		{"warnings>=-0.5", "a count (0 or more)"},
		{"recommendations>-3", "a count (0 or more)"},
		{"savings>NaN", "expected a number"},
		{"savings>nan", "expected a number"},
		{"savings>Inf", "expected a number"},
		{"savings>+Infinity", "expected a number"},
		{"savings>1e309", "expected a number"},
	} {
		_, err := Parse([]string{tc.expr})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %q", tc.expr, err, tc.want)
		}
	}
	for _, ok := range []string{"savings>1000000000000000", "savings-percent>=100", "savings-percent>0", "idle-gpus>0.5", "savings>-5"} {
		if _, err := Parse([]string{ok}); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
}
