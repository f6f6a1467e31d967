package billing

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/shopspring/decimal"
)

// Dialect is the SQL a warehouse speaks.
type Dialect string

// The dialects AggregateSQL writes.
const (
	// Trino is Trino's (and Presto's) SQL, e.g. in Amazon Athena.
	Trino Dialect = "trino"
	// GoogleSQL is Google's SQL, e.g. in BigQuery.
	GoogleSQL Dialect = "googlesql"
	// Postgres is PostgreSQL's, for a FOCUS table loaded there.
	Postgres Dialect = "postgres"
)

// aggregateColumns are the result columns of AggregateSQL, in order.
var aggregateColumns = []string{"provider_name", "resource_id", "account", "region", "currency", "charge_category",
	"charge_description", "service_category", "pricing_category", "commitment_id", "commitment_status", "commitment_type",
	"capacity_id", "capacity_status", "sku_price_details", "consumed_unit",
	"billed", "effective", "list", "contracted", "consumed", "consumed_rows", "first_start", "last_end", "row_count"}

// AggregateSQL is the aggregation Read does, as one query for a warehouse
// that holds the export in table: the rows Read would fold, grouped by
// everything the fold looks at, with their amounts summed as decimals. The
// result is a few rows per resource, which FoldAggregates turns into the
// same Summary. version is the export's FOCUS version (columns added since
// 1.0 are NULL for a 1.0 table); the window is o.Start and o.End.
func AggregateSQL(d Dialect, table, version string, o Options) (string, error) {
	if !slices.Contains(Versions, version) {
		return "", fmt.Errorf("FOCUS version %q is not one of %s", version, strings.Join(Versions, ", "))
	}
	q := func(c string) string {
		if d == GoogleSQL {
			return "`" + c + "`"
		}
		return `"` + c + `"`
	}
	num := "DECIMAL(38,12)"
	switch d {
	case GoogleSQL:
		num = "BIGNUMERIC"
	case Postgres:
		num = "NUMERIC"
	case Trino:
	default:
		return "", fmt.Errorf("unknown SQL dialect %q", d)
	}
	since11 := func(c string) string {
		if version == V10 {
			return "CAST(NULL AS VARCHAR)"
		}
		return q(c)
	}
	if d == GoogleSQL {
		since11 = func(c string) string {
			if version == V10 {
				return "CAST(NULL AS STRING)"
			}
			return q(c)
		}
	}
	provider := q(colProviderName)
	if version == V13 {
		provider = "COALESCE(" + q(colServiceProviderName) + ", " + q(colProviderName) + ")"
	}
	sum := func(c string) string { return "SUM(CAST(" + q(c) + " AS " + num + "))" }
	keys := []string{provider, q(colResourceID), q(colSubAccountID), q(colRegionID), q(colBillingCurrency), q(colChargeCategory),
		q(colChargeDescription), q(colServiceCategory), q(colPricingCategory), q(colCommitmentID), q(colCommitmentStatus),
		q(colCommitmentType), since11(colCapacityResID), since11(colCapacityResStatus), since11(colSkuPriceDetails), q(colConsumedUnit)}
	exprs := append(slices.Clone(keys), sum(colBilledCost), sum(colEffectiveCost), sum(colListCost), sum(colContractedCost),
		sum(colConsumedQuantity), "COUNT("+q(colConsumedQuantity)+")", "MIN("+q(colChargePeriodStart)+")",
		"MAX(COALESCE("+q(colChargePeriodEnd)+", "+q(colChargePeriodStart)+"))", "COUNT(*)")
	var b strings.Builder
	b.WriteString("SELECT\n")
	for i, e := range exprs {
		sep := ",\n"
		if i == len(exprs)-1 {
			sep = "\n"
		}
		fmt.Fprintf(&b, "  %s AS %s%s", e, aggregateColumns[i], sep)
	}
	tableRef := table
	if d == GoogleSQL {
		tableRef = "`" + table + "`"
	} else {
		parts := strings.Split(table, ".")
		for i, p := range parts {
			parts[i] = `"` + p + `"`
		}
		tableRef = strings.Join(parts, ".")
	}
	fmt.Fprintf(&b, "FROM %s\n", tableRef)
	fmt.Fprintf(&b, "WHERE ((LOWER(%s) = 'unused' AND %s IS NOT NULL)\n   OR (%s IS NOT NULL AND (%s IS NULL OR LOWER(%s) <> 'purchase')))\n",
		q(colCommitmentStatus), q(colCommitmentID), q(colResourceID), q(colChargeCategory), q(colChargeCategory))
	ts := func(t time.Time) string {
		s := t.UTC().Format("2006-01-02 15:04:05")
		if d == GoogleSQL {
			return "TIMESTAMP '" + s + "+00'"
		}
		return "TIMESTAMP '" + s + "'"
	}
	if !o.Start.IsZero() {
		fmt.Fprintf(&b, "  AND %s >= %s\n", q(colChargePeriodStart), ts(o.Start))
	}
	if !o.End.IsZero() {
		fmt.Fprintf(&b, "  AND %s < %s\n", q(colChargePeriodStart), ts(o.End))
	}
	groups := make([]string, len(keys))
	for i := range keys {
		groups[i] = fmt.Sprint(i + 1)
	}
	fmt.Fprintf(&b, "GROUP BY %s\n", strings.Join(groups, ", "))
	return b.String(), nil
}

// FoldAggregates folds the rows of AggregateSQL's result (header first,
// then next until io.EOF) into the Summary Read gives for the same rows;
// Rows counts the rows the warehouse aggregated. name labels errors.
func FoldAggregates(ctx context.Context, name string, header []string, next func() ([]string, error), o Options) (*Summary, error) {
	idx := map[string]int{}
	for i, h := range header {
		idx[strings.ToLower(strings.TrimSpace(h))] = i
	}
	for _, c := range aggregateColumns {
		if _, ok := idx[c]; !ok {
			return nil, &Error{File: name, Err: fmt.Errorf("the query result has no column %s", c)}
		}
	}
	// The window is the query's: fold every row it returns.
	fold := o
	fold.Start, fold.End = time.Time{}, time.Time{}
	a := newAggregator(fold)
	var n int64
	for {
		rec, err := next()
		if errors.Is(err, io.EOF) {
			break
		}
		n++
		if err != nil {
			return nil, &Error{File: name, Row: n, Err: err}
		}
		if n%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		cell := func(c string) string {
			v := strings.TrimSpace(rec[idx[c]])
			if isNull(v) {
				return ""
			}
			return v
		}
		r := Row{ProviderName: cell("provider_name"), ResourceID: cell("resource_id"), Account: cell("account"),
			Region: cell("region"), Currency: cell("currency"), ChargeCategory: cell("charge_category"),
			ChargeDescription: cell("charge_description"), ServiceCategory: cell("service_category"),
			PricingCategory: cell("pricing_category"), CommitmentID: cell("commitment_id"),
			CommitmentStatus: cell("commitment_status"), CommitmentType: cell("commitment_type"),
			CapacityID: cell("capacity_id"), CapacityStatus: cell("capacity_status"), ConsumedUnit: cell("consumed_unit")}
		fail := func(c string, err error) error { return &Error{File: name, Row: n, Column: c, Err: err} }
		for _, m := range []struct {
			col   string
			dst   *decimal.Decimal
			parse func(string) (decimal.Decimal, bool, error)
		}{{"billed", &r.Billed, amount}, {"effective", &r.Effective, amount}, {"list", &r.List, amount},
			{"contracted", &r.Contracted, amount}, {"consumed", &r.Consumed, number}} {
			if *m.dst, _, err = m.parse(cell(m.col)); err != nil {
				return nil, fail(m.col, err)
			}
		}
		counted, _, err := number(cell("consumed_rows"))
		if err != nil {
			return nil, fail("consumed_rows", err)
		}
		r.HasConsumed = counted.IsPositive()
		rows, _, err := number(cell("row_count"))
		if err != nil || !rows.IsPositive() {
			return nil, fail("row_count", fmt.Errorf("%q is not a positive count", cell("row_count")))
		}
		r.Count = rows.IntPart()
		if r.Start, err = timestamp(cell("first_start")); err != nil {
			return nil, fail("first_start", err)
		}
		if v := cell("last_end"); v != "" {
			if r.End, err = timestamp(v); err != nil {
				return nil, fail("last_end", err)
			}
		}
		if v := cell("sku_price_details"); v != "" {
			if r.InstanceType, r.GPUCount, err = skuDetails(v); err != nil {
				return nil, fail("sku_price_details", err)
			}
		}
		if err := a.add(&r); err != nil {
			var ce *ColumnError
			if errors.As(err, &ce) {
				return nil, fail(ce.Column, ce.Err)
			}
			return nil, fail("", err)
		}
	}
	s := a.finish()
	s.Files = []string{name}
	s.Start, s.End = o.Start, o.End
	return s, nil
}
