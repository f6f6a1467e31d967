package billing

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/fleet"
)

// Row is one FOCUS charge with the columns the aggregation reads. Null
// cells (empty or the literal NULL) are empty strings, zero amounts and
// HasConsumed false.
type Row struct {
	ProviderName      string
	ResourceID        string
	ResourceType      string
	Region            string
	Account           string
	Currency          string
	ChargeCategory    string
	ChargeDescription string
	ServiceCategory   string
	PricingCategory   string
	Billed            decimal.Decimal
	Effective         decimal.Decimal
	List              decimal.Decimal
	Contracted        decimal.Decimal
	Start, End        time.Time
	Consumed          decimal.Decimal
	HasConsumed       bool
	ConsumedUnit      string
	CommitmentID      string
	CommitmentStatus  string
	CommitmentType    string
	CapacityID        string
	CapacityStatus    string
	// InstanceType is SkuPriceDetails.InstanceType or x_InstanceType.
	InstanceType string
	// GPUCount is SkuPriceDetails.GpuCount; 0 when absent.
	GPUCount float64
	// Version is the row's x_FocusVersion, when the export has one.
	Version string
	// Count is how many export rows this one sums (a warehouse's
	// aggregate); 0 is one.
	Count int64
}

// ColumnError is a bad cell: its column and what is wrong.
type ColumnError struct {
	Column string
	Err    error
}

func (e *ColumnError) Error() string { return "column " + e.Column + ": " + e.Err.Error() }
func (e *ColumnError) Unwrap() error { return e.Err }

// isNull reports whether a cell holds no value: empty or the literal NULL.
func isNull(v string) bool {
	v = strings.TrimSpace(v)
	return v == "" || strings.EqualFold(v, "null")
}

// cell is the value of column c, "" when the column is absent or null.
func (s *schema) cell(rec []string, c string) string {
	i, ok := s.idx[c]
	if !ok || i >= len(rec) {
		return ""
	}
	v := strings.TrimSpace(rec[i])
	if isNull(v) {
		return ""
	}
	return v
}

// parseRow turns one record into a Row; errors are *ColumnError.
func (s *schema) parseRow(rec []string) (Row, error) {
	r := Row{
		ProviderName:      s.cell(rec, colProviderName),
		ResourceID:        s.cell(rec, colResourceID),
		ResourceType:      s.cell(rec, colResourceType),
		Region:            s.cell(rec, colRegionID),
		Account:           s.cell(rec, colSubAccountID),
		Currency:          s.cell(rec, colBillingCurrency),
		ChargeCategory:    s.cell(rec, colChargeCategory),
		ChargeDescription: s.cell(rec, colChargeDescription),
		ServiceCategory:   s.cell(rec, colServiceCategory),
		PricingCategory:   s.cell(rec, colPricingCategory),
		ConsumedUnit:      s.cell(rec, colConsumedUnit),
		CommitmentID:      s.cell(rec, colCommitmentID),
		CommitmentStatus:  s.cell(rec, colCommitmentStatus),
		CommitmentType:    s.cell(rec, colCommitmentType),
		CapacityID:        s.cell(rec, colCapacityResID),
		CapacityStatus:    s.cell(rec, colCapacityResStatus),
		InstanceType:      s.cell(rec, colInstanceType),
		Version:           s.cell(rec, colFocusVersion),
	}
	if p := s.cell(rec, colServiceProviderName); p != "" {
		r.ProviderName = p
	}
	var err error
	for _, m := range []struct {
		col string
		dst *decimal.Decimal
	}{{colBilledCost, &r.Billed}, {colEffectiveCost, &r.Effective}, {colListCost, &r.List}, {colContractedCost, &r.Contracted}} {
		if *m.dst, _, err = amount(s.cell(rec, m.col)); err != nil {
			return r, &ColumnError{m.col, err}
		}
	}
	if r.Consumed, r.HasConsumed, err = number(s.cell(rec, colConsumedQuantity)); err != nil {
		return r, &ColumnError{colConsumedQuantity, err}
	}
	v := s.cell(rec, colChargePeriodStart)
	if v == "" {
		return r, &ColumnError{colChargePeriodStart, errors.New("empty: every charge has a start")}
	}
	if r.Start, err = timestamp(v); err != nil {
		return r, &ColumnError{colChargePeriodStart, err}
	}
	if v := s.cell(rec, colChargePeriodEnd); v != "" {
		if r.End, err = timestamp(v); err != nil {
			return r, &ColumnError{colChargePeriodEnd, err}
		}
	}
	if v := s.cell(rec, colSkuPriceDetails); v != "" {
		t, gpus, err := skuDetails(v)
		if err != nil {
			return r, &ColumnError{colSkuPriceDetails, err}
		}
		if t != "" {
			r.InstanceType = t
		}
		r.GPUCount = gpus
	}
	if r.Version != "" && !known(r.Version) {
		return r, &ColumnError{colFocusVersion, fmt.Errorf("unknown FOCUS version %q (known: %s)", r.Version, strings.Join(Versions, ", "))}
	}
	return r, nil
}

func known(v string) bool {
	for _, k := range Versions {
		if v == k || v == "v"+k {
			return true
		}
	}
	return false
}

// The largest magnitudes a cell may hold: an amount (a cost, in the
// export's currency: beyond any one charge in any currency) and a quantity
// or count. Past them the cell is a corrupt export, not a charge.
var (
	maxAmount   = decimal.New(1, 15)
	maxQuantity = decimal.New(1, 18)
)

// number parses a decimal quantity cell of at most maxQuantity; "" is a
// null (zero, false).
func number(v string) (decimal.Decimal, bool, error) {
	return bounded(v, maxQuantity)
}

// amount parses a cost cell of at most maxAmount; "" is a null.
func amount(v string) (decimal.Decimal, bool, error) {
	return bounded(v, maxAmount)
}

func bounded(v string, limit decimal.Decimal) (decimal.Decimal, bool, error) {
	if v == "" {
		return decimal.Zero, false, nil
	}
	d, err := decimal.NewFromString(v)
	if err != nil {
		return decimal.Zero, false, fmt.Errorf("%q is not a number", clip(v))
	}
	if d.Abs().GreaterThan(limit) {
		return decimal.Zero, false, fmt.Errorf("%q is beyond ±%s: not a plausible value", clip(v), limit.String())
	}
	return d, true, nil
}

var timeLayouts = []string{
	time.RFC3339Nano,
	"2006-01-02T15:04:05",
	"2006-01-02 15:04:05",
	"2006-01-02 15:04:05Z07:00",
	"2006-01-02 15:04:05.999999999",
	"2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02 15:04:05 MST",
	"2006-01-02T15:04Z",
	"2006-01-02",
}

// timestamp parses the date-times FOCUS exports write; without a zone, UTC.
func timestamp(v string) (time.Time, error) {
	for _, l := range timeLayouts {
		if t, err := time.Parse(l, v); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, fmt.Errorf("%q is not a date-time (want RFC 3339 or YYYY-MM-DD hh:mm:ss, UTC)", clip(v))
}

// skuDetails reads InstanceType and GpuCount from SkuPriceDetails' JSON.
func skuDetails(v string) (instanceType string, gpus float64, err error) {
	var m map[string]any
	if err := json.Unmarshal([]byte(v), &m); err != nil {
		return "", 0, fmt.Errorf("%q is not a JSON object", clip(v))
	}
	if s, ok := m["InstanceType"].(string); ok {
		instanceType = strings.TrimSpace(s)
	}
	switch g := m["GpuCount"].(type) {
	case float64:
		gpus = g
	case string:
		d, ok, err := number(strings.TrimSpace(g))
		if err != nil || !ok {
			return "", 0, fmt.Errorf("GpuCount %q is not a number", clip(g))
		}
		gpus = d.InexactFloat64()
	}
	if gpus < 0 {
		return "", 0, fmt.Errorf("GpuCount %v is negative", gpus)
	}
	if gpus > fleet.MaxGPUsPerInstance {
		return "", 0, fmt.Errorf("GpuCount %v is above %v, the most GPUs an instance has", gpus, fleet.MaxGPUsPerInstance)
	}
	return instanceType, gpus, nil
}

// clip shortens a value quoted in an error.
func clip(v string) string {
	if len(v) > 60 {
		return v[:60] + "…"
	}
	return v
}

// hourly reports whether a consumed unit counts hours.
func hourly(unit string) bool {
	u := strings.ToLower(strings.TrimSpace(unit))
	return u == "hours" || u == "hour" || u == "hrs" || u == "hr" || u == "h" || u == "1 hour" || u == "instance-hours"
}
