package focusgen

import (
	"io"
	"strconv"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/gpufinops/gpufinops/pkg/fleet"
)

// pqRow is a row as Data Exports write Parquet: costs and quantities as
// doubles, periods as UTC timestamps, the rest strings; NULL is null.
type pqRow struct {
	BilledCost                 *float64   `parquet:"BilledCost,optional"`
	EffectiveCost              *float64   `parquet:"EffectiveCost,optional"`
	ListCost                   *float64   `parquet:"ListCost,optional"`
	ContractedCost             *float64   `parquet:"ContractedCost,optional"`
	BillingCurrency            *string    `parquet:"BillingCurrency,optional"`
	BillingAccountId           *string    `parquet:"BillingAccountId,optional"`
	BillingPeriodStart         *time.Time `parquet:"BillingPeriodStart,optional,timestamp(millisecond:utc)"`
	BillingPeriodEnd           *time.Time `parquet:"BillingPeriodEnd,optional,timestamp(millisecond:utc)"`
	ChargeCategory             *string    `parquet:"ChargeCategory,optional"`
	ChargeClass                *string    `parquet:"ChargeClass,optional"`
	ChargeDescription          *string    `parquet:"ChargeDescription,optional"`
	ChargeFrequency            *string    `parquet:"ChargeFrequency,optional"`
	ChargePeriodStart          *time.Time `parquet:"ChargePeriodStart,optional,timestamp(millisecond:utc)"`
	ChargePeriodEnd            *time.Time `parquet:"ChargePeriodEnd,optional,timestamp(millisecond:utc)"`
	CommitmentDiscountCategory *string    `parquet:"CommitmentDiscountCategory,optional"`
	CommitmentDiscountId       *string    `parquet:"CommitmentDiscountId,optional"`
	CommitmentDiscountStatus   *string    `parquet:"CommitmentDiscountStatus,optional"`
	CommitmentDiscountType     *string    `parquet:"CommitmentDiscountType,optional"`
	CapacityReservationId      *string    `parquet:"CapacityReservationId,optional"`
	CapacityReservationStatus  *string    `parquet:"CapacityReservationStatus,optional"`
	ConsumedQuantity           *float64   `parquet:"ConsumedQuantity,optional"`
	ConsumedUnit               *string    `parquet:"ConsumedUnit,optional"`
	InvoiceId                  *string    `parquet:"InvoiceId,optional"`
	ListUnitPrice              *float64   `parquet:"ListUnitPrice,optional"`
	PricingCategory            *string    `parquet:"PricingCategory,optional"`
	PricingQuantity            *float64   `parquet:"PricingQuantity,optional"`
	PricingUnit                *string    `parquet:"PricingUnit,optional"`
	ProviderName               *string    `parquet:"ProviderName,optional"`
	PublisherName              *string    `parquet:"PublisherName,optional"`
	RegionId                   *string    `parquet:"RegionId,optional"`
	ResourceId                 *string    `parquet:"ResourceId,optional"`
	ResourceType               *string    `parquet:"ResourceType,optional"`
	ServiceCategory            *string    `parquet:"ServiceCategory,optional"`
	ServiceName                *string    `parquet:"ServiceName,optional"`
	SkuId                      *string    `parquet:"SkuId,optional"`
	SkuPriceDetails            *string    `parquet:"SkuPriceDetails,optional"`
	SubAccountId               *string    `parquet:"SubAccountId,optional"`
	Tags                       *string    `parquet:"Tags,optional"`
	XOperation                 *string    `parquet:"x_Operation,optional"`
}

func str(v string) *string {
	if v == "NULL" || v == "" {
		return nil
	}
	return &v
}

func num(v string) *float64 {
	if v == "NULL" || v == "" {
		return nil
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return nil
	}
	return &f
}

func ts(v string) *time.Time {
	t, err := time.Parse(stamp, v)
	if err != nil {
		return nil
	}
	return &t
}

// WriteParquet writes the export as one Snappy Parquet file.
func WriteParquet(w io.Writer, instances []fleet.Instance, o Options) (Totals, error) {
	pw := parquet.NewGenericWriter[pqRow](w, parquet.Compression(&parquet.Snappy))
	buf := make([]pqRow, 0, 1024)
	flush := func() error {
		if len(buf) == 0 {
			return nil
		}
		_, err := pw.Write(buf)
		buf = buf[:0]
		return err
	}
	t, err := Generate(instances, o, func(r *Row) error {
		var p pqRow
		p.BilledCost = num(r[0])
		p.EffectiveCost = num(r[1])
		p.ListCost = num(r[2])
		p.ContractedCost = num(r[3])
		p.BillingCurrency = str(r[4])
		p.BillingAccountId = str(r[5])
		p.BillingPeriodStart = ts(r[6])
		p.BillingPeriodEnd = ts(r[7])
		p.ChargeCategory = str(r[8])
		p.ChargeClass = str(r[9])
		p.ChargeDescription = str(r[10])
		p.ChargeFrequency = str(r[11])
		p.ChargePeriodStart = ts(r[12])
		p.ChargePeriodEnd = ts(r[13])
		p.CommitmentDiscountCategory = str(r[14])
		p.CommitmentDiscountId = str(r[15])
		p.CommitmentDiscountStatus = str(r[16])
		p.CommitmentDiscountType = str(r[17])
		p.CapacityReservationId = str(r[18])
		p.CapacityReservationStatus = str(r[19])
		p.ConsumedQuantity = num(r[20])
		p.ConsumedUnit = str(r[21])
		p.InvoiceId = str(r[22])
		p.ListUnitPrice = num(r[23])
		p.PricingCategory = str(r[24])
		p.PricingQuantity = num(r[25])
		p.PricingUnit = str(r[26])
		p.ProviderName = str(r[27])
		p.PublisherName = str(r[28])
		p.RegionId = str(r[29])
		p.ResourceId = str(r[30])
		p.ResourceType = str(r[31])
		p.ServiceCategory = str(r[32])
		p.ServiceName = str(r[33])
		p.SkuId = str(r[34])
		p.SkuPriceDetails = str(r[35])
		p.SubAccountId = str(r[36])
		p.Tags = str(r[37])
		p.XOperation = str(r[38])
		buf = append(buf, p)
		if len(buf) == cap(buf) {
			return flush()
		}
		return nil
	})
	if err != nil {
		return t, err
	}
	if err := flush(); err != nil {
		return t, err
	}
	return t, pw.Close()
}
