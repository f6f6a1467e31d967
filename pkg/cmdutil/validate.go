package cmdutil

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/config"
	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pkg/recommend"
	"github.com/gpufinops/gpufinops/pkg/text"
	"github.com/gpufinops/gpufinops/pricing"
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

// CheckCatalogFacts compares what a fleet file says of each instance with
// the catalog's facts about its instance type, which the fleet package
// cannot see: a gpu.count other than the type's, or samples with more
// per-GPU values than the type has GPUs, is bad input (a g5.xlarge has one
// GPU, not eight). Instances of types the catalog does not know are left
// alone. It returns one line per instance, like pricing.Complete.
func CheckCatalogFacts(fl *fleet.Fleet, cat pricing.Catalog) error {
	if fl == nil || cat == nil {
		return nil
	}
	var errs []error
	for i := range fl.Instances {
		in := &fl.Instances[i]
		t, ok := cat.InstanceType(in.Provider, pricing.TypeNameOf(cat, in))
		if !ok || t.GPUCount <= 0 {
			continue
		}
		where := fmt.Sprintf("instances[%d] (id %q)", i, in.ID)
		if in.GPU.Count != 0 && math.Abs(in.GPU.Count-t.GPUCount) > 1e-9 {
			errs = append(errs, fmt.Errorf("%s: gpu.count: %v contradicts the catalog: %s %s has %s",
				where, in.GPU.Count, in.Provider, t.Name, text.PluralNumber(t.GPUCount, "GPU")))
			continue
		}
		if err := checkSampleWidths(in, t); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", where, err))
		}
	}
	return errors.Join(errs...)
}

func checkSampleWidths(in *fleet.Instance, t pricing.InstanceType) error {
	if in.Utilization == nil {
		return nil
	}
	gpus := int(math.Ceil(t.GPUCount))
	for j, s := range in.Utilization.Samples {
		for _, f := range []struct {
			name string
			v    fleet.PerGPU
		}{{"gpu", s.GPU}, {"gpuMemory", s.GPUMemory}} {
			if len(f.v) > 1 && len(f.v) > gpus {
				return fmt.Errorf("utilization.samples[%d].%s: %d values, but %s %s has %s",
					j, f.name, len(f.v), in.Provider, t.Name, text.Plural(gpus, "GPU"))
			}
		}
	}
	return nil
}

// SanePrices drops live prices above fleet.MaxHourlyPrice an hour (a unit
// mix-up in a price list, not a machine anyone rents), so the embedded
// catalog prices those instances instead, and says so in one note per price.
func SanePrices(prices []pricing.Price) ([]pricing.Price, []string) {
	limit := decimal.NewFromInt(fleet.MaxHourlyPrice)
	kept := prices[:0:0]
	var notes []string
	for _, p := range prices {
		if p.Hourly.Exponent() > 10 || p.Hourly.GreaterThan(limit) {
			notes = append(notes, fmt.Sprintf("ignored the live %s price of %s %s in %s: %s an hour is above %s (the catalog price is used)",
				p.Option, p.Provider, p.InstanceType, p.Region, shortDecimal(p.Hourly), limit))
			continue
		}
		kept = append(kept, p)
	}
	return kept, notes
}

// shortDecimal prints d to two places, or as coefficient and exponent when
// printing it in full would take pages.
func shortDecimal(d decimal.Decimal) string {
	if d.Exponent() > 10 {
		return fmt.Sprintf("%se%d", d.Coefficient(), d.Exponent())
	}
	return d.StringFixed(2)
}
