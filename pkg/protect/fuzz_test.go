package protect

import (
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/gpufinops/gpufinops/pkg/fleet"
)

// FuzzClassify: whatever the tag, the normaliser gives lower-case words of
// letters and digits; the classification does not depend on how the key is
// spelt (camelCase, '-', '_', '.', ':', '/' or spaces); a key that reads as
// an exemption protects unless its value is false; an auto-stop switch
// protects unless its value is true.
func FuzzClassify(f *testing.F) {
	f.Add("DoNotStop", "true")
	f.Add("keep-running", "yes")
	f.Add("auto-shutdown", "disabled")
	f.Add("auto-stop", "maybe")
	f.Add("Deployment.Environment", "prod-eu")
	f.Add("role", "serving")
	f.Add("İstanbul", "x")
	f.Add("gpufinops-ignore", "true")
	f.Add("GpuFinOps", "skip")
	f.Add("workspace", "prod")
	f.Add("Criticality", "Mission-Critical")
	f.Fuzz(func(t *testing.T, k, v string) {
		for _, tok := range Tokens(k) {
			if tok == "" || tok != strings.ToLower(tok) {
				t.Fatalf("Tokens(%q): word %q is empty or not lower case", k, tok)
			}
			for _, r := range tok {
				if !unicode.IsLetter(r) && !unicode.IsDigit(r) && !unicode.IsMark(r) {
					t.Fatalf("Tokens(%q): word %q holds %q", k, tok, r)
				}
			}
		}
		p := policy()
		got := Tags(map[string]string{k: v}, p)
		if fk := Fold(k); fk != "" && strings.TrimSpace(k) != "" {
			again := Tags(map[string]string{fk: v}, p)
			if (got == nil) != (again == nil) || got != nil && got.Reason != again.Reason {
				t.Fatalf("%q=%q gives %+v, spelt %q gives %+v", k, v, got, fk, again)
			}
		}
		pe := p.effective()
		kt := Tokens(k)
		exempt := firstPhrase(kt, pe.Rules.ExemptPhrases) != ""
		if exempt && !IsFalseValue(v) && got == nil {
			t.Fatalf("%q=%q: an exemption key with a value not false is not protected", k, v)
		}
		if !exempt && firstPhrase(kt, pe.Rules.SwitchPhrases) != "" && !IsTrueValue(v) && got == nil {
			t.Fatalf("%q=%q: an auto-stop switch not true is not protected", k, v)
		}
		if hasPhrase(kt, toolName) && anyWord(kt, optOutKeyWords) && !IsFalseValue(v) && got == nil {
			t.Fatalf("%q=%q: a gpufinops opt-out key not false is not protected", k, v)
		}
		if slices.Contains(strongProd, FoldValue(v)) && got == nil {
			t.Fatalf("%q=%q: a production value is not protected", k, v)
		}
	})
}

// FuzzPlacementGroups: whatever the names, a machine's placement names
// (trimmed, blank ones dropped) are among its groups, and an idle machine
// is kept by a working peer exactly when they share a name (trimmed,
// case-folded) in the same provider, account and region.
func FuzzPlacementGroups(f *testing.F) {
	f.Add("hpc-cluster", "HPC-Cluster", "111", "111")
	f.Add(" pg ", "pg", "a", "b")
	f.Add("/subscriptions/s/resourceGroups/rg/providers/Microsoft.Compute/proximityPlacementGroups/p", "/subscriptions/s/resourcegroups/rg/providers/microsoft.compute/proximityplacementgroups/p", "s", "S")
	f.Add("", "", "p", "p")
	f.Add("projects/p/regions/r/resourcePolicies/x\x00y", "projects/p/regions/r/resourcePolicies/x", "p", "p")
	f.Fuzz(func(t *testing.T, a, b, accA, accB string) {
		p := policy()
		idle := &fleet.Instance{ID: "idle", Provider: fleet.GCP, Account: accA, Region: "r", PlacementGroups: []string{a}}
		busy := &fleet.Instance{ID: "busy", Provider: fleet.GCP, Account: accB, Region: "r", PlacementGroups: []string{b}}
		ta := strings.TrimSpace(a)
		if gs := GroupsOf(idle, p); (ta != "") != slices.Contains(gs, placementKey+ta) {
			t.Fatalf("%q: groups %q", a, gs)
		}
		g := NewPeers([]*fleet.Instance{idle, busy}, func(i int) bool { return i == 1 }, p)
		want := ta != "" && strings.ToLower(ta) == strings.ToLower(strings.TrimSpace(b)) && strings.ToLower(accA) == strings.ToLower(accB)
		if got := g.Check(0) != nil; got != want {
			t.Fatalf("%q (account %q) beside busy %q (account %q): kept %v, want %v", a, accA, b, accB, got, want)
		}
		if g.Check(1) != nil {
			t.Fatal("the working machine is kept by its idle peer")
		}
	})
}
