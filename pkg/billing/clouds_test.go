package billing

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/providers"
	// The bills of these tests come from AWS, Azure and GCP: what their
	// FOCUS exports call them and how their resource ids read are the
	// adapters' registrations (providers.Billing), not this package's.
	_ "github.com/gpufinops/gpufinops/providers/all"
)

// zedTable is a warehouse table that answers every query with one
// aggregate row, and keeps the query.
type zedTable struct {
	queries []string
	closed  bool
}

func (z *zedTable) Table() string { return "zdb.bill" }
func (z *zedTable) Close() error  { z.closed = true; return nil }
func (z *zedTable) Query(_ context.Context, sql string) ([]string, func() ([]string, error), error) {
	z.queries = append(z.queries, sql)
	row := map[string]string{"provider_name": "Zed Cloud Inc.", "resource_id": "zc:vm-1/", "account": "acct", "region": "zz-1",
		"currency": "USD", "charge_category": "Usage", "service_category": "Compute", "pricing_category": "Standard",
		"sku_price_details": `{"InstanceType": "z1.big", "GpuCount": 2}`, "consumed_unit": "Hours", "billed": "10", "effective": "8",
		"list": "12", "contracted": "0", "consumed": "4", "consumed_rows": "4", "first_start": "2025-01-01T00:00:00Z",
		"last_end": "2025-01-01T04:00:00Z", "row_count": "4"}
	rec := make([]string, len(aggregateColumns))
	for i, c := range aggregateColumns {
		rec[i] = row[c]
	}
	done := false
	return aggregateColumns, func() ([]string, error) {
		if done {
			return nil, io.EOF
		}
		done = true
		return rec, nil
	}, nil
}

// TestACloudBringsItsBillingFacts: a cloud this package has never heard of
// registers its FOCUS names, its resource ids and its warehouse, and the
// bill reader names its rows, joins its ids and reads its warehouse by
// scheme, with no edit here.
func TestACloudBringsItsBillingFacts(t *testing.T) {
	const zed fleet.Provider = "zedcloud"
	table := &zedTable{}
	var opened string
	providers.Register(&providers.RegInfo{Name: zed, Billing: &providers.Billing{
		FOCUSName:           "Zed Cloud",
		FOCUSNameWords:      []string{"zed cloud"},
		NormalizeResourceID: func(id string) string { return strings.TrimPrefix(id, "zc:") },
		Warehouse: &providers.Warehouse{Scheme: "zwh", Form: "zwh://TABLE", Dialect: string(Postgres),
			Open: func(_ context.Context, source string) (providers.WarehouseTable, error) {
				opened = source
				return table, nil
			}},
	}})
	for name, want := range map[string]fleet.Provider{"Zed Cloud": zed, "ZED CLOUD INC.": zed, " zedcloud ": zed, "Zed": "zed",
		"AWS": fleet.AWS, "Amazon Web Services": fleet.AWS, "Microsoft": fleet.Azure, "Google Cloud": fleet.GCP, "Oracle": "oracle"} {
		if got := ProviderOf(name); got != want {
			t.Errorf("ProviderOf(%q) = %q, want %q", name, got, want)
		}
	}
	if got := NormalizeID(zed, " zc:vm-1/ "); got != "vm-1" {
		t.Errorf("NormalizeID = %q", got)
	}
	if got := providers.FOCUSName(zed); got != "Zed Cloud" {
		t.Errorf("FOCUSName = %q", got)
	}

	s, err := Load(context.Background(), "zwh://bill", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if opened != "zwh://bill" || !table.closed || len(table.queries) != 1 || !strings.Contains(table.queries[0], `FROM "zdb"."bill"`) {
		t.Errorf("opened %q, closed %v, queries %q", opened, table.closed, table.queries)
	}
	if len(s.Resources) != 1 || s.Resources[0].Key != "zedcloud|vm-1" || s.Resources[0].GPUCount != 2 || s.EffectiveCost.String() != "8" || s.Rows != 4 {
		t.Errorf("summary %+v", s)
	}
	_, err = Load(context.Background(), "nowhere://x", Options{})
	if !errors.Is(err, ErrSource) || !strings.Contains(err.Error(), "zwh://TABLE") || !strings.Contains(err.Error(), "athena://WORKGROUP/DATABASE.TABLE") {
		t.Errorf("unknown scheme: %v", err)
	}
}
