package fleet

import (
	"time"

	"github.com/shopspring/decimal"
)

// Held is a commitment an account has already bought: a reserved instance,
// a savings plan, an Azure reservation or savings plan, a GCP committed-use
// discount or reservation, or a capacity reservation. It is paid every hour
// of its term whether or not anything runs on it. A fleet lists what it
// holds at the top level (Fleet.Commitments); which instances it covers is
// worked out by each cloud's rules, or named by an instance's
// Commitment.ID.
type Held struct {
	// ID is the cloud's identifier: the reserved instance ID, savings plan
	// ARN, reservation order/reservation ID, or commitment self-link.
	ID       string   `json:"id"`
	Provider Provider `json:"provider"`
	// Account is the account, subscription, project or billing account
	// that owns the commitment.
	Account string `json:"account,omitempty"`
	// Kind is what was bought (pricing.CommitmentKind): standard-reserved-instance,
	// convertible-reserved-instance, compute-savings-plan,
	// ec2-instance-savings-plan, capacity-reservation, capacity-block,
	// reservation (Azure), savings-plan (Azure), resource-cud or spend-cud (GCP),
	// gcp-reservation.
	Kind  string    `json:"kind"`
	Scope HeldScope `json:"scope,omitzero"`
	// Term is "1y", "3y" or "5y"; empty for commitments without a term
	// (capacity reservations, capacity blocks).
	Term    string `json:"term,omitempty"`
	Payment string `json:"payment,omitempty"`
	// Start and End bound the term; a commitment is paid from Start to End.
	Start *time.Time `json:"start,omitempty"`
	End   *time.Time `json:"end,omitempty"`
	// InstanceType is the type a reserved instance, Azure reservation,
	// capacity reservation or capacity block is for.
	InstanceType string `json:"instanceType,omitempty"`
	// InstanceFamily is the family an EC2 Instance Savings Plan is for, or
	// the machine series (g2, a2, a3-mega) whose vCPUs and memory a GCP
	// resource-based CUD covers (its commitment type).
	InstanceFamily string `json:"instanceFamily,omitempty"`
	// Count is how many instances (of InstanceType) are reserved.
	Count float64 `json:"count,omitempty"`
	// SizeFlexible is true when the reservation applies across sizes of
	// its family: AWS regional Linux RIs (by normalization factor), Azure
	// reservations whose instanceFlexibility is "On" (by the ratios of the
	// size's instance size flexibility group).
	SizeFlexible bool `json:"sizeFlexible,omitempty"`
	// Resources are what a GCP resource-based CUD commits to, per region.
	Resources []HeldResource `json:"resources,omitempty"`
	// HourlyCommitment is the USD per hour a savings plan or spend-based
	// CUD commits to spend.
	HourlyCommitment *decimal.Decimal `json:"hourlyCommitment,omitempty"`
	// HourlyRate is the effective USD per unit-hour (instance-hour for RIs
	// and reservations, upfront amortised) the commitment pays.
	HourlyRate *decimal.Decimal `json:"hourlyRate,omitempty"`
	// Source says where it was read: "fleet" or the API, e.g.
	// "ec2:DescribeReservedInstances".
	Source string `json:"source,omitempty"`
}

// HeldScope is where a commitment applies.
type HeldScope struct {
	// Level is "region", "zone", "account" (AWS account, GCP project,
	// Azure single subscription), "resource-group", "management-group"
	// or "shared" (every account of the organisation or billing account).
	Level  string `json:"level,omitempty"`
	Region string `json:"region,omitempty"`
	Zone   string `json:"zone,omitempty"`
	// Accounts limit a scoped commitment to these accounts, subscriptions,
	// resource groups or projects.
	Accounts []string `json:"accounts,omitempty"`
}

// HeldResource is one resource a GCP resource-based CUD commits to.
type HeldResource struct {
	// Type is "vcpu", "memory" (GiB), "gpu" or "local-ssd" (GiB).
	Type string `json:"type"`
	// GPUModel is the accelerator a gpu commitment is for, e.g. "L4".
	GPUModel string  `json:"gpuModel,omitempty"`
	Amount   float64 `json:"amount"`
}
