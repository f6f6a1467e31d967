// Package focusgen writes a FOCUS 1.2 billing export for a fleet, hour by
// hour, with known totals: the test oracle of the reader, the data of the
// billing benchmark and of cmd/cloudsim. It shares no code with the reader
// in pkg/billing: its own column list, its own number formatting.
package focusgen

import (
	"bufio"
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/fleet"
)

// Options shape an export.
type Options struct {
	// Start is the first hour; Hours the hours billed per instance.
	Start time.Time
	Hours int
	// List is an instance's list price per hour; false leaves it out of
	// the bill.
	List func(in *fleet.Instance) (decimal.Decimal, bool)
	// Discount is the negotiated discount off list, 0 to 1 (e.g. "0.12").
	Discount decimal.Decimal
	// Committed is the share of each on-demand instance's hours (0 to 1)
	// that a savings plan covers at CommitmentDiscount off list.
	Committed          decimal.Decimal
	CommitmentDiscount decimal.Decimal
	// UnusedCommitment is the hourly unused amount of the savings plan.
	UnusedCommitment decimal.Decimal
	// Noise is non-GPU rows (storage, network) per instance-hour.
	Noise int
	// Extra are GPU instances billed that the fleet does not have.
	Extra []fleet.Instance
}

// Totals are what an export holds, computed as it is written.
type Totals struct {
	Rows           int64
	GPURows        int64
	GPUBilled      decimal.Decimal
	GPUEffective   decimal.Decimal
	GPUList        decimal.Decimal
	GPUHours       decimal.Decimal
	ExtraEffective decimal.Decimal
	// Effective is each instance's EffectiveCost, by fleet id.
	Effective map[string]decimal.Decimal
	// Unused is the savings plan's unused EffectiveCost.
	Unused decimal.Decimal
}

// Header is the export's columns: FOCUS 1.2's that the tools read, and an
// x_ column as providers add.
var Header = []string{"BilledCost", "EffectiveCost", "ListCost", "ContractedCost", "BillingCurrency", "BillingAccountId",
	"BillingPeriodStart", "BillingPeriodEnd", "ChargeCategory", "ChargeClass", "ChargeDescription", "ChargeFrequency",
	"ChargePeriodStart", "ChargePeriodEnd", "CommitmentDiscountCategory", "CommitmentDiscountId", "CommitmentDiscountStatus",
	"CommitmentDiscountType", "CapacityReservationId", "CapacityReservationStatus", "ConsumedQuantity", "ConsumedUnit",
	"InvoiceId", "ListUnitPrice", "PricingCategory", "PricingQuantity", "PricingUnit", "ProviderName", "PublisherName",
	"RegionId", "ResourceId", "ResourceType", "ServiceCategory", "ServiceName", "SkuId", "SkuPriceDetails", "SubAccountId",
	"Tags", "x_Operation"}

// Row is one charge in Header's order.
type Row [39]string

const stamp = "2006-01-02 15:04:05"

// ResourceID is the id the provider's export gives an instance: an EC2 ARN,
// an Azure resource id, a GCP full resource name.
// A managed item is billed under the resource the service bills: a
// SageMaker endpoint's ARN (not its variant's), a Vertex AI endpoint's full
// resource name (not its deployed model's), an Azure ML resource's ARM ID.
func ResourceID(in *fleet.Instance) string {
	if in.IsManaged() {
		return managedResourceID(in)
	}
	switch in.Provider {
	case fleet.AWS:
		return "arn:aws:ec2:" + in.Region + ":" + in.Account + ":instance/" + in.ID
	case fleet.Azure:
		if len(in.ID) > 0 && in.ID[0] == '/' {
			return in.ID
		}
		return "/subscriptions/" + in.Account + "/resourceGroups/gpu/providers/Microsoft.Compute/virtualMachines/" + in.ID
	case fleet.GCP:
		return "//compute.googleapis.com/projects/" + in.Account + "/zones/" + in.Region + "-a/instances/" + in.ID
	}
	return in.ID
}

func managedResourceID(in *fleet.Instance) string {
	id := in.ID
	switch in.Provider {
	case fleet.AWS:
		if i := strings.Index(id, "/variant/"); i >= 0 {
			id = id[:i]
		}
	case fleet.GCP:
		if i := strings.Index(id, "/deployedModels/"); i >= 0 {
			id = id[:i]
		}
		if strings.Contains(id, "/endpoints/") || strings.Contains(id, "/customJobs/") {
			return "//aiplatform.googleapis.com/" + id
		}
	}
	return id
}

func providerName(p fleet.Provider) string {
	switch p {
	case fleet.AWS:
		return "AWS"
	case fleet.Azure:
		return "Microsoft"
	case fleet.GCP:
		return "Google Cloud"
	}
	return string(p)
}

// Generate calls emit with every row of the export of instances, in time
// order, and returns its totals.
func Generate(instances []fleet.Instance, o Options, emit func(*Row) error) (Totals, error) {
	t := Totals{Effective: map[string]decimal.Decimal{}}
	one := decimal.NewFromInt(1)
	month := time.Date(o.Start.Year(), o.Start.Month(), 1, 0, 0, 0, 0, time.UTC)
	type billedInst struct {
		in    *fleet.Instance
		list  decimal.Decimal
		extra bool
	}
	var all []billedInst
	for i := range instances {
		if l, ok := o.List(&instances[i]); ok {
			all = append(all, billedInst{&instances[i], l, false})
		}
	}
	for i := range o.Extra {
		if l, ok := o.List(&o.Extra[i]); ok {
			all = append(all, billedInst{&o.Extra[i], l, true})
		}
	}
	committedHours := int(o.Committed.Mul(decimal.NewFromInt(int64(o.Hours))).IntPart())
	var r Row
	for h := 0; h < o.Hours; h++ {
		start := o.Start.Add(time.Duration(h) * time.Hour)
		for _, b := range all {
			in := b.in
			r = Row{}
			r[4], r[5] = "USD", "acct-"+in.Account
			r[6], r[7] = month.Format(stamp), month.AddDate(0, 1, 0).Format(stamp)
			r[8], r[9], r[11] = "Usage", "NULL", "Usage-Based"
			r[12], r[13] = start.Format(stamp), start.Add(time.Hour).Format(stamp)
			// A managed item bills each replica's hour.
			qty := decimal.NewFromFloat(in.ReplicaCount())
			r[20], r[21] = qty.String(), "Hours"
			r[22] = "inv-" + month.Format("2006-01")
			r[23] = b.list.String()
			r[25], r[26] = qty.String(), "Hours"
			r[27], r[28] = providerName(in.Provider), providerName(in.Provider)
			r[29], r[30], r[31] = in.Region, ResourceID(in), "Virtual Machine"
			r[32], r[33] = "Compute", "Compute"
			r[34] = "sku-" + in.InstanceType
			r[35] = fmt.Sprintf(`{"InstanceType":%q,"GpuCount":%s}`, in.InstanceType, strconv.FormatFloat(in.GPU.Count, 'f', -1, 64))
			r[36] = in.Account
			r[37] = `{"team":"ml"}`
			r[38] = "RunInstances"
			r[10] = "GPU instance hour " + in.InstanceType
			for _, c := range []int{14, 15, 16, 17, 18, 19} {
				r[c] = "NULL"
			}
			list := b.list.Mul(qty)
			eff := list.Mul(one.Sub(o.Discount))
			category := "Standard"
			switch {
			case in.Lifecycle == fleet.Spot:
				category = "Dynamic"
				eff = list.Mul(decimal.RequireFromString("0.35"))
			case in.Lifecycle == fleet.OnDemand && h < committedHours && !b.extra:
				category = "Committed"
				eff = list.Mul(one.Sub(o.CommitmentDiscount))
				r[14], r[15], r[16], r[17] = "Spend", "sp-"+in.Account, "Used", "Savings Plan"
			}
			eff = eff.Round(6)
			r[0], r[1], r[2], r[3] = eff.String(), eff.String(), list.String(), list.Mul(one.Sub(o.Discount)).Round(6).String()
			r[24] = category
			if err := emit(&r); err != nil {
				return t, err
			}
			t.Rows++
			t.GPURows++
			t.GPUBilled = t.GPUBilled.Add(eff)
			t.GPUEffective = t.GPUEffective.Add(eff)
			t.GPUList = t.GPUList.Add(list)
			t.GPUHours = t.GPUHours.Add(qty)
			if b.extra {
				t.ExtraEffective = t.ExtraEffective.Add(eff)
			} else {
				t.Effective[in.ID] = t.Effective[in.ID].Add(eff)
			}
			for n := 0; n < o.Noise; n++ {
				r[0], r[1], r[2], r[3] = "0.0137", "0.0137", "0.0137", "0.0137"
				r[10], r[20], r[21], r[25], r[26] = "EBS gp3 storage", "0.0137", "GB-Mo", "0.0137", "GB-Mo"
				r[24], r[30], r[31], r[32], r[33] = "Standard", ResourceID(in)+"-vol"+strconv.Itoa(n), "Volume", "Storage", "Storage"
				r[35], r[34] = "NULL", "sku-gp3"
				for _, c := range []int{14, 15, 16, 17} {
					r[c] = "NULL"
				}
				if err := emit(&r); err != nil {
					return t, err
				}
				t.Rows++
			}
		}
		if o.UnusedCommitment.IsPositive() && len(all) > 0 {
			in := all[0].in
			r = Row{}
			for c := range r {
				r[c] = "NULL"
			}
			r[0], r[1], r[2], r[3], r[4] = "0", o.UnusedCommitment.String(), "0", "0", "USD"
			r[8], r[11] = "Usage", "Usage-Based"
			r[12], r[13] = start.Format(stamp), start.Add(time.Hour).Format(stamp)
			r[14], r[15], r[16], r[17] = "Spend", "sp-"+in.Account, "Unused", "Savings Plan"
			r[24], r[27], r[28], r[30], r[32] = "Committed", providerName(in.Provider), providerName(in.Provider), "sp-"+in.Account, "Compute"
			r[36] = in.Account
			if err := emit(&r); err != nil {
				return t, err
			}
			t.Rows++
			t.Unused = t.Unused.Add(o.UnusedCommitment)
		}
	}
	return t, nil
}

// WriteCSV writes the export as CSV, with NULL for empty values.
func WriteCSV(w io.Writer, instances []fleet.Instance, o Options) (Totals, error) {
	bw := bufio.NewWriterSize(w, 1<<16)
	cw := csv.NewWriter(bw)
	if err := cw.Write(Header); err != nil {
		return Totals{}, err
	}
	t, err := Generate(instances, o, func(r *Row) error { return cw.Write(r[:]) })
	if err != nil {
		return t, err
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return t, err
	}
	return t, bw.Flush()
}
