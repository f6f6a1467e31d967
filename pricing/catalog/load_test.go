package catalog

import "testing"

// TestCatalogNumbersAreFinite: a catalog cell of NaN or an infinity, which
// strconv.ParseFloat takes, is refused like any other non-number.
func TestCatalogNumbersAreFinite(t *testing.T) {
	for _, s := range []string{"NaN", "nan", "Inf", "+Inf", "-Infinity", "1e400"} {
		if v, err := finiteFloat(s); err == nil {
			t.Errorf("finiteFloat(%q) = %v", s, v)
		}
		if v, err := optFloatPtr(s); err == nil {
			t.Errorf("optFloatPtr(%q) = %v", s, *v)
		}
	}
	if v, err := finiteFloat("80.5"); err != nil || v != 80.5 {
		t.Errorf("finiteFloat(80.5) = %v, %v", v, err)
	}
}
