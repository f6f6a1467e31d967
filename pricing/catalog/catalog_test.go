package catalog

import (
	"io/fs"
	"sort"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pricing"
)

func embeddedForTest(t *testing.T) pricing.Catalog {
	t.Helper()
	c, err := Embedded()
	if err != nil {
		t.Fatalf("Embedded: %v", err)
	}
	return c
}

func TestEmbeddedLoadsOnce(t *testing.T) {
	a := embeddedForTest(t)
	b := embeddedForTest(t)
	if a != b {
		t.Error("Embedded returned two different catalogs; want one shared instance")
	}
	c := a.(*catalog)
	// 891 AWS + 189 Azure rows, and 338 GCP host rows that have an accelerator row.
	if got := len(c.offers); got != 1418 {
		t.Errorf("offers = %d, want 1418", got)
	}
	// 87 AWS + 41 Azure + 27 GCP machine types.
	if got := len(c.types); got != 155 {
		t.Errorf("types = %d, want 155", got)
	}
	if got := len(c.advice); got != 824 {
		t.Errorf("spot advice entries = %d, want 824 (Linux)", got)
	}
}

func TestOffer(t *testing.T) {
	c := embeddedForTest(t)
	tests := []struct {
		provider           fleet.Provider
		region, typ        string
		model              string
		count, gpuMem      float64
		vcpus, mem         float64
		arch               string
		onDemand, spot     string // "" = nil
		spotZone, srcMatch string
	}{
		{fleet.AWS, "us-east-1", "p5.48xlarge", "H100", 8, 80, 192, 2048, "x86_64", "55.04", "10.2397", "use1-atl2-az1", "aws/vms.csv @00148f2"},
		{fleet.AWS, "us-east-1", "g5g.xlarge", "T4g", 1, 16, 4, 8, "arm64", "0.42", "0.1309", "use1-az2", ""},
		{fleet.AWS, "us-east-2", "trn2.48xlarge", "Trainium2", 16, 96, 192, 2048, "x86_64", "", "", "", ""},
		{fleet.AWS, "us-east-1", "g6f.large", "L4", 0.125, 2861.0 / 1024, 2, 8, "x86_64", "", "", "", ""},
		{fleet.Azure, "eastus", "Standard_ND96isr_H100_v5", "H100", 8, 80, 96, 1900, "x86_64", "98.32", "", "", "azure/vms.csv @20291d7"},
		{fleet.Azure, "eastus", "standard_nv4as_v4", "Radeon MI25", 0.125, 2, 4, 14, "x86_64", "0.233", "0.02563", "", ""},
		{fleet.Azure, "southcentralus", "Standard_NC12", "K80", 2, 12, 12, 112, "x86_64", "2.16", "0.2376", "", ""},
		{fleet.GCP, "us-central1", "a2-highgpu-1g", "A100", 1, 40, 12, 85, "x86_64", "3.67339", "", "", "host+accelerator"},
		{fleet.GCP, "us-central1", "a3-highgpu-8g", "H100", 8, 80, 208, 1872, "x86_64", "", "26.83013", "us-central1-a", ""},
		{fleet.GCP, "us-central1", "a4-highgpu-8g", "B200", 8, 180, 224, 3968, "x86_64", "90.216", "32.6064", "us-central1-b", ""},
		{fleet.GCP, "us-central1", "a3-megagpu-8g", "H100-MEGA", 8, 80, 208, 1872, "x86_64", "92.21427", "28.17013", "us-central1-a", ""},
	}
	for _, tc := range tests {
		t.Run(string(tc.provider)+"/"+tc.region+"/"+tc.typ, func(t *testing.T) {
			o, ok := c.Offer(tc.provider, tc.region, tc.typ)
			if !ok {
				t.Fatal("no offer")
			}
			ty := o.Type
			if ty.GPUModel != tc.model || ty.GPUCount != tc.count || ty.GPUMemoryGiB != tc.gpuMem ||
				ty.VCPUs != tc.vcpus || ty.MemoryGiB != tc.mem || ty.Arch != tc.arch {
				t.Errorf("type = %+v", ty)
			}
			if tc.onDemand != "" {
				checkPrice(t, "on-demand", o.OnDemand, tc.onDemand, "")
			}
			if tc.spot != "" {
				checkPrice(t, "spot", o.Spot, tc.spot, tc.spotZone)
			}
			if tc.srcMatch != "" && o.OnDemand != nil && !strings.Contains(o.OnDemand.Source, tc.srcMatch) {
				t.Errorf("source %q does not mention %q", o.OnDemand.Source, tc.srcMatch)
			}
		})
	}
}

func checkPrice(t *testing.T, what string, p *pricing.Price, want, zone string) {
	t.Helper()
	if p == nil {
		t.Errorf("%s price is nil, want %s", what, want)
		return
	}
	if p.Hourly.String() != want || p.Currency != "USD" || p.Unit != "hour" || p.AsOf != "2026-11-30" {
		t.Errorf("%s price = %s %s/%s as of %s, want %s USD/hour as of 2026-11-30", what, p.Hourly, p.Currency, p.Unit, p.AsOf, want)
	}
	if zone != "" && p.Zone != zone {
		t.Errorf("%s zone = %q, want %q", what, p.Zone, zone)
	}
}

func TestUnpricedOffers(t *testing.T) {
	c := embeddedForTest(t)
	for _, tc := range []struct {
		provider       fleet.Provider
		region, typ    string
		noOD, noSpot   bool
		correctedField string
	}{
		{fleet.AWS, "us-east-2", "trn2.48xlarge", true, false, "Price"},
		{fleet.AWS, "ap-south-1", "p4d.24xlarge", false, true, "SpotPrice"},
		{fleet.Azure, "westus", "Standard_NV16as_v4", true, true, "Price"},
		{fleet.Azure, "eastus", "Standard_NC40ads_H100_v5", false, true, "SpotPrice"},
		{fleet.GCP, "us-central1", "a3-highgpu-8g", true, false, ""},
		{fleet.GCP, "us-central1", "a3-highgpu-1g", true, false, ""},
		{fleet.GCP, "us-east5", "a3-megagpu-8g", true, false, ""},
		{fleet.GCP, "europe-west1", "a3-ultragpu-8g", true, false, ""},
	} {
		o, ok := c.Offer(tc.provider, tc.region, tc.typ)
		if !ok {
			t.Errorf("%s %s %s: no offer", tc.provider, tc.region, tc.typ)
			continue
		}
		if (o.OnDemand == nil) != tc.noOD || (o.Spot == nil) != tc.noSpot {
			t.Errorf("%s %s %s: on-demand %v spot %v, want nil on-demand %v, nil spot %v",
				tc.provider, tc.region, tc.typ, o.OnDemand, o.Spot, tc.noOD, tc.noSpot)
		}
		if tc.correctedField != "" && !hasCorrection(c, tc.provider, tc.typ, tc.region, tc.correctedField) {
			t.Errorf("%s %s %s: no %s correction reported", tc.provider, tc.region, tc.typ, tc.correctedField)
		}
	}
	if _, ok := c.Offer(fleet.GCP, "asia-east1", "a3-megagpu-8g"); ok {
		t.Error("a3-megagpu-8g is offered in asia-east1, which has no H100-MEGA accelerator row")
	}
	if _, ok := c.InstanceType(fleet.GCP, "a3-megagpu-8g"); !ok {
		t.Error("a3-megagpu-8g hardware is missing")
	}
}

func hasCorrection(c pricing.Catalog, p fleet.Provider, typ, region, field string) bool {
	for _, x := range c.Corrections() {
		if x.Provider == p && x.InstanceType == typ && x.Region == region && x.Field == field {
			return true
		}
	}
	return false
}

func TestCorrections(t *testing.T) {
	c := embeddedForTest(t)
	want := []pricing.Correction{
		{Provider: fleet.AWS, InstanceType: "trn2.48xlarge", Region: "us-east-2", Field: "GpuMemoryMiB", From: "524288", To: "98304"},
		{Provider: fleet.Azure, InstanceType: "Standard_ND96isr_H100_v5", Region: "eastus", Field: "AcceleratorCount", From: "12", To: "8"},
		{Provider: fleet.Azure, InstanceType: "Standard_ND96isr_H100_v5", Region: "eastus", Field: "SpotPrice", From: "98.32", To: "unpriced"},
		{Provider: fleet.GCP, InstanceType: "accelerator:H100x8", Region: "us-central1", Field: "Price", From: "33.60609", To: "unpriced"},
		{Provider: fleet.GCP, InstanceType: "accelerator:H100-MEGAx8", Region: "us-east5", Field: "Price", From: "35.39149", To: "unpriced"},
		{Provider: fleet.GCP, InstanceType: "a3-megagpu-8g", Region: "asia-east1", Field: "Offer", From: "host row only", To: "not offered"},
	}
	got := c.Corrections()
	for _, w := range want {
		found := false
		for _, g := range got {
			if g.Reason == "" {
				t.Errorf("correction without a reason: %+v", g)
			}
			g.Reason = ""
			if g == w {
				found = true
				break
			}
		}
		if !found {
			t.Errorf("missing correction %+v", w)
		}
	}
	for _, g := range got {
		if g.InstanceType == "a4-highgpu-8g" {
			t.Errorf("a4-highgpu-8g's 0.0 host price is valid, not a correction: %+v", g)
		}
	}
	sorted := sort.SliceIsSorted(got, func(i, j int) bool {
		a, b := got[i], got[j]
		if a.Provider != b.Provider {
			return a.Provider < b.Provider
		}
		if a.InstanceType != b.InstanceType {
			return a.InstanceType < b.InstanceType
		}
		return a.Region < b.Region
	})
	if !sorted {
		t.Error("Corrections() is not sorted by provider, type, region")
	}
}

func TestNoSpotAtOrAboveOnDemand(t *testing.T) {
	for _, o := range embeddedForTest(t).Offers(pricing.Query{}) {
		if o.OnDemand != nil && o.Spot != nil && !o.Spot.Hourly.LessThan(o.OnDemand.Hourly) {
			t.Errorf("%s %s %s: spot %s >= on-demand %s", o.Type.Provider, o.Region, o.Type.Name, o.Spot.Hourly, o.OnDemand.Hourly)
		}
		for _, p := range []*pricing.Price{o.OnDemand, o.Spot} {
			if p != nil && p.Hourly.IsZero() {
				t.Errorf("%s %s %s: zero price", o.Type.Provider, o.Region, o.Type.Name)
			}
		}
	}
}

func TestOffersQuery(t *testing.T) {
	c := embeddedForTest(t)
	all := c.Offers(pricing.Query{})
	if len(all) != 1418 {
		t.Fatalf("all offers = %d", len(all))
	}
	for i := 1; i < len(all); i++ {
		a, b := all[i-1], all[i]
		ka := string(a.Type.Provider) + "\x00" + a.Region + "\x00" + a.Type.Name
		kb := string(b.Type.Provider) + "\x00" + b.Region + "\x00" + b.Type.Name
		if ka >= kb {
			t.Fatalf("offers not sorted: %s before %s", ka, kb)
		}
	}
	for _, tc := range []struct {
		name string
		q    pricing.Query
		want int
	}{
		{"gpu case-insensitive", pricing.Query{GPUModel: "h200"}, 17 + 18},
		{"provider and region", pricing.Query{Provider: fleet.Azure, Region: "EastUS"}, 27},
		{"instance type", pricing.Query{InstanceType: "P5.48XLARGE"}, 12},
		{"min memory", pricing.Query{Provider: fleet.GCP, MinGPUMemoryGiB: 141}, 18 + 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := c.Offers(tc.q)
			if len(got) != tc.want {
				t.Errorf("got %d offers, want %d", len(got), tc.want)
			}
			for _, o := range got {
				if tc.q.MinGPUMemoryGiB > 0 && o.Type.GPUMemoryGiB < tc.q.MinGPUMemoryGiB {
					t.Errorf("%s has %v GiB per GPU", o.Type.Name, o.Type.GPUMemoryGiB)
				}
			}
		})
	}
	// Offers hands out copies: changing one must not change the catalog.
	o := c.Offers(pricing.Query{InstanceType: "p5.48xlarge", Region: "us-east-1"})[0]
	o.OnDemand.Region = "changed"
	if again, _ := c.Offer(fleet.AWS, "us-east-1", "p5.48xlarge"); again.OnDemand.Region != "us-east-1" {
		t.Error("the catalog's price was changed through a returned offer")
	}
}

func TestGPU(t *testing.T) {
	c := embeddedForTest(t)
	h100, ok := c.GPU("h100")
	if !ok {
		t.Fatal("no H100")
	}
	if h100.Vendor != "nvidia" || h100.MemoryGiB != 80 || h100.FP16TFLOPS == nil || *h100.FP16TFLOPS != 989.5 {
		t.Errorf("H100 = %+v", h100)
	}
	wantMIG := []pricing.MIGProfile{
		{Name: "1g.10gb", Slices: 1, MemoryGB: 10},
		{Name: "1g.10gb+me", Slices: 1, MemoryGB: 10, MediaExtensions: true},
		{Name: "1g.20gb", Slices: 1, MemoryGB: 20},
		{Name: "2g.20gb", Slices: 2, MemoryGB: 20},
		{Name: "3g.40gb", Slices: 3, MemoryGB: 40},
		{Name: "4g.40gb", Slices: 4, MemoryGB: 40},
		{Name: "7g.80gb", Slices: 7, MemoryGB: 80},
	}
	if d := cmp.Diff(wantMIG, h100.MIGProfiles); d != "" {
		t.Errorf("H100 MIG profiles (-want +got):\n%s", d)
	}
	if v100, _ := c.GPU("V100"); v100.INT8TOPS != nil || len(v100.MIGProfiles) != 0 {
		t.Errorf("V100 = %+v, want no INT8 figure and no MIG", v100)
	}
	if mega, ok := c.GPU("H100-MEGA"); !ok || mega.Name != "H100" {
		t.Errorf("H100-MEGA = %+v, want the H100 spec", mega)
	}
	for name, vendor := range map[string]string{
		"MI300X": "amd", "Radeon Pro V520": "amd", "Inferentia2": "aws", "Trainium": "aws",
		"Gaudi HL-205": "intel", "Virtex UltraScale (VU9P)": "xilinx", "L4": "nvidia", "K80": "nvidia",
	} {
		if g, ok := c.GPU(name); !ok || g.Vendor != vendor {
			t.Errorf("GPU(%q) vendor = %q (found %v), want %q", name, g.Vendor, ok, vendor)
		}
	}
	// Every accelerator an instance type has is known by GPU().
	for _, o := range c.Offers(pricing.Query{}) {
		if _, ok := c.GPU(o.Type.GPUModel); !ok {
			t.Errorf("GPU(%q) unknown (used by %s)", o.Type.GPUModel, o.Type.Name)
		}
	}
}

func TestSpotAdvice(t *testing.T) {
	c := embeddedForTest(t)
	a, ok := c.SpotAdvice(fleet.AWS, "us-east-1", "p5.48xlarge")
	want := pricing.SpotAdvice{SavingsPercent: 52, Band: ">20%", BandIndex: 4, MaxInterruptPercent: 100, AsOf: "2025-06-28"}
	a.Source = ""
	if !ok || a != want {
		t.Errorf("advice = %+v (found %v), want %+v", a, ok, want)
	}
	if a, _ := c.SpotAdvice(fleet.AWS, "us-east-1", "g5.xlarge"); a.SavingsPercent != 59 {
		t.Errorf("g5.xlarge us-east-1 savings = %d, want 59", a.SavingsPercent)
	}
	if _, ok := c.SpotAdvice(fleet.GCP, "us-east-1", "p5.48xlarge"); ok {
		t.Error("advice for GCP")
	}
}

func TestSources(t *testing.T) {
	src := embeddedForTest(t).Sources()
	if len(src) != 13 {
		t.Errorf("%d sources, want 13", len(src))
	}
	byName := map[string]pricing.Source{}
	for _, s := range src {
		if s.Origin == "" || s.AsOf == "" {
			t.Errorf("incomplete source %+v", s)
		}
		byName[s.Name] = s
	}
	aws := byName["AWS GPU prices"]
	if !strings.Contains(aws.Origin, "00148f2af3672e2229b4f7bf8157d5a3f36e3c35") || aws.AsOf != "2026-11-30" ||
		!strings.Contains(aws.Note, "source fetch date not published") {
		t.Errorf("AWS source = %+v", aws)
	}
	if spot := byName["AWS spot advisor"]; spot.AsOf != "2025-06-28" {
		t.Errorf("spot advisor source = %+v", spot)
	}
}

func TestFamilyOf(t *testing.T) {
	for _, tc := range []struct {
		p          fleet.Provider
		name, want string
	}{
		{fleet.AWS, "p6-b200.48xlarge", "p6-b200"},
		{fleet.AWS, "g5g.xlarge", "g5g"},
		{fleet.GCP, "a3-edgegpu-8g-nolssd", "a3-edgegpu"},
		{fleet.GCP, "g2-standard-4", "g2-standard"},
		{fleet.Azure, "Standard_NC24ads_A100_v4", "NCads_A100_v4"},
		{fleet.Azure, "Standard_NC12", "NC"},
	} {
		if got := familyOf(tc.p, tc.name); got != tc.want {
			t.Errorf("familyOf(%s, %s) = %q, want %q", tc.p, tc.name, got, tc.want)
		}
	}
}

func TestParseMIGProfiles(t *testing.T) {
	got, err := parseMIGProfiles("1g.18gb+me;7g.141gb")
	want := []pricing.MIGProfile{
		{Name: "1g.18gb+me", Slices: 1, MemoryGB: 18, MediaExtensions: true},
		{Name: "7g.141gb", Slices: 7, MemoryGB: 141},
	}
	if err != nil || !cmp.Equal(got, want) {
		t.Errorf("got %+v, %v", got, err)
	}
	for _, bad := range []string{"7g", "g.40gb", "3g.40", "xg.10gb"} {
		if _, err := parseMIGProfiles(bad); err == nil {
			t.Errorf("parseMIGProfiles(%q) succeeded", bad)
		}
	}
}

// dataWith returns the embedded data files with some replaced.
func dataWith(t *testing.T, replace map[string]string) fstest.MapFS {
	t.Helper()
	sub, err := fs.Sub(dataFS, "data")
	if err != nil {
		t.Fatal(err)
	}
	m := fstest.MapFS{}
	entries, err := fs.ReadDir(sub, ".")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := fs.ReadFile(sub, e.Name())
		if err != nil {
			t.Fatal(err)
		}
		m[e.Name()] = &fstest.MapFile{Data: b}
	}
	for name, data := range replace {
		if data == "" {
			delete(m, name)
			continue
		}
		m[name] = &fstest.MapFile{Data: []byte(data)}
	}
	return m
}

func TestLoadErrors(t *testing.T) {
	machines, _ := fs.ReadFile(dataWith(t, nil), fileGCPMachines)
	for _, tc := range []struct {
		name    string
		replace map[string]string
		want    string
	}{
		{"stale correction", map[string]string{fileCorrections: "provider,instanceType,region,field,from,to,reason\n" +
			"aws,p5.48xlarge,*,AcceleratorCount,4,8,test\n"}, "corrections.csv:2: correction of aws p5.48xlarge AcceleratorCount from \"4\" matches no row"},
		{"bad correction field", map[string]string{fileCorrections: "provider,instanceType,region,field,from,to,reason\n" +
			"aws,p5.48xlarge,*,Region,a,b,test\n"}, `corrections.csv:2: field "Region" is not a correctable column`},
		{"unmapped GCP machine", map[string]string{fileGCPMachines: strings.Replace(string(machines), "a4-highgpu-8g,B200,8\n", "", 1)},
			"GCP machine type a4-highgpu-8g has no row in gcp-machine-types.csv"},
		{"unknown maker", map[string]string{fileAccelerators: "name,vendor,memory_gib,same_as,notes\nT4,nvidia,,,\n"},
			"has no row in accelerators.csv"},
		{"data file without a source", map[string]string{"extra.csv": "a\n1\n"}, "sources.json: no entry for data file extra.csv"},
		{"bad price", map[string]string{"skypilot-azure-gpu.csv": "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuMemoryMiB,Region,AvailabilityZone,Price,SpotPrice\n" +
			"Standard_NC6,K80,1,6,56,,eastus,,abc,\n"}, `skypilot-azure-gpu.csv:2: on-demand price "abc" is not a non-negative number`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := load(dataWith(t, tc.replace))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

func BenchmarkLoad(b *testing.B) {
	sub, err := fs.Sub(dataFS, "data")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := load(sub); err != nil {
			b.Fatal(err)
		}
	}
}
