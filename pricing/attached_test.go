package pricing

import (
	"math"
	"strings"
	"testing"
)

func TestAttachedTypeName(t *testing.T) {
	if got := AttachedTypeName("n1-standard-8", "T4", 2); got != "n1-standard-8+2xT4" {
		t.Errorf("AttachedTypeName = %q", got)
	}
	for _, bad := range []string{"", "n1-standard-8", "+2xT4", "n1-standard-8+", "n1-standard-8+2x", "n1-standard-8+xT4",
		"n1-standard-8+0xT4", "n1-standard-8+-1xT4", "n1-standard-8+NaNxT4", "n1-standard-8+Infx T4", "n1-standard-8+1e9xT4"} {
		if m, g, n, ok := ParseAttachedTypeName(bad); ok {
			t.Errorf("ParseAttachedTypeName(%q) = %q, %q, %v; want not ok", bad, m, g, n)
		}
	}
}

// FuzzAttachedTypeName: a name that parses is made again, unchanged in
// meaning, by AttachedTypeName, and its count is a sane positive number;
// nothing panics.
func FuzzAttachedTypeName(f *testing.F) {
	for _, s := range []string{"n1-standard-8+2xT4", "n1-highmem-96+8xV100", "n1-standard-4+0.5xP4", "a+1xMI300X", "x+1xx", "n1+2x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		m, g, n, ok := ParseAttachedTypeName(name)
		if !ok {
			return
		}
		if m == "" || g == "" || !(n > 0) || n > 1024 || math.IsNaN(n) || math.IsInf(n, 0) {
			t.Fatalf("ParseAttachedTypeName(%q) = %q, %q, %v", name, m, g, n)
		}
		m2, g2, n2, ok := ParseAttachedTypeName(AttachedTypeName(m, g, n))
		if !ok || m2 != m || g2 != g || n2 != n {
			t.Fatalf("round trip of %q: %q %q %v -> %q %q %v %v", name, m, g, n, m2, g2, n2, ok)
		}
		if strings.Contains(m, "+") {
			t.Fatalf("machine type %q holds a +", m)
		}
	})
}
