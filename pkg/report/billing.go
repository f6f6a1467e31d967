package report

import (
	"time"
)

// Billing reconciles the report with a FOCUS billing export (since 1.6).
// Its amounts are the bill's, in the bill's currency, over the bill's
// window, never converted by --currency.
type Billing struct {
	// Source is the --billing value read.
	Source   string `json:"source"`
	Currency string `json:"currency"`
	// WindowStart and WindowEnd bound the charges counted; absent when open.
	WindowStart *time.Time `json:"windowStart,omitempty"`
	WindowEnd   *time.Time `json:"windowEnd,omitempty"`
	// BillEffectiveCost is the bill's GPU instance EffectiveCost in the window.
	BillEffectiveCost Number `json:"billGpuEffectiveCost"`
	// ReportWindowCost is the report's instances at their bill rates over
	// the hours the bill counts: what the report says was paid.
	ReportWindowCost Number `json:"reportWindowCost"`
	// UnmatchedEffectiveCost is the bill's GPU spend that matched no
	// instance of the fleet (accounts or regions not scanned).
	UnmatchedEffectiveCost Number `json:"unmatchedEffectiveCost"`
	// Difference is BillEffectiveCost − ReportWindowCost.
	Difference Number `json:"difference"`
	// Reconciled is true when the difference is the unmatched spend, to the cent.
	Reconciled bool `json:"reconciled"`
	// Line states the reconciliation and the reasons for any difference.
	Line string `json:"line"`
	// InstancesAtBillRate and InstancesAtListPrice count the priced
	// instances by price basis.
	InstancesAtBillRate  int `json:"instancesAtBillRate"`
	InstancesAtListPrice int `json:"instancesAtListPrice"`
	// Unmatched is the unmatched spend per provider, account and region.
	Unmatched []BillingGap `json:"unmatched"`
	// UnusedCommitments are commitments paid for and unused in the window.
	UnusedCommitments []BillingCommitment `json:"unusedCommitments"`
	// CoverageDiffers are the instances whose commitment coverage in the
	// bill and from the commitments the fleet holds differ by more than
	// CoverageTolerance (since 1.7; only when the fleet lists commitments).
	CoverageDiffers []BillingCoverage `json:"coverageDiffers,omitempty"`
}

// CoverageTolerance is how far (as a share of hours) the bill's coverage
// of an instance may be from that of the commitments held before the
// report says they differ.
const CoverageTolerance = 0.05

// BillingCoverage is one instance whose coverage the bill and the
// commitments held tell differently: a commitment the scan did not read
// (another account's, or a permission missing), one the bill applies
// elsewhere, or one that ended.
type BillingCoverage struct {
	ResourceID string `json:"resourceId"`
	// BillShare is the share (0–1) of its billed hours the bill shows
	// covered by a commitment; HeldShare the share the commitments held
	// cover.
	BillShare Number `json:"billCoveredShare"`
	HeldShare Number `json:"heldCoveredShare"`
	// BillCommitments are the bill's CommitmentDiscountIds for it;
	// CoveredBy the commitments held that cover it.
	BillCommitments []string `json:"billCommitmentIds,omitempty"`
	CoveredBy       []string `json:"coveredBy,omitempty"`
}

// BillingGap is GPU spend in the bill no scanned instance matched.
type BillingGap struct {
	Provider      string `json:"provider"`
	Account       string `json:"account,omitempty"`
	Region        string `json:"region,omitempty"`
	Resources     int    `json:"resources"`
	EffectiveCost Number `json:"effectiveCost"`
	Hours         Number `json:"hours"`
}

// BillingCommitment is a commitment's unused part in the window.
type BillingCommitment struct {
	ID                  string `json:"commitmentDiscountId"`
	Provider            string `json:"provider"`
	Type                string `json:"type,omitempty"`
	InstanceType        string `json:"instanceType,omitempty"`
	GPU                 bool   `json:"gpu"`
	UnusedEffectiveCost Number `json:"unusedEffectiveCost"`
}
