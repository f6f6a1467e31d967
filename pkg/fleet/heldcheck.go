package fleet

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/shopspring/decimal"
)

// The kinds of Held, as the clouds name what they sell.
const (
	HeldStandardRI          = "standard-reserved-instance"
	HeldConvertibleRI       = "convertible-reserved-instance"
	HeldComputeSavingsPlan  = "compute-savings-plan"
	HeldEC2SavingsPlan      = "ec2-instance-savings-plan"
	HeldCapacityReservation = "capacity-reservation"
	HeldCapacityBlock       = "capacity-block"
	HeldReservation         = "reservation"
	HeldSavingsPlan         = "savings-plan"
	HeldResourceCUD         = "resource-cud"
	HeldSpendCUD            = "spend-cud"
	HeldGCPReservation      = "gcp-reservation"
	// HeldSageMakerSavingsPlan is an AWS SageMaker Savings Plan: it covers
	// SageMaker ml.* usage only (HeldCovers).
	HeldSageMakerSavingsPlan = "sagemaker-savings-plan"
)

// HeldKinds lists the kinds of commitment each cloud sells.
var HeldKinds = map[Provider][]string{
	AWS:   {HeldStandardRI, HeldConvertibleRI, HeldComputeSavingsPlan, HeldEC2SavingsPlan, HeldCapacityReservation, HeldCapacityBlock, HeldSageMakerSavingsPlan},
	Azure: {HeldReservation, HeldSavingsPlan, HeldCapacityReservation},
	GCP:   {HeldResourceCUD, HeldSpendCUD, HeldGCPReservation},
}

// HeldScopeLevels lists the valid HeldScope.Level values.
var HeldScopeLevels = []string{"region", "zone", "account", "resource-group", "management-group", "shared"}

// HeldResourceTypes lists the valid HeldResource.Type values.
var HeldResourceTypes = []string{"vcpu", "memory", "gpu", "local-ssd"}

// Limits of the commitments section.
const (
	// MaxHeldCount bounds count (instances reserved by one commitment).
	MaxHeldCount = 1_000_000
	// MaxHeldAmount bounds a resource CUD's amount (vCPUs, GiB or GPUs).
	MaxHeldAmount = 100_000_000
	// MaxHourlyCommitment bounds hourlyCommitment and hourlyRate, USD per hour.
	MaxHourlyCommitment = 10_000_000
)

var maxHourlyCommitment = decimal.NewFromInt(MaxHourlyCommitment)

// PerInstance reports whether the kind reserves a number of one instance
// type (reserved instances, Azure reservations, capacity reservations and
// blocks, GCP reservations).
func (h *Held) PerInstance() bool {
	switch h.Kind {
	case HeldStandardRI, HeldConvertibleRI, HeldCapacityReservation, HeldCapacityBlock, HeldReservation, HeldGCPReservation:
		return true
	}
	return false
}

// PerHour reports whether the kind commits to a USD amount per hour
// (savings plans, GCP spend-based CUDs).
func (h *Held) PerHour() bool {
	switch h.Kind {
	case HeldComputeSavingsPlan, HeldEC2SavingsPlan, HeldSavingsPlan, HeldSpendCUD, HeldSageMakerSavingsPlan:
		return true
	}
	return false
}

// Termless reports whether the kind has no term (capacity reservations,
// capacity blocks, GCP reservations): it is paid while it exists.
func (h *Held) Termless() bool {
	switch h.Kind {
	case HeldCapacityReservation, HeldCapacityBlock, HeldGCPReservation:
		return true
	}
	return false
}

// Active reports whether the commitment is paid at t: from Start (when
// given) until End (when given).
func (h *Held) Active(t time.Time) bool {
	return (h.Start == nil || !t.Before(*h.Start)) && (h.End == nil || t.Before(*h.End))
}

// commitments checks the commitments section and the instances' references
// to it.
func (c *checker) commitments(f *Fleet) {
	c.inst = -1
	ids := map[string]int{}
	for i := range f.Commitments {
		h := &f.Commitments[i]
		c.at = []string{fmt.Sprintf("commitments[%d].", i)}
		if strings.TrimSpace(h.ID) == "" {
			c.failf("id", "missing; give the cloud's identifier (reserved instance ID, savings plan ARN, reservation or commitment name)")
		} else if j, dup := ids[h.ID]; dup {
			c.failf("id", "%q is already the id of commitments[%d]", h.ID, j)
		} else {
			ids[h.ID] = i
		}
		c.held(h)
	}
	c.at = nil
	for i := range f.Instances {
		cm := f.Instances[i].Commitment
		if cm == nil || cm.ID == "" {
			continue
		}
		c.inst = i
		j, ok := ids[cm.ID]
		switch {
		case !ok:
			c.failf("commitment.id", "%q names no commitment of the fleet's commitments section", cm.ID)
		case f.Commitments[j].Provider != f.Instances[i].Provider:
			c.failf("commitment.id", "%q is a %s commitment, the instance is on %s", cm.ID, f.Commitments[j].Provider, f.Instances[i].Provider)
		}
	}
	c.inst = -1
}

func (c *checker) held(h *Held) {
	switch {
	case h.Provider == "":
		c.failf("provider", "missing; want one of %s", list(Providers))
	case !h.Provider.Valid():
		c.failf("provider", "%q is not one of %s", h.Provider, list(Providers))
	case h.Kind == "":
		c.failf("kind", "missing; want one of %s", strings.Join(HeldKinds[h.Provider], ", "))
	case !slices.Contains(HeldKinds[h.Provider], h.Kind):
		c.failf("kind", "%q is not a %s commitment; want one of %s", h.Kind, h.Provider, strings.Join(HeldKinds[h.Provider], ", "))
	}
	switch {
	case h.Term == "" && !h.Termless() && h.Kind != "":
		c.failf("term", "missing; want one of %s", strings.Join(CommitmentTerms, ", "))
	case h.Term != "" && !slices.Contains(CommitmentTerms, h.Term):
		c.failf("term", "%q is not one of %s", h.Term, strings.Join(CommitmentTerms, ", "))
	}
	if l := h.Scope.Level; l != "" && !slices.Contains(HeldScopeLevels, l) {
		c.failf("scope.level", "%q is not one of %s", l, strings.Join(HeldScopeLevels, ", "))
	}
	if h.Scope.Level == "zone" && h.Scope.Zone == "" {
		c.failf("scope.zone", "missing; a zonal commitment names its zone")
	}
	for i, a := range h.Scope.Accounts {
		if strings.TrimSpace(a) == "" {
			c.failf(fmt.Sprintf("scope.accounts[%d]", i), "blank")
		}
	}
	if h.Start != nil && h.End != nil && !h.End.After(*h.Start) {
		c.failf("end", "%s is not after start %s", h.End.Format(time.RFC3339), h.Start.Format(time.RFC3339))
	}
	c.quantity("count", h.Count, MaxHeldCount, "")
	switch {
	case h.PerInstance():
		if strings.TrimSpace(h.InstanceType) == "" {
			c.failf("instanceType", "missing; a %s reserves one instance type", h.Kind)
		}
		if !(h.Count > 0) {
			c.failf("count", "missing; give how many instances are reserved")
		}
	case h.PerHour():
		if h.HourlyCommitment == nil {
			c.failf("hourlyCommitment", "missing; a %s commits to a USD amount per hour", h.Kind)
		}
		if h.Kind == HeldEC2SavingsPlan {
			if h.InstanceFamily == "" {
				c.failf("instanceFamily", "missing; an EC2 Instance Savings Plan is for one instance family")
			}
			if h.Scope.Region == "" {
				c.failf("scope.region", "missing; an EC2 Instance Savings Plan is for one region")
			}
		}
	case h.Kind == HeldResourceCUD:
		if len(h.Resources) == 0 {
			c.failf("resources", "empty; a resource-based CUD commits to vCPUs, memory, GPUs or local SSD")
		}
		if h.Scope.Region == "" {
			c.failf("scope.region", "missing; a resource-based CUD is bought in one region")
		}
	}
	for i, r := range h.Resources {
		p := fmt.Sprintf("resources[%d].", i)
		if !slices.Contains(HeldResourceTypes, r.Type) {
			if r.Type == "" {
				c.failf(p+"type", "missing; want one of %s", strings.Join(HeldResourceTypes, ", "))
			} else {
				c.failf(p+"type", "%q is not one of %s", r.Type, strings.Join(HeldResourceTypes, ", "))
			}
		}
		if r.Type == "gpu" && strings.TrimSpace(r.GPUModel) == "" {
			c.failf(p+"gpuModel", "missing; a GPU commitment is for one accelerator model")
		}
		c.quantity(p+"amount", r.Amount, MaxHeldAmount, "")
		if !(r.Amount > 0) {
			c.failf(p+"amount", "%s is not a positive amount", num(r.Amount))
		}
	}
	if d := h.HourlyCommitment; d != nil {
		c.usd("hourlyCommitment", *d)
	}
	if d := h.HourlyRate; d != nil {
		c.usd("hourlyRate", *d)
	}
}

// usd checks a USD hourly amount of a commitment without arithmetic on
// absurd exponents.
func (c *checker) usd(p string, d decimal.Decimal) {
	magnitude := int64(d.NumDigits()) + int64(d.Exponent())
	switch {
	case d.IsNegative():
		c.failf(p, "%s is negative", compact(d))
	case d.Exponent() < -64:
		c.failf(p, "%s has more than 64 decimal places", compact(d))
	case magnitude > 8 || d.GreaterThan(maxHourlyCommitment):
		c.failf(p, "%s is above %d USD an hour", compact(d), MaxHourlyCommitment)
	}
}
