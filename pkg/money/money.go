// Package money is the one place gpufinops writes amounts of money for
// people and for pipes: the currency's symbol, thousands grouping and minor
// units (USD and EUR two, JPY none, KWD three), all from the Unicode CLDR
// data in golang.org/x/text/currency. Every command and printer formats
// money through it. It also adds, multiplies, divides and rounds amounts
// with decimal's exact results, without big.Int where they fit (arith.go),
// for the engine's millions of them.
package money

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"unicode"

	"github.com/shopspring/decimal"
	"golang.org/x/text/currency"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
	"golang.org/x/text/number"
)

// USD is the currency of every catalog price and of unconverted reports.
const USD = "USD"

// printer renders symbols and grouped digits. Reports are English, so its
// grouping (",") and decimal mark (".") are English too.
var printer = message.NewPrinter(language.English)

// Parse upper-cases code and checks that it is an ISO 4217 currency.
func Parse(code string) (string, error) {
	c := strings.ToUpper(strings.TrimSpace(code))
	if len(c) != 3 {
		return "", fmt.Errorf("%q is not a currency code (three letters, e.g. EUR)", code)
	}
	u, err := currency.ParseISO(c)
	if err != nil {
		return "", fmt.Errorf("%q is not an ISO 4217 currency code (e.g. EUR, GBP, JPY)", code)
	}
	return u.String(), nil
}

// unit is code's currency; "" and codes x/text does not know are USD's
// rules (two minor units) under their own code.
func unit(code string) (currency.Unit, bool) {
	if code == "" {
		return currency.USD, true
	}
	u, err := currency.ParseISO(code)
	return u, err == nil
}

// Scale is code's number of minor units: 2 for USD and EUR, 0 for JPY, 3
// for KWD. An empty code is USD; an unknown one has 2.
func Scale(code string) int32 {
	u, ok := unit(code)
	if !ok {
		return 2
	}
	s, _ := currency.Standard.Rounding(u)
	return int32(s)
}

// Minor is code's smallest amount: 0.01 for USD, 1 for JPY, 0.001 for KWD.
func Minor(code string) decimal.Decimal { return decimal.New(1, -Scale(code)) }

// Round rounds d to code's minor units, half away from zero.
func Round(d decimal.Decimal, code string) decimal.Decimal { return d.Round(Scale(code)) }

// Plain is d at code's minor units with no symbol and no grouping, for
// pipes, CSV and JSON: "12345.67", "-12345.67", "1235" for JPY.
func Plain(d decimal.Decimal, code string) string { return d.StringFixed(Scale(code)) }

// Format is d for people: the currency's symbol, grouped digits and its
// minor units: "$12,345.67", "-$1,234.50", "€0.00", "¥1,235",
// "KWD 1,234.568", "CHF 99.00". An empty code is USD.
func Format(d decimal.Decimal, code string) string { return FormatPlaces(d, code, Scale(code)) }

// FormatPlaces is Format with places decimals instead of the currency's
// minor units, for hourly prices quoted finer than a cent: "$1.0060".
// A negative amount has its minus sign before the symbol.
func FormatPlaces(d decimal.Decimal, code string, places int32) string {
	g := Group(d, places)
	sign := ""
	if strings.HasPrefix(g, "-") {
		sign, g = "-", g[1:]
	}
	return sign + Symbol(code) + separator(code) + g
}

// Symbol is code's symbol as CLDR writes it in English: "$" for USD, "€",
// "£", "¥", "₹", "CA$", or the code itself where there is none ("CHF").
// A code x/text does not know is written as given when it is three
// letters, else as the generic currency sign "¤".
func Symbol(code string) string {
	if s, ok := symbols.Load(code); ok {
		return s.(string)
	}
	s := symbol(code)
	if len(code) == 3 { // bounded: at most every three-byte code
		symbols.Store(code, s)
	}
	return s
}

// symbols holds Symbol's answers by code: asking x/text's printer costs more
// than the rest of a Format, which texts of every recommendation call.
var symbols sync.Map

func symbol(code string) string {
	u, ok := unit(code)
	if !ok {
		if isCode(code) {
			return code
		}
		return "¤"
	}
	return printer.Sprint(currency.Symbol(u))
}

// isCode reports whether s is three ASCII upper-case letters.
func isCode(s string) bool {
	if len(s) != 3 {
		return false
	}
	for _, c := range []byte(s) {
		if c < 'A' || c > 'Z' {
			return false
		}
	}
	return true
}

// separator is the space between an alphabetic symbol ("CHF") and digits.
func separator(code string) string {
	s := []rune(Symbol(code))
	if len(s) > 0 && unicode.IsLetter(s[len(s)-1]) {
		return " "
	}
	return ""
}

// Group is d rounded to places decimals with its whole part grouped in
// thousands and no symbol: "-1,234,567.89".
func Group(d decimal.Decimal, places int32) string {
	s := d.Round(places).StringFixed(places)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	whole, frac, hasFrac := strings.Cut(s, ".")
	w, err := decimal.NewFromString(whole)
	out := whole
	if err == nil && w.IsInteger() && len(whole) <= 18 {
		out = printer.Sprint(number.Decimal(w.IntPart()))
	}
	if hasFrac {
		out += "." + frac
	}
	if neg {
		out = "-" + out
	}
	return out
}

// Percent is a percentage for people, with one decimal: "12.5 %". Every
// output writes percentages this one way, tables and sentences, terminal
// and pipe.
func Percent(d decimal.Decimal) string { return d.StringFixed(1) + " %" }

// PercentFloat is Percent of a float: "12.5 %", "100.0 %", never "-0.0 %".
func PercentFloat(v float64) string {
	s := strconv.FormatFloat(v, 'f', 1, 64)
	if s == "-0.0" {
		s = "0.0"
	}
	return s + " %"
}

// Decimals are written to JSON as numbers, not strings: every amount in a
// JSON document is a number a reader can compute with.
func init() { decimal.MarshalJSONWithoutQuotes = true }

// Cell is d as a table prints it: for people on a terminal (Format,
// "$12,345.67"), plain in pipes (Plain, "12345.67"). Every table writes
// money through it.
func Cell(d decimal.Decimal, code string, tty bool) string {
	return CellPlaces(d, code, Scale(code), tty)
}

// Inline is d inside a sentence: for people on a terminal (Format,
// "$12,345.67"), plain with its code in pipes ("12345.67 USD").
func Inline(d decimal.Decimal, code string, tty bool) string {
	if tty {
		return Format(d, code)
	}
	return Plain(d, code) + " " + cmpCode(code)
}

// NoData is what a table cell or a sentence shows for a figure that was not
// measured or not priced, never a zero: "no data".
const NoData = "no data"

// None is what a table cell shows for a figure that does not apply to its
// row (the saving of a machine left running): "-".
const None = "-"

// CellPlaces is Cell with places decimals, for hourly prices: "$1.0060" on
// a terminal, "1.0060" in pipes.
func CellPlaces(d decimal.Decimal, code string, places int32, tty bool) string {
	if tty {
		return FormatPlaces(d, code, places)
	}
	return d.StringFixed(places)
}
