package cmdutil

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/config"
	"github.com/gpufinops/gpufinops/pkg/recommend"
)

// CheckFloatFlag refuses a number flag that is NaN, ±Inf or outside lo–hi
// (Go's ParseFloat, and so pflag, accepts "NaN", "Inf" and "+Infinity").
// name is the flag as written, e.g. "--idle-threshold"; unit ends the
// message ("%", "GiB"), empty for none.
func CheckFloatFlag(name string, v, lo, hi float64, unit string) error {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return FlagErrorf("%s: %v is not a finite number; want %s", name, v, between(lo, hi, unit))
	}
	if v < lo || v > hi {
		return FlagErrorf("%s: %v is outside %s", name, v, between(lo, hi, unit))
	}
	return nil
}

// CheckIntFlag refuses a whole-number flag outside lo–hi.
func CheckIntFlag(name string, v, lo, hi int, unit string) error {
	if v < lo || v > hi {
		return FlagErrorf("%s: %d is outside %s", name, v, between(float64(lo), float64(hi), unit))
	}
	return nil
}

func between(lo, hi float64, unit string) string {
	s := fmt.Sprintf("%v–%v", lo, hi)
	if unit != "" {
		s += " " + unit
	}
	return s
}

// ParseExchangeRate reads an exchange rate (units of currency one USD buys)
// given as text by a flag or an environment variable: a decimal number
// within config.MinExchangeRate–config.MaxExchangeRate. NaN, Inf, zero,
// negative numbers and exponents beyond the range are refused.
func ParseExchangeRate(s, currency string) (decimal.Decimal, error) {
	t := strings.TrimSpace(s)
	d, err := decimal.NewFromString(t)
	if err != nil || !d.IsPositive() {
		return decimal.Decimal{}, fmt.Errorf("%q is not a number above zero (units of %s per USD)", s, currency)
	}
	lo, hi := decimal.NewFromFloat(config.MinExchangeRate), decimal.NewFromFloat(config.MaxExchangeRate)
	if d.LessThan(lo) || d.GreaterThan(hi) {
		return decimal.Decimal{}, fmt.Errorf("%q is outside %s–%s (units of %s per USD)", s, lo, hi, currency)
	}
	return d, nil
}

// ValidatePolicy checks a policy after a command laid its flags over the
// configuration's. flags maps the config keys the command's flags set (only
// those given) to the flag names, e.g. "policy.idle.gpu_percent" →
// "--idle-threshold". A bad value a flag set is a FlagError naming the flag;
// any other an InputError naming the key and where it was set.
func ValidatePolicy(cfg *config.Config, p recommend.Policy, flags map[string]string) error {
	err := p.Validate()
	if err == nil {
		return nil
	}
	var pe *recommend.PolicyError
	if !errors.As(err, &pe) {
		return &InputError{Err: err}
	}
	if flag, ok := flags[pe.Key]; ok {
		return FlagErrorf("%s: %s", flag, pe.Msg)
	}
	source := "default"
	if cfg != nil {
		source = cfg.Source(pe.Key)
	}
	return &InputError{Err: &config.KeyError{Key: pe.Key, Source: source, Msg: pe.Msg}}
}
