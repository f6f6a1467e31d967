package governance

import (
	"strings"
	"testing"
)

// foldReference is fold spelt plainly: trim, lower-case, drop '-', '_' and
// spaces. fold's fast path for already-folded text must agree with it.
func foldReference(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(s)) {
		if r == '-' || r == '_' || r == ' ' {
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func FuzzFold(f *testing.F) {
	for _, s := range []string{"", "team", "Team", " cost-center ", "Workload_Type", "fine tuning", "ÉQUIPE", "ｔｅａｍ", "\tx\n", "İ", "a\xffb"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := fold(s), foldReference(s); got != want {
			t.Fatalf("fold(%q) = %q, want %q", s, got, want)
		}
	})
}
