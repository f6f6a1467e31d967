package protect

import (
	"strings"
	"testing"
	"unicode"
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
	})
}
