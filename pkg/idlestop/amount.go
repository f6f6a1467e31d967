package idlestop

import "github.com/shopspring/decimal"

// Amount is a USD figure that JSON writes as a number (decimal's own
// encoding is a quoted string), so the audit log and -o json carry numbers.
type Amount struct{ decimal.Decimal }

// MarshalJSON writes the amount as an unquoted number.
func (a Amount) MarshalJSON() ([]byte, error) { return []byte(a.Decimal.String()), nil }

// UnmarshalJSON reads a number or a quoted number.
func (a *Amount) UnmarshalJSON(b []byte) error { return a.Decimal.UnmarshalJSON(b) }
