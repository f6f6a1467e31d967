// Package billing reads FOCUS billing exports (1.0 to 1.3) from CSV, gzip
// CSV and Parquet files or folders, row by row, and aggregates their GPU
// instance charges per resource, so that memory grows with the resources of
// a bill, never its rows. It joins the aggregates to a fleet and derives the
// effective hourly rate each instance really pays.
package billing

import (
	"fmt"
	"slices"
	"strings"
)

// The FOCUS versions the reader knows.
const (
	V10 = "1.0"
	V11 = "1.1"
	V12 = "1.2"
	V13 = "1.3"
)

// Versions lists the known FOCUS versions, oldest first.
var Versions = []string{V10, V11, V12, V13}

// The FOCUS columns the reader uses.
const (
	colBilledCost          = "BilledCost"
	colEffectiveCost       = "EffectiveCost"
	colListCost            = "ListCost"
	colContractedCost      = "ContractedCost"
	colBillingCurrency     = "BillingCurrency"
	colChargeCategory      = "ChargeCategory"
	colChargeDescription   = "ChargeDescription"
	colChargePeriodStart   = "ChargePeriodStart"
	colChargePeriodEnd     = "ChargePeriodEnd"
	colCommitmentID        = "CommitmentDiscountId"
	colCommitmentStatus    = "CommitmentDiscountStatus"
	colCommitmentType      = "CommitmentDiscountType"
	colCapacityResID       = "CapacityReservationId"
	colCapacityResStatus   = "CapacityReservationStatus"
	colConsumedQuantity    = "ConsumedQuantity"
	colConsumedUnit        = "ConsumedUnit"
	colPricingCategory     = "PricingCategory"
	colProviderName        = "ProviderName"
	colServiceProviderName = "ServiceProviderName"
	colRegionID            = "RegionId"
	colResourceID          = "ResourceId"
	colResourceType        = "ResourceType"
	colServiceCategory     = "ServiceCategory"
	colSkuPriceDetails     = "SkuPriceDetails"
	colSubAccountID        = "SubAccountId"
	colInvoiceID           = "InvoiceId"
	colFocusVersion        = "x_FocusVersion"
	colInstanceType        = "x_InstanceType"
)

// required are the columns every version must have; provider is checked
// apart, as 1.3 renamed it.
var required = []string{colBilledCost, colEffectiveCost, colListCost, colChargeCategory,
	colChargePeriodStart, colResourceID}

// used are the columns read when present.
var used = []string{colBilledCost, colEffectiveCost, colListCost, colContractedCost, colBillingCurrency,
	colChargeCategory, colChargeDescription, colChargePeriodStart, colChargePeriodEnd, colCommitmentID,
	colCommitmentStatus, colCommitmentType, colCapacityResID, colCapacityResStatus, colConsumedQuantity,
	colConsumedUnit, colPricingCategory, colProviderName, colServiceProviderName, colRegionID, colResourceID,
	colResourceType, colServiceCategory, colSkuPriceDetails, colSubAccountID, colFocusVersion, colInstanceType}

// schema maps the used columns to their positions in one file's header.
type schema struct {
	version string
	idx     map[string]int
	width   int
}

// newSchema reads a header; want is the version asked for ("" detects it).
func newSchema(header []string, want string) (*schema, error) {
	s := &schema{idx: map[string]int{}, width: len(header)}
	for i, h := range header {
		h = strings.TrimSpace(strings.TrimPrefix(h, "\ufeff"))
		if slices.Contains(used, h) {
			if _, dup := s.idx[h]; !dup {
				s.idx[h] = i
			}
		}
	}
	has := func(c string) bool { _, ok := s.idx[c]; return ok }
	var missing []string
	for _, c := range required {
		if !has(c) {
			missing = append(missing, c)
		}
	}
	if !has(colProviderName) && !has(colServiceProviderName) {
		missing = append(missing, colProviderName+" (or "+colServiceProviderName+" from 1.3)")
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("missing required FOCUS column(s) %s", strings.Join(missing, ", "))
	}
	s.version = detect(header)
	if want != "" {
		if !slices.Contains(Versions, want) {
			return nil, fmt.Errorf("FOCUS version %q is not one of %s", want, strings.Join(Versions, ", "))
		}
		s.version = want
	}
	return s, nil
}

// detect names the newest version whose added columns the header has.
func detect(header []string) string {
	set := map[string]bool{}
	for _, h := range header {
		set[strings.TrimSpace(h)] = true
	}
	switch {
	case set[colServiceProviderName] || set["HostProviderName"]:
		return V13
	case set[colInvoiceID] || set["BillingAccountType"] || set["PricingCurrency"]:
		return V12
	case set[colCapacityResID] || set["SkuMeter"] || set[colSkuPriceDetails]:
		return V11
	default:
		return V10
	}
}
