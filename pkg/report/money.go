package report

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/shopspring/decimal"
)

// Money is a monthly amount in the report's currency (USD unless converted)
// held to the cent. In JSON it is a number token with exactly two decimals:
// 1234.5 is written 1234.50.
type Money struct {
	d decimal.Decimal
	// cur is the currency code for printing; "" is USD (see Convert).
	cur string
}

// NewMoney rounds d to cents, half away from zero.
func NewMoney(d decimal.Decimal) Money { return Money{d: d.Round(2)} }

// Decimal returns the amount.
func (m Money) Decimal() decimal.Decimal { return m.d }

// String is the amount with two decimals and no currency sign, e.g. "-1234.50".
func (m Money) String() string { return m.d.StringFixed(2) }

// MarshalJSON writes the amount as an unquoted number with two decimals.
func (m Money) MarshalJSON() ([]byte, error) { return []byte(m.String()), nil }

// UnmarshalJSON reads a number token and rounds it to cents.
func (m *Money) UnmarshalJSON(b []byte) error {
	d, err := parseNumber(b)
	if err != nil {
		return err
	}
	if d != nil {
		*m = NewMoney(*d)
	}
	return nil
}

// Number is a decimal at full precision, such as an hourly price or a
// percentage. In JSON it is an unquoted number token.
type Number struct{ d decimal.Decimal }

// NewNumber wraps d without rounding.
func NewNumber(d decimal.Decimal) Number { return Number{d} }

// Decimal returns the value.
func (n Number) Decimal() decimal.Decimal { return n.d }

// String is the value in plain notation, e.g. "5.672".
func (n Number) String() string { return n.d.String() }

// MarshalJSON writes the value as an unquoted number.
func (n Number) MarshalJSON() ([]byte, error) { return []byte(n.d.String()), nil }

// UnmarshalJSON reads a number token.
func (n *Number) UnmarshalJSON(b []byte) error {
	d, err := parseNumber(b)
	if err != nil {
		return err
	}
	if d != nil {
		*n = Number{*d}
	}
	return nil
}

// parseNumber reads a JSON number token; null gives nil. Quoted numbers are
// rejected: the report writes money as numbers, and a string means the file
// was not written by gpufinops.
func parseNumber(b []byte) (*decimal.Decimal, error) {
	b = bytes.TrimSpace(b)
	if string(b) == "null" {
		return nil, nil
	}
	if len(b) == 0 || (b[0] != '-' && (b[0] < '0' || b[0] > '9')) {
		return nil, fmt.Errorf("expected a number, got %s", truncate(string(b), 20))
	}
	d, err := decimal.NewFromString(string(b))
	if err != nil {
		return nil, fmt.Errorf("expected a number, got %s", truncate(string(b), 20))
	}
	return &d, nil
}

// formatMoney renders an amount for people or for pipes: on a terminal
// "$12,345.67" (negative "-$12,345.67"; "€12,345.67" in a report converted
// to EUR), elsewhere the plain "12345.67".
func formatMoney(m Money, tty bool) string {
	if !tty {
		return m.String()
	}
	return GroupDigits(m.String(), currencyPrefix(m.cur))
}

// Currency is the amount's currency code, e.g. "USD".
func (m Money) Currency() string { return currencyCodeOf(m.cur) }

// GroupDigits puts thousands separators into the whole part of a plain
// decimal string and prefix (a currency sign, or "") after its minus sign:
// GroupDigits("-1234.5", "$") is "-$1,234.5".
func GroupDigits(s, prefix string) string {
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	whole, frac, hasFrac := strings.Cut(s, ".")
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	b.WriteString(prefix)
	for i, c := range whole {
		if i > 0 && (len(whole)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if hasFrac {
		b.WriteByte('.')
		b.WriteString(frac)
	}
	return b.String()
}

// truncate shortens s to at most n runes, ending in "…" when cut.
func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	if n <= 1 {
		return string(r[:n])
	}
	return strings.TrimRight(string(r[:n-1]), " ") + "…"
}

// truncateLeft shortens s to at most n runes, keeping the end (the
// distinctive part of a long cloud resource ID) behind a leading "…".
func truncateLeft(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	if n <= 1 {
		return string(r[len(r)-n:])
	}
	return "…" + strings.TrimLeft(string(r[len(r)-n+1:]), " ")
}
