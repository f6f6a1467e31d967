package suggest

import (
	"slices"
	"testing"
)

func TestFor(t *testing.T) {
	metrics := []string{"savings", "savings-percent", "current-cost", "untagged-spend", "idle-gpus", "recommendations", "warnings"}
	tests := []struct {
		in    string
		cands []string
		want  []string
	}{
		{"savngs", metrics, []string{"savings"}},
		{"warning", metrics, []string{"warnings"}},
		{"idle-gpu", metrics, []string{"idle-gpus"}},
		{"SAVINGS-PRECENT", metrics, []string{"savings-percent"}},
		{"rec", metrics, []string{"recommendations"}},
		{"savings", metrics, nil},
		{"zzzzzz", metrics, nil},
		{"", metrics, nil},
		{"anlyze", []string{"analyze", "diff", "inventory"}, []string{"analyze"}},
		{"ax", []string{"a", "b", "abc"}, []string{"a"}},
		{"p4d.24xlarg", []string{"p4d.24xlarge", "p4de.24xlarge", "p5.48xlarge", "g5.xlarge"}, []string{"p4d.24xlarge"}},
		{"p4d.24xlarg", []string{"p4de.24xlarge", "p5.48xlarge"}, []string{"p4de.24xlarge"}},
		{"polcy", []string{"policy", "pricing", "report"}, []string{"policy"}},
	}
	for _, tt := range tests {
		if got := For(tt.in, tt.cands); !slices.Equal(got, tt.want) {
			t.Errorf("For(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestForKeepsAtMostMax(t *testing.T) {
	got := For("ab", []string{"aa", "ab1", "ac", "ad", "ae"}) // all at distance 1
	if len(got) != Max {
		t.Errorf("got %q, want %d", got, Max)
	}
}

func TestPhrase(t *testing.T) {
	if got := Phrase("savngs", []string{"savings"}, Quoted); got != `; did you mean "savings"?` {
		t.Errorf("got %q", got)
	}
	if got := Phrase("g5.xlarg", []string{"g5.xlarge", "g6.xlarge", "g5.xlarge"}, Quoted); got != `; did you mean "g5.xlarge"?` {
		t.Errorf("got %q", got)
	}
	if got := Phrase("g.xlarge", []string{"g5.xlarge", "g6.xlarge"}, Quoted); got != `; did you mean "g5.xlarge" or "g6.xlarge"?` {
		t.Errorf("got %q", got)
	}
	if got := Phrase("x", nil, Quoted); got != "" {
		t.Errorf("got %q", got)
	}
}

func TestDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		d    int
	}{{"", "", 0}, {"a", "", 1}, {"abc", "acb", 1}, {"kitten", "sitting", 3}, {"héllo", "hello", 1}} {
		if got := distance(c.a, c.b); got != c.d {
			t.Errorf("distance(%q, %q) = %d, want %d", c.a, c.b, got, c.d)
		}
	}
}
