package billing

import (
	"time"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/envelope"
	"github.com/gpufinops/gpufinops/pkg/fleet"
)

// Kind and SchemaVersion head `gpufinops billing summary -o json`.
const (
	Kind          = "BillingSummary"
	SchemaVersion = "1.0"
)

// Document is the JSON form of a bill's GPU summary.
type Document struct {
	envelope.Header
	// Source is the --billing value read.
	Source   string   `json:"source"`
	Files    []string `json:"files,omitempty"`
	Versions []string `json:"focusVersions"`
	Currency string   `json:"currency"`
	Rows     int64    `json:"rows"`
	GPURows  int64    `json:"gpuRows"`
	// WindowStart and WindowEnd bound ChargePeriodStart; absent when open.
	WindowStart *time.Time `json:"windowStart,omitempty"`
	WindowEnd   *time.Time `json:"windowEnd,omitempty"`
	// BilledCost, EffectiveCost, ListCost and Hours total the resources.
	BilledCost    decimal.Decimal `json:"billedCost"`
	EffectiveCost decimal.Decimal `json:"effectiveCost"`
	ListCost      decimal.Decimal `json:"listCost"`
	Hours         decimal.Decimal `json:"hours"`
	Resources     []ResourceRow   `json:"resources"`
	// UnusedCommitments are commitments paid for and not used in the window.
	UnusedCommitments []Commitment `json:"unusedCommitments"`
	// Warnings name GPU instance types counted with their GPUs unknown
	// (the catalog lacks them and the bill gives no GpuCount).
	Warnings []string `json:"warnings,omitempty"`
}

// ResourceRow is one GPU instance's line of the summary.
type ResourceRow struct {
	ResourceID     string          `json:"resourceId"`
	Provider       fleet.Provider  `json:"provider"`
	Account        string          `json:"account,omitempty"`
	Region         string          `json:"region,omitempty"`
	InstanceType   string          `json:"instanceType"`
	GPUCount       float64         `json:"gpuCount,omitempty"`
	BilledCost     decimal.Decimal `json:"billedCost"`
	EffectiveCost  decimal.Decimal `json:"effectiveCost"`
	ListCost       decimal.Decimal `json:"listCost"`
	ContractedCost decimal.Decimal `json:"contractedCost"`
	Hours          decimal.Decimal `json:"hours"`
	// EffectiveHourlyRate is EffectiveCost ÷ Hours; absent without hours.
	EffectiveHourlyRate *decimal.Decimal `json:"effectiveHourlyRate,omitempty"`
	// CommitmentShare, SpotShare and CapacityReservationShare are shares
	// of Hours, 0 to 1.
	CommitmentShare          float64   `json:"commitmentCoveredShare"`
	SpotShare                float64   `json:"spotShare"`
	CapacityReservationShare float64   `json:"capacityReservationShare"`
	CommitmentIDs            []string  `json:"commitmentIds,omitempty"`
	FirstChargeStart         time.Time `json:"firstChargeStart"`
	LastChargeEnd            time.Time `json:"lastChargeEnd"`
}

// Row is the summary line of r.
func (r *Resource) Row() ResourceRow {
	row := ResourceRow{ResourceID: r.ResourceID, Provider: r.Provider, Account: r.Account, Region: r.Region,
		InstanceType: r.InstanceType, GPUCount: r.GPUCount, BilledCost: r.BilledCost, EffectiveCost: r.EffectiveCost,
		ListCost: r.ListCost, ContractedCost: r.ContractedCost, Hours: r.Hours, CommitmentShare: r.CommitmentShare(),
		SpotShare: r.SpotShare(), CapacityReservationShare: r.ReservationShare(), CommitmentIDs: r.Commitments,
		FirstChargeStart: r.First, LastChargeEnd: r.Last}
	if h, ok := r.EffectiveHourly(); ok {
		row.EffectiveHourlyRate = &h
	}
	return row
}

// NewDocument is the JSON form of s, read from source.
func NewDocument(source string, s *Summary) Document {
	d := Document{Header: envelope.New(Kind, SchemaVersion), Source: source, Files: s.Files, Versions: s.Versions,
		Currency: s.Currency, Rows: s.Rows, GPURows: s.GPURows, BilledCost: s.BilledCost, EffectiveCost: s.EffectiveCost,
		ListCost: s.ListCost, Hours: s.Hours, Resources: make([]ResourceRow, len(s.Resources)), UnusedCommitments: s.Unused,
		Warnings: s.Warnings}
	if d.Versions == nil {
		d.Versions = []string{}
	}
	if d.UnusedCommitments == nil {
		d.UnusedCommitments = []Commitment{}
	}
	if !s.Start.IsZero() {
		d.WindowStart = &s.Start
	}
	if !s.End.IsZero() {
		d.WindowEnd = &s.End
	}
	for i := range s.Resources {
		d.Resources[i] = s.Resources[i].Row()
	}
	return d
}
