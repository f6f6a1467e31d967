package e2e

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"io"
	"math/big"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gpufinops/gpufinops/internal/focusgen"
	"github.com/gpufinops/gpufinops/internal/pgserver"
	"github.com/gpufinops/gpufinops/internal/warehousesim"
	"github.com/gpufinops/gpufinops/pkg/cmdutil"
	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/providers/aws"
	"github.com/gpufinops/gpufinops/providers/file"
	"github.com/gpufinops/gpufinops/providers/gcp"
	"github.com/gpufinops/gpufinops/providers/simkit"
)

// TestBillThroughTheWarehouses: the demo fleet served as cloudsim
// --focus-export --sql-engine postgres serves it (the three clouds and the
// Athena and BigQuery APIs on one port, the export loaded into PostgreSQL);
// `analyze --provider aws,azure,gcp` with --billing FILE, athena://… and
// bigquery://… gives the same report, byte for byte but for the source's
// name, and its reconciliation is the export's GPU EffectiveCost to the
// cent, summed here from the CSV with exact rationals.
func TestBillThroughTheWarehouses(t *testing.T) {
	if err := pgserver.Installed(); err != nil {
		t.Skipf("the warehouses need PostgreSQL: %v", err)
	}
	demo, err := file.Demo()
	if err != nil {
		t.Fatal(err)
	}
	served, cat := gcpServed(t, cloudFleet(t, demo, fleet.AWS, fleet.Azure, fleet.GCP))
	start := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	path := filepath.Join(t.TempDir(), "bill.csv")
	out, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	totals, err := focusgen.WriteCSV(out, served.Instances, warehousesim.Bill(start, 720, cat))
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}

	kit, err := simkit.New(simkit.Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	wh, err := warehousesim.Start(t.Context(), warehousesim.Options{CSV: path, Header: focusgen.Header, Kit: kit})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := wh.Close(); err != nil {
			t.Error(err)
		}
	})
	wh.AthenaSim.PageSize, wh.BigQuerySim.PageSize = 7, 5 // the aggregates come back in several pages
	sims := wh.Sims()
	for _, reg := range simkit.Registered() {
		s, err := reg.Build(served, simkit.Env{Kit: kit, Now: func() time.Time { return demoEnd }})
		if err != nil {
			t.Fatal(err)
		}
		sims = append(sims, s)
	}
	url := h2cServer(t, simkit.Mux(kit, sims...))
	allCloudsEnv(t, url, map[string]string{gcp.BigQueryEndpointEnv: url + "/"})
	aws.AthenaPoll = 10 * time.Millisecond

	athena, bigquery := wh.Sources()
	reports := map[string]string{}
	for _, src := range []string{path, athena, bigquery} {
		kit.ResetCounts()
		t.Setenv("XDG_CACHE_HOME", t.TempDir()) // each run prices live, none from the last one's cache
		code, doc, stderr := gpufinops(t, "analyze", "--provider", "aws,azure,gcp", "-o", "json",
			"--billing", src, "--billing-start", "2026-11-01", "--billing-end", "2026-12-01")
		if code != cmdutil.ExitOK {
			t.Fatalf("analyze --billing %s exited %d: %s", src, code, stderr)
		}
		reports[src] = strings.ReplaceAll(doc, src, "SOURCE")
		counts := kit.Counts()
		t.Logf("--billing %s: athena %v, bigquery %v", src, counts["athena"], counts["bigquery"])
		switch src {
		case athena:
			if counts["athena"]["StartQueryExecution"] != 1 || counts["athena"]["GetQueryResults"] < 2 || counts["bigquery"] != nil {
				t.Errorf("--billing %s: requests %v, want one Athena query", src, counts)
			}
		case bigquery:
			if counts["bigquery"]["jobs.query"] != 1 || counts["bigquery"]["jobs.getQueryResults"] < 1 || counts["athena"] != nil {
				t.Errorf("--billing %s: requests %v, want one BigQuery query", src, counts)
			}
		}
	}
	for _, src := range []string{athena, bigquery} {
		if reports[src] != reports[path] {
			t.Errorf("the report through %s differs from the file's: %s", src, lineDiff(reports[path], reports[src]))
		}
	}

	var r struct {
		Billing struct {
			Bill       json.Number `json:"billGpuEffectiveCost"`
			Report     json.Number `json:"reportWindowCost"`
			Unmatched  json.Number `json:"unmatchedEffectiveCost"`
			Reconciled bool        `json:"reconciled"`
			AtBill     int         `json:"instancesAtBillRate"`
			Line       string      `json:"line"`
		} `json:"billing"`
	}
	dec := json.NewDecoder(strings.NewReader(reports[path]))
	dec.UseNumber()
	if err := dec.Decode(&r); err != nil {
		t.Fatal(err)
	}
	want := gpuEffectiveCost(t, path, start, start.AddDate(0, 1, 0))
	if got := cents(t, string(r.Billing.Bill)); got != cents(t, want.FloatString(6)) {
		t.Errorf("the report's bill GPU EffectiveCost %s, the export's %s", r.Billing.Bill, want.FloatString(6))
	}
	if want.FloatString(6) != totals.GPUEffective.StringFixed(6) {
		t.Errorf("the CSV sums to %s, the generator wrote %s", want.FloatString(6), totals.GPUEffective.StringFixed(6))
	}
	if !r.Billing.Reconciled || r.Billing.AtBill == 0 || cents(t, string(r.Billing.Report))+cents(t, string(r.Billing.Unmatched)) != cents(t, string(r.Billing.Bill)) {
		t.Errorf("not reconciled: %+v", r.Billing)
	}
	t.Logf("bill %s USD, report %s, unmatched %s, %d instances at bill rate: %s", r.Billing.Bill, r.Billing.Report, r.Billing.Unmatched, r.Billing.AtBill, r.Billing.Line)
}

// gpuEffectiveCost sums the EffectiveCost of the export's GPU instance
// rows (a SkuPriceDetails GpuCount above zero) charged in [from, to),
// exactly, with nothing of gpufinops' reader.
func gpuEffectiveCost(t *testing.T, path string, from, to time.Time) *big.Rat {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := csv.NewReader(f)
	header, err := r.Read()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, h := range header {
		col[h] = i
	}
	sum, rows := new(big.Rat), 0
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		var sku struct{ GpuCount float64 }
		if json.Unmarshal([]byte(rec[col["SkuPriceDetails"]]), &sku) != nil || sku.GpuCount <= 0 {
			continue
		}
		at, err := time.Parse("2006-01-02 15:04:05", rec[col["ChargePeriodStart"]])
		if err != nil {
			t.Fatal(err)
		}
		if at.Before(from) || !at.Before(to) {
			continue
		}
		v, ok := new(big.Rat).SetString(rec[col["EffectiveCost"]])
		if !ok {
			t.Fatalf("EffectiveCost %q", rec[col["EffectiveCost"]])
		}
		sum.Add(sum, v)
		rows++
	}
	if rows == 0 {
		t.Fatal("no GPU rows in the export")
	}
	return sum
}

// cents is an amount rounded half away from zero to whole cents.
func cents(t *testing.T, amount string) int64 {
	t.Helper()
	v, ok := new(big.Rat).SetString(amount)
	if !ok {
		t.Fatalf("amount %q", amount)
	}
	v.Mul(v, big.NewRat(100, 1))
	n, d := new(big.Int).Set(v.Num()), v.Denom()
	half := new(big.Int).Quo(d, big.NewInt(2))
	if n.Sign() < 0 {
		n.Sub(n, half)
	} else {
		n.Add(n, half)
	}
	return n.Quo(n, d).Int64()
}

// lineDiff shows the first line where a and b differ.
func lineDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := range min(len(al), len(bl)) {
		if al[i] != bl[i] {
			return "line " + strconv.Itoa(i+1) + ":\n file:      " + al[i] + "\n warehouse: " + bl[i]
		}
	}
	return "lengths differ"
}
