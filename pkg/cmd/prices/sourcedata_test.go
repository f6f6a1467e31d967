package prices

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/shopspring/decimal"
)

// This test checks what `prices` shows against the shared source extracts,
// read here on their own, with the corrections that docs/catalog.md documents
// written out again by hand. It needs no catalog code.

// sharedData finds shared/data next to the repository root, or skips.
func sharedData(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Skip("repository root not found")
		}
		dir = parent
	}
	data := filepath.Join(dir, "..", "shared", "data")
	if _, err := os.Stat(filepath.Join(data, "prices")); err != nil {
		t.Skipf("shared reference data not found at %s", data)
	}
	return data
}

func readCSV(t *testing.T, path string) []map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var out []map[string]string
	for _, rec := range recs[1:] {
		m := map[string]string{}
		for i, h := range recs[0] {
			m[h] = rec[i]
		}
		out = append(out, m)
	}
	return out
}

// expectedOffer is one offer as the source data and the documented
// corrections say it should be shown.
type expectedOffer struct {
	provider, region, typ, gpu string
	count                      float64
	onDemand, spot             *decimal.Decimal
}

func (e expectedOffer) key() string { return e.provider + "/" + e.region + "/" + e.typ }

func dec(t *testing.T, s string) *decimal.Decimal {
	t.Helper()
	if s == "" {
		return nil
	}
	d, err := decimal.NewFromString(s)
	if err != nil {
		t.Fatalf("price %q: %v", s, err)
	}
	d = d.Round(6) // the catalog's precision (docs/catalog.md)
	return &d
}

// Documented corrections (docs/catalog.md), restated for this test.
var (
	countFixes = map[string]float64{
		"p2.8xlarge":               8,
		"p2.16xlarge":              16,
		"Standard_ND96isr_H100_v5": 8,
		"Standard_NV4as_v4":        0.125,
		"Standard_NV8as_v4":        0.25,
		"Standard_NV16as_v4":       0.5,
		// The all-regions and EU files round 1/6 and 1/3 to 3 places.
		"Standard_NV6ads_A10_v5":  0.166667,
		"Standard_NV12ads_A10_v5": 0.333333,
		"Standard_NV4ads_V710_v5": 0.166667,
		"Standard_NV8ads_V710_v5": 0.333333,
	}
	// GCP accelerator on-demand values removed as suspected placeholders.
	gcpPlaceholders = map[string]string{
		"H100x8": "33.60609", "H100-MEGAx8": "35.39149", "H200x8": "36.60258",
		"H100x1": "4.20076", "H100x2": "8.40152", "H100x4": "16.80304",
	}
)

// noDiscount drops a spot price that is not below the on-demand price.
func noDiscount(od, spot *decimal.Decimal) *decimal.Decimal {
	if od != nil && spot != nil && !spot.LessThan(*od) {
		return nil
	}
	return spot
}

func expectedWhole(t *testing.T, provider, path string) []expectedOffer {
	var out []expectedOffer
	for _, r := range readCSV(t, path) {
		count, err := strconv.ParseFloat(r["AcceleratorCount"], 64)
		if err != nil {
			t.Fatal(err)
		}
		if c, ok := countFixes[r["InstanceType"]]; ok {
			count = c
		}
		od := dec(t, r["Price"])
		out = append(out, expectedOffer{
			provider: provider, region: r["Region"], typ: r["InstanceType"], gpu: r["AcceleratorName"],
			count: count, onDemand: od, spot: noDiscount(od, dec(t, r["SpotPrice"])),
		})
	}
	return out
}

// gcpGPUs is GCP's published machine shapes, derived from the names.
func gcpGPUs(t *testing.T, machine string) (string, int) {
	t.Helper()
	m := regexp.MustCompile(`^(a2-highgpu|a2-megagpu|a2-ultragpu|a3-highgpu|a3-edgegpu|a3-megagpu|a3-ultragpu|a4-highgpu)-(\d+)g(-nolssd)?$`).FindStringSubmatch(machine)
	if m != nil {
		n, _ := strconv.Atoi(m[2])
		gpu := map[string]string{
			"a2-highgpu": "A100", "a2-megagpu": "A100", "a2-ultragpu": "A100-80GB", "a3-highgpu": "H100",
			"a3-edgegpu": "H100", "a3-megagpu": "H100-MEGA", "a3-ultragpu": "H200", "a4-highgpu": "B200",
		}[m[1]]
		return gpu, n
	}
	if v, ok := strings.CutPrefix(machine, "g2-standard-"); ok {
		return "L4", map[string]int{"4": 1, "8": 1, "12": 1, "16": 1, "32": 1, "24": 2, "48": 4, "96": 8}[v]
	}
	t.Fatalf("unknown GCP machine type %s", machine)
	return "", 0
}

func expectedGCP(t *testing.T, path string) []expectedOffer {
	rows := readCSV(t, path)
	accel := map[string]map[string]string{} // name x count / region
	for _, r := range rows {
		if r["InstanceType"] == "" {
			accel[r["AcceleratorName"]+"x"+r["AcceleratorCount"]+"/"+r["Region"]] = r
		}
	}
	sum := func(host, acc string) *decimal.Decimal {
		if host == "" || acc == "" {
			return nil
		}
		d := dec(t, host).Add(*dec(t, acc))
		return &d
	}
	var out []expectedOffer
	for _, h := range rows {
		if h["InstanceType"] == "" {
			continue
		}
		gpu, n := gcpGPUs(t, h["InstanceType"])
		name := fmt.Sprintf("%sx%d", gpu, n)
		a, ok := accel[name+"/"+h["Region"]]
		if !ok {
			continue
		}
		accOD := a["Price"]
		if accOD == gcpPlaceholders[name] {
			accOD = ""
		}
		od := sum(h["Price"], accOD)
		out = append(out, expectedOffer{
			provider: "gcp", region: h["Region"], typ: h["InstanceType"], gpu: gpu, count: float64(n),
			onDemand: od, spot: noDiscount(od, sum(h["SpotPrice"], a["SpotPrice"])),
		})
	}
	return out
}

type shownRow struct {
	Provider       string       `json:"provider"`
	Region         string       `json:"region"`
	InstanceType   string       `json:"instanceType"`
	GPUModel       string       `json:"gpuModel"`
	GPUCount       float64      `json:"gpuCount"`
	OnDemandHourly *json.Number `json:"onDemandHourly"`
	SpotHourly     *json.Number `json:"spotHourly"`
	PerGPUHourly   *json.Number `json:"perGpuHourly"`
}

func sameMoney(t *testing.T, got *json.Number, want *decimal.Decimal) bool {
	t.Helper()
	if got == nil || want == nil {
		return got == nil && want == nil
	}
	return dec(t, got.String()).Equal(*want)
}

// complete reports whether a whole row gives its hardware: the catalog
// never guesses a GPU count (docs/catalog.md, Precedence).
func complete(r map[string]string) bool {
	return r["AcceleratorName"] != "" && r["AcceleratorCount"] != "" && r["vCPUs"] != "" && r["MemoryGiB"] != ""
}

// n1GPUs restates docs/catalog.md's N1 GPU configurations: model, count,
// the largest N1 machine (vCPUs, GiB) that takes them.
var n1GPUs = []struct {
	gpu          string
	count        int
	maxV, maxMem float64
}{
	{"P4", 1, 24, 156}, {"P4", 2, 48, 312}, {"P4", 4, 96, 624},
	{"P100", 1, 16, 104}, {"P100", 2, 32, 208}, {"P100", 4, 64, 208},
	{"T4", 1, 48, 312}, {"T4", 2, 48, 312}, {"T4", 4, 96, 624},
	{"V100", 1, 12, 78}, {"V100", 2, 24, 156}, {"V100", 4, 48, 312}, {"V100", 8, 96, 624},
}

// expectedN1 joins the N1 hosts to SkyPilot's GPU rows of the region.
func expectedN1(t *testing.T, hosts, skypilot string) []expectedOffer {
	accel := map[string]map[string]string{}
	for _, r := range readCSV(t, skypilot) {
		if r["InstanceType"] == "" {
			n, _ := strconv.ParseFloat(r["AcceleratorCount"], 64)
			accel[fmt.Sprintf("%sx%g/%s", r["AcceleratorName"], n, r["Region"])] = r
		}
	}
	sum := func(a, b string) *decimal.Decimal {
		if a == "" || b == "" {
			return nil
		}
		d := dec(t, a).Add(*dec(t, b))
		return &d
	}
	var out []expectedOffer
	for _, h := range readCSV(t, hosts) {
		v, _ := strconv.ParseFloat(h["vCPUs"], 64)
		mem, _ := strconv.ParseFloat(h["MemoryGiB"], 64)
		for _, g := range n1GPUs {
			a, ok := accel[fmt.Sprintf("%sx%d/%s", g.gpu, g.count, h["Region"])]
			if !ok || v > g.maxV || mem > g.maxMem {
				continue
			}
			od := sum(h["Price"], a["Price"])
			out = append(out, expectedOffer{
				provider: "gcp", region: h["Region"], typ: fmt.Sprintf("%s+%dx%s", h["InstanceType"], g.count, g.gpu),
				gpu: g.gpu, count: float64(g.count), onDemand: od, spot: noDiscount(od, sum(h["SpotPrice"], a["SpotPrice"])),
			})
		}
	}
	return out
}

// expectedTPU: one offer per slice of at most 64 chips (a slice's chips
// are its TensorCores / cores per chip).
func expectedTPU(t *testing.T, path string) []expectedOffer {
	cores := map[string]float64{"tpu-v2": 2, "tpu-v3": 2, "tpu-v4": 2, "tpu-v5litepod": 1, "tpu-v5p": 2, "tpu-v6e": 1}
	var out []expectedOffer
	for _, r := range readCSV(t, path) {
		name := r["AcceleratorName"]
		i := strings.LastIndexByte(name, '-')
		n, err := strconv.ParseFloat(name[i+1:], 64)
		if err != nil || cores[name[:i]] == 0 {
			t.Fatalf("TPU slice %q", name)
		}
		chips := max(1, n/cores[name[:i]])
		if chips > 64 {
			continue
		}
		od := dec(t, r["Price"])
		out = append(out, expectedOffer{provider: "gcp", region: r["Region"], typ: name, gpu: name[:i], count: chips,
			onDemand: od, spot: noDiscount(od, dec(t, r["SpotPrice"]))})
	}
	return out
}

// byPrecedence keeps, per (provider, type, region), the offer of the first
// list that has it, and gives every offer of a type the GPUs of the first
// list that describes the type (docs/catalog.md, Precedence).
func byPrecedence(lists ...[]expectedOffer) []expectedOffer {
	seen := map[string]bool{}
	hw := map[string]expectedOffer{}
	var out []expectedOffer
	for _, l := range lists {
		for _, e := range l {
			if h, ok := hw[e.provider+"/"+e.typ]; ok {
				e.gpu, e.count = h.gpu, h.count
			} else {
				hw[e.provider+"/"+e.typ] = e
			}
			if !seen[e.key()] {
				seen[e.key()] = true
				out = append(out, e)
			}
		}
	}
	return out
}

func TestPricesAgreeWithSourceData(t *testing.T) {
	data := sharedData(t)
	prices := filepath.Join(data, "prices")
	embedded := filepath.Join("..", "..", "..", "pricing", "catalog", "data") // the two files gpufinops extracted
	onlyComplete := func(path string) string {
		rows := readCSV(t, path)
		tmp := filepath.Join(t.TempDir(), filepath.Base(path))
		var b strings.Builder
		w := csv.NewWriter(&b)
		head := []string{"InstanceType", "AcceleratorName", "AcceleratorCount", "vCPUs", "MemoryGiB", "GpuMemoryMiB", "Region", "AvailabilityZone", "Price", "SpotPrice"}
		_ = w.Write(head)
		for _, r := range rows {
			if complete(r) {
				rec := make([]string, len(head))
				for i, h := range head {
					rec[i] = r[h]
				}
				_ = w.Write(rec)
			}
		}
		w.Flush()
		if err := os.WriteFile(tmp, []byte(b.String()), 0o600); err != nil {
			t.Fatal(err)
		}
		return tmp
	}
	all := byPrecedence(
		expectedWhole(t, "aws", filepath.Join(prices, "skypilot-aws-gpu.csv")),
		expectedWhole(t, "aws", filepath.Join(embedded, "aws-previous-gen-ec2instances.csv")),
		expectedWhole(t, "azure", onlyComplete(filepath.Join(prices, "azure-gpu-eu-radar.csv"))),
		expectedWhole(t, "azure", filepath.Join(prices, "azure-gpu-allregions.csv")),
		expectedWhole(t, "azure", filepath.Join(prices, "skypilot-azure-gpu.csv")),
		expectedWhole(t, "gcp", filepath.Join(prices, "gcp-gpu-machines-cyclenerd.csv")),
		expectedGCP(t, filepath.Join(prices, "skypilot-gcp-gpu.csv")),
		expectedN1(t, filepath.Join(embedded, "gcp-n1-cyclenerd.csv"), filepath.Join(prices, "skypilot-gcp-gpu.csv")),
		expectedTPU(t, filepath.Join(prices, "gcp-tpu.csv")),
	)

	for _, tc := range []struct {
		opts  PricesOptions
		match func(expectedOffer) bool
	}{
		{PricesOptions{GPU: "H100"}, func(e expectedOffer) bool { return e.gpu == "H100" }},
		{PricesOptions{Provider: "gcp", Region: "us-central1"}, func(e expectedOffer) bool {
			return e.provider == "gcp" && e.region == "us-central1"
		}},
		{PricesOptions{GPU: "T4"}, func(e expectedOffer) bool { return e.gpu == "T4" }},
		{PricesOptions{GPU: "a100-80gb"}, func(e expectedOffer) bool { return e.gpu == "A100-80GB" }},
		{PricesOptions{Provider: "aws", Region: "us-east-1"}, func(e expectedOffer) bool {
			return e.provider == "aws" && e.region == "us-east-1"
		}},
		{PricesOptions{Provider: "azure"}, func(e expectedOffer) bool { return e.provider == "azure" }},
		{PricesOptions{Provider: "gcp"}, func(e expectedOffer) bool { return e.provider == "gcp" }},
	} {
		name := describeFilters(&tc.opts)
		t.Run(name, func(t *testing.T) {
			want := map[string]expectedOffer{}
			for _, e := range all {
				if tc.match(e) {
					want[e.key()] = e
				}
			}
			tc.opts.Output = "json"
			out, _ := runPrices(t, false, tc.opts)
			var doc struct{ Items []shownRow }
			if err := json.Unmarshal([]byte(out), &doc); err != nil {
				t.Fatalf("output is not JSON: %v", err)
			}
			got := doc.Items
			if len(got) != len(want) {
				t.Errorf("prices shows %d offers, the source data has %d", len(got), len(want))
			}
			for _, g := range got {
				k := g.Provider + "/" + g.Region + "/" + g.InstanceType
				e, ok := want[k]
				if !ok {
					t.Errorf("%s is shown but not in the source data", k)
					continue
				}
				if g.GPUModel != e.gpu || g.GPUCount != e.count {
					t.Errorf("%s: %v x %s, source says %v x %s", k, g.GPUCount, g.GPUModel, e.count, e.gpu)
				}
				if !sameMoney(t, g.OnDemandHourly, e.onDemand) {
					t.Errorf("%s: on-demand %v, source says %v", k, g.OnDemandHourly, e.onDemand)
				}
				if !sameMoney(t, g.SpotHourly, e.spot) {
					t.Errorf("%s: spot %v, source says %v", k, g.SpotHourly, e.spot)
				}
				var perGPU *decimal.Decimal
				if e.onDemand != nil {
					d := e.onDemand.DivRound(decimal.NewFromFloat(e.count), 6)
					perGPU = &d
				}
				if !sameMoney(t, g.PerGPUHourly, perGPU) {
					t.Errorf("%s: per GPU %v, want %v", k, g.PerGPUHourly, perGPU)
				}
			}
			checkSortedByPerGPU(t, got)
		})
	}
}

// checkSortedByPerGPU checks ascending $/GPU-hour with unpriced rows last.
func checkSortedByPerGPU(t *testing.T, rows []shownRow) {
	t.Helper()
	var prev *decimal.Decimal
	seenUnpriced := false
	for i, r := range rows {
		if r.PerGPUHourly == nil {
			seenUnpriced = true
			continue
		}
		if seenUnpriced {
			t.Errorf("row %d (%s) is priced but follows an unpriced row", i, r.InstanceType)
			return
		}
		cur := dec(t, r.PerGPUHourly.String())
		if prev != nil && cur.LessThan(*prev) {
			t.Errorf("row %d (%s): %s per GPU after %s", i, r.InstanceType, cur, prev)
			return
		}
		prev = cur
	}
}
