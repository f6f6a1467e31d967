package money

import (
	"fmt"
	"strings"

	"github.com/shopspring/decimal"
)

// ParseAmount reads back an amount as this package writes it for code, in
// any form: Format's "-$12,345.67", Plain's "12345.67", Inline's
// "12345.67 USD", with "/h", "/month" or " a month" after it. Tests use it
// to check that what a printer shows is the amount it was given.
func ParseAmount(s, code string) (decimal.Decimal, error) {
	in := s
	for _, suffix := range []string{" a month", "/month", "/h", " " + cmpCode(code)} {
		s = strings.TrimSuffix(s, suffix)
	}
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	if sym := Symbol(code) + separator(code); strings.HasPrefix(s, sym) {
		s = strings.TrimPrefix(s, sym)
		if err := checkGrouping(s); err != nil {
			return decimal.Decimal{}, fmt.Errorf("%q: %v", in, err)
		}
		s = strings.ReplaceAll(s, ",", "")
	}
	if s == "" || strings.ContainsAny(s, "eE+- ") {
		return decimal.Decimal{}, fmt.Errorf("%q is not an amount of %s", in, code)
	}
	d, err := decimal.NewFromString(s)
	if err != nil {
		return decimal.Decimal{}, fmt.Errorf("%q is not an amount of %s", in, code)
	}
	if neg {
		d = d.Neg()
	}
	return d, nil
}

func cmpCode(code string) string {
	if code == "" {
		return USD
	}
	return code
}

// checkGrouping requires commas every three digits of the whole part.
func checkGrouping(s string) error {
	whole, _, _ := strings.Cut(s, ".")
	groups := strings.Split(whole, ",")
	for i, g := range groups {
		if (i == 0 && (len(g) == 0 || len(g) > 3)) || (i > 0 && len(g) != 3) {
			return fmt.Errorf("digits grouped wrong")
		}
	}
	return nil
}

// ParsePercent reads back a percentage as Percent and PercentFloat write it:
// "12.5 %".
func ParsePercent(s string) (decimal.Decimal, error) {
	n, ok := strings.CutSuffix(s, " %")
	if !ok {
		return decimal.Decimal{}, fmt.Errorf("%q is not a percentage (want one decimal and \" %%\")", s)
	}
	return decimal.NewFromString(n)
}
