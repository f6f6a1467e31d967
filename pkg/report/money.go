package report

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/money"
	"github.com/gpufinops/gpufinops/pricing"
)

// Money is a monthly amount in the report's currency (USD unless converted)
// held to the currency's minor units: cents for USD and EUR, whole yen, KWD
// to three decimals. In JSON it is a number token with exactly that many
// decimals: 1234.5 USD is written 1234.50, 1234 JPY 1234.
type Money struct {
	d decimal.Decimal
	// cur is the currency code for printing; "" is USD (see Convert).
	cur string
}

// NewMoney rounds d to cents, half away from zero.
func NewMoney(d decimal.Decimal) Money {
	if d.Exponent() == -2 { // in cents already: the engine's amounts are
		return Money{d: d}
	}
	return Money{d: money.RoundPlaces(d, 2)}
}

// Decimal returns the amount.
func (m Money) Decimal() decimal.Decimal { return m.d }

// NewMoneyIn rounds d to the minor units of the currency cur, an ISO 4217
// code ("" is USD), half away from zero: whole yen, cents, KWD to 0.001.
func NewMoneyIn(d decimal.Decimal, cur string) Money {
	if cur == pricing.Currency {
		cur = ""
	}
	return Money{d: money.Round(d, cur), cur: cur}
}

// String is the amount at its currency's minor units with no currency sign,
// e.g. "-1234.50" (USD) or "-1235" (JPY).
func (m Money) String() string { return money.Plain(m.d, m.cur) }

// MarshalJSON writes the amount as an unquoted number at its currency's
// minor units.
func (m Money) MarshalJSON() ([]byte, error) { return []byte(m.String()), nil }

// UnmarshalJSON reads a number token. It keeps up to four decimals (no
// currency has more minor units); Load then rounds every amount to the
// report currency's (tagCurrency).
func (m *Money) UnmarshalJSON(b []byte) error {
	d, err := parseNumber(b)
	if err != nil {
		return err
	}
	if d != nil {
		*m = Money{d: d.Round(4)}
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
// to EUR, "¥12,346" in JPY), elsewhere the plain "12345.67". The symbol,
// grouping and minor units come from pkg/money.
func formatMoney(m Money, tty bool) string {
	if !tty {
		return m.String()
	}
	return money.Format(m.d, m.cur)
}

// Format is the amount for people: "$12,345.67", "€12,345.67", "¥12,346".
func (m Money) Format() string { return money.Format(m.d, m.cur) }

// Currency is the amount's currency code, e.g. "USD".
func (m Money) Currency() string { return currencyCodeOf(m.cur) }

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
