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
	// AWS: 891 SkyPilot rows + 82 previous-generation rows. Azure: 132
	// radar + 795 all-regions + 22 SkyPilot US offers that no file of
	// higher precedence prices. GCP: 984 Cyclenerd + 34 SkyPilot
	// host+accelerator (54 priced, 20 not) + 2,226 N1 with attached GPUs
	// + 225 TPU slices of at most 64 chips.
	// Managed AI services: 221 SageMaker estimates (the EC2 offers of the
	// 17 ml.* types sagemaker-markup.csv prices) + 8 Vertex AI machines
	// (a3-highgpu-1g/2g/4g/8g × prediction/training, us-central1).
	byService := map[fleet.ManagedService]int{}
	for _, o := range c.offers {
		byService[o.Type.Service]++
	}
	if want := (map[fleet.ManagedService]int{"": 5419, fleet.SageMaker: 221, fleet.VertexAI: 8}); !cmp.Equal(byService, want) {
		t.Errorf("offers by service = %v, want %v", byService, want)
	}
	// 94 AWS + 66 Azure + 275 GCP types (34 machine types, 212 N1 + GPU
	// configurations, 29 TPU slices).
	// + 67 SageMaker ml.* types (74 sold, less g7 and p6e-gb200, which the
	// catalog has no EC2 row for) + 492 Vertex AI machines (the 246 GCP GPU
	// types that are not TPU slices, × prediction/training).
	types := map[fleet.ManagedService]int{}
	for _, ty := range c.types {
		types[ty.Service]++
	}
	if want := (map[fleet.ManagedService]int{"": 435, fleet.SageMaker: 67, fleet.VertexAI: 492}); !cmp.Equal(types, want) {
		t.Errorf("types by service = %v, want %v", types, want)
	}
	// 824 EC2 (Linux) + 556 for the ml.* types training accepts.
	if got := len(c.advice); got != 1380 {
		t.Errorf("spot advice entries = %d, want 1380", got)
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
		asOf               string
	}{
		{fleet.AWS, "us-east-1", "p5.48xlarge", "H100", 8, 80, 192, 2048, "x86_64", "55.04", "10.2397", "use1-atl2-az1", "aws/vms.csv @00148f2", "2026-11-30"},
		{fleet.AWS, "us-east-1", "g5g.xlarge", "T4g", 1, 16, 4, 8, "arm64", "0.42", "0.1309", "use1-az2", "", "2026-11-30"},
		{fleet.AWS, "us-east-2", "trn2.48xlarge", "Trainium2", 16, 96, 192, 2048, "x86_64", "", "", "", "", ""},
		{fleet.AWS, "us-east-1", "g6f.large", "L4", 0.125, 2861.0 / 1024, 2, 8, "x86_64", "", "", "", "", ""},
		{fleet.AWS, "us-east-1", "g3.4xlarge", "M60", 1, 8, 16, 122, "x86_64", "1.14", "", "", "tsaol/aws-gpu @2d0108c", "2025-11-30"},
		{fleet.AWS, "eu-west-1", "p2.16xlarge", "K80", 16, 12, 64, 732, "x86_64", "15.552", "", "", "", "2025-11-30"},
		{fleet.Azure, "eastus", "Standard_ND96isr_H100_v5", "H100", 8, 80, 96, 1900, "x86_64", "98.32", "", "", "anycloud-sh/catalog azure/vms.csv @62ff0a9", "2026-05-20"},
		{fleet.Azure, "eastus", "standard_nv4as_v4", "MI25", 0.125, 2, 4, 14, "x86_64", "0.233", "0.043058", "", "", "2026-05-20"},
		{fleet.Azure, "swedencentral", "Standard_ND96isr_H200_v5", "H200", 8, 141, 96, 1850, "x86_64", "110.272", "", "", "azure-pricing-radar", "2026-08-22"},
		{fleet.Azure, "southcentralus", "Standard_NC12", "K80", 2, 12, 12, 112, "x86_64", "2.16", "0.2376", "", "", "2026-11-30"},
		{fleet.GCP, "us-central1", "a2-highgpu-1g", "A100", 1, 40, 12, 85, "x86_64", "3.673385", "", "", "Cyclenerd", "2026-07-30"},
		{fleet.GCP, "europe-west4", "a2-highgpu-1g", "A100", 1, 40, 12, 85, "x86_64", "3.747972", "", "", "Cyclenerd", "2026-07-30"},
		{fleet.GCP, "us-central1", "a3-highgpu-8g", "H100", 8, 80, 208, 1872, "x86_64", "88.49", "50.609541", "", "", "2026-07-30"},
		{fleet.GCP, "us-central1", "a4-highgpu-8g", "B200", 8, 180, 224, 3968, "x86_64", "90.216", "32.6064", "us-central1-b", "host+accelerator", "2026-11-30"},
		{fleet.GCP, "us-central1", "a3-megagpu-8g", "H100-MEGA", 8, 80, 208, 1872, "x86_64", "92.21427", "28.17013", "us-central1-a", "", "2026-11-30"},
		{fleet.GCP, "us-central1", "n1-standard-8+2xT4", "T4", 2, 16, 8, 30, "x86_64", "1.079998", "", "", "(N1 host)", "2026-07-30"},
		{fleet.GCP, "us-central1", "tpu-v5p-8", "tpu-v5p", 4, 95, 0, 0, "x86_64", "", "", "", "gcp/vms.csv @62ff0a9", "2026-05-20"},
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
				checkPrice(t, "on-demand", o.OnDemand, tc.onDemand, "", tc.asOf)
			}
			if tc.spot != "" {
				checkPrice(t, "spot", o.Spot, tc.spot, tc.spotZone, tc.asOf)
			}
			if tc.srcMatch != "" && o.OnDemand != nil && !strings.Contains(o.OnDemand.Source, tc.srcMatch) {
				t.Errorf("source %q does not mention %q", o.OnDemand.Source, tc.srcMatch)
			}
		})
	}
}

func checkPrice(t *testing.T, what string, p *pricing.Price, want, zone, asOf string) {
	t.Helper()
	if p == nil {
		t.Errorf("%s price is nil, want %s", what, want)
		return
	}
	if p.Hourly.String() != want || p.Currency != "USD" || p.Unit != "hour" || p.AsOf != asOf {
		t.Errorf("%s price = %s %s/%s as of %s, want %s USD/hour as of %s", what, p.Hourly, p.Currency, p.Unit, p.AsOf, want, asOf)
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
		{fleet.Azure, "swedencentral", "Standard_ND96isr_H200_v5", false, true, "SpotPrice"},
		{fleet.Azure, "westus3", "Standard_ND96isr_H200_v5", false, true, "SpotPrice"},
		{fleet.GCP, "europe-west1", "a3-ultragpu-8g", true, false, ""},
		{fleet.GCP, "us-central2", "tpu-v6e-1", true, true, "Price"},
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
	if len(all) != 5419 {
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
		{"gpu case-insensitive", pricing.Query{GPUModel: "h200"}, 17 + 28 + 18}, // AWS, Azure ND H200 v5, GCP
		{"provider and region", pricing.Query{Provider: fleet.Azure, Region: "EastUS"}, 36},
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
	if len(src) != 27 {
		t.Errorf("%d sources, want 27", len(src))
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
			"Standard_NC6,K80,1,6,56,,eastus,,abc,\n"}, `skypilot-azure-gpu.csv:2: on-demand price "abc" is not a number in [0, 100000]`},
		{"duplicate row", map[string]string{"skypilot-azure-gpu.csv": "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuMemoryMiB,Region,AvailabilityZone,Price,SpotPrice\n" +
			"Standard_NC6,K80,1,6,56,,eastus,,0.9,\nStandard_NC6,K80,1,6,56,,eastus,,0.8,\n"}, `skypilot-azure-gpu.csv:3: a second row for azure Standard_NC6 in eastus`},
		{"absurd price", map[string]string{"skypilot-azure-gpu.csv": "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuMemoryMiB,Region,AvailabilityZone,Price,SpotPrice\n" +
			"Standard_NC6,K80,1,6,56,,eastus,,1e12,\n"}, `on-demand price "1e12" is not a number in [0, 100000]`},
		{"NaN count", map[string]string{"skypilot-azure-gpu.csv": "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuMemoryMiB,Region,AvailabilityZone,Price,SpotPrice\n" +
			"Standard_NC6,K80,NaN,6,56,,eastus,,1,\n"}, `AcceleratorCount "NaN" is not a non-negative number`},
		{"absurd GPU count", map[string]string{"skypilot-azure-gpu.csv": "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuMemoryMiB,Region,AvailabilityZone,Price,SpotPrice\n" +
			"Standard_NC6,K80,1000,6,56,,eastus,,1,\n"}, `AcceleratorCount "1000" is not a non-negative number up to 64`},
		{"no GPU", map[string]string{"skypilot-azure-gpu.csv": "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuMemoryMiB,Region,AvailabilityZone,Price,SpotPrice\n" +
			"Standard_NC6,K80,0,6,56,,eastus,,1,\n"}, `AcceleratorCount is 0`},
		{"stale lifecycle rule", map[string]string{fileLifecycle: "provider,match,status,reason\nazure,family:NZ,retired,test\n"},
			"lifecycle.csv:2: lifecycle rule azure family:NZ matches no type"},
		{"bad lifecycle status", map[string]string{fileLifecycle: "provider,match,status,reason\nazure,family:NC,gone,test\n"},
			`lifecycle.csv:2: status "gone" is not retired, retiring or promo`},
		{"unknown TPU generation", map[string]string{"gcp-tpu.csv": "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuMemoryMiB,Region,AvailabilityZone,Price,SpotPrice\n" +
			",tpu-v9-8,1,,,,us-central1,us-central1-a,1,\n"}, `TPU generation "tpu-v9" has no row in gcp-tpu-generations.csv`},
		{"markup of an unsold type", map[string]string{fileSageMakerMarkup: "family,size,markup,basis,evidence\ng4ad,xlarge,1.40,observed,test\n"},
			"sagemaker-markup.csv: g4ad.xlarge has a markup but sagemaker-instance-types.csv does not list ml.g4ad.xlarge"},
		{"markup below 1", map[string]string{fileSageMakerMarkup: "family,size,markup,basis,evidence\ng5,xlarge,0.9,observed,test\n"},
			`markup "0.9" is not a number in [1, 3]`},
		{"markup guessed", map[string]string{fileSageMakerMarkup: "family,size,markup,basis,evidence\ng5,xlarge,1.4,guessed,test\n"},
			`basis "guessed" is neither observed nor interpolated`},
		{"SageMaker type without ml.", map[string]string{fileSageMakerTypes: "instanceType,apis\ng5.xlarge,hosting\n"},
			`instance type "g5.xlarge" does not start with "ml."`},
		{"SageMaker unknown API", map[string]string{fileSageMakerTypes: "instanceType,apis\nml.g5.xlarge,hosting serving\n"},
			`api "serving" is not one of`},
		{"Vertex accelerator of an unknown GPU", map[string]string{fileVertexAccels: "acceleratorType,gpuModel\nNVIDIA_X1,X1\n"},
			`GPU "X1" has no row in accelerators.csv`},
		{"Vertex unit price not positive", map[string]string{fileVertexUnits: "task,resource,name,region,usdPerHour,sku,description\nprediction,gpu,H100,us-central1,0,X,test\n"},
			`usdPerHour "0" is not a positive price`},
		{"Vertex unit of an unknown task", map[string]string{fileVertexUnits: "task,resource,name,region,usdPerHour,sku,description\nserving,gpu,H100,us-central1,1,X,test\n"},
			`task "serving" is not one of prediction, training`},
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
