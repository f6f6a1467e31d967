package pricing

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/fleet"
)

// fakeCatalog knows a few types and GPUs; the rest of Catalog is unused here.
type fakeCatalog struct {
	types map[string]InstanceType // key: provider/name
	gpus  map[string]GPUSpec
}

func (c fakeCatalog) GPU(name string) (GPUSpec, bool) {
	g, ok := c.gpus[name]
	return g, ok
}

func (c fakeCatalog) InstanceType(p fleet.Provider, name string) (InstanceType, bool) {
	t, ok := c.types[string(p)+"/"+name]
	return t, ok
}

func (fakeCatalog) Offer(fleet.Provider, string, string) (Offer, bool) { return Offer{}, false }

// Offers has one offer per known type, in no region, of q's provider.
func (c fakeCatalog) Offers(q Query) []Offer {
	var out []Offer
	for key, t := range c.types {
		p, name, _ := strings.Cut(key, "/")
		if q.Provider == "" || string(q.Provider) == p {
			t.Provider, t.Name = fleet.Provider(p), name
			out = append(out, Offer{Type: t})
		}
	}
	return out
}
func (fakeCatalog) SpotAdvice(fleet.Provider, string, string) (SpotAdvice, bool) {
	return SpotAdvice{}, false
}
func (fakeCatalog) Corrections() []Correction { return nil }
func (fakeCatalog) Sources() []Source         { return nil }

func testCatalog() fakeCatalog {
	h100 := GPUSpec{Name: "H100", Vendor: "nvidia", MemoryGiB: 80}
	return fakeCatalog{
		types: map[string]InstanceType{
			"aws/p5.48xlarge": {Provider: fleet.AWS, Name: "p5.48xlarge", GPUModel: "H100", GPUCount: 8, GPUMemoryGiB: 80, VCPUs: 192, MemoryGiB: 2048},
			"aws/g6f.large":   {Provider: fleet.AWS, Name: "g6f.large", GPUModel: "L4", GPUCount: 0.125, GPUMemoryGiB: 2.79, VCPUs: 2, MemoryGiB: 8},
			"gcp/a3-megagpu-8g": {Provider: fleet.GCP, Name: "a3-megagpu-8g", GPUModel: "H100-MEGA", GPUCount: 8,
				GPUMemoryGiB: 80, VCPUs: 208, MemoryGiB: 1872},
		},
		gpus: map[string]GPUSpec{"H100": h100, "H100-MEGA": h100, "L4": {Name: "L4", MemoryGiB: 24}, "A100": {Name: "A100", MemoryGiB: 40}},
	}
}

func TestComplete(t *testing.T) {
	price := decimal.RequireFromString("12.5")
	tests := []struct {
		name    string
		in      fleet.Instance
		want    fleet.Instance
		wantErr string
	}{
		{
			name: "fills everything absent",
			in:   fleet.Instance{ID: "i-1", Provider: fleet.AWS, InstanceType: "p5.48xlarge"},
			want: fleet.Instance{ID: "i-1", Provider: fleet.AWS, InstanceType: "p5.48xlarge",
				GPU: fleet.GPU{Model: "H100", Count: 8, MemoryGiB: 80}, VCPUs: 192, MemoryGiB: 2048},
		},
		{
			name: "keeps given values",
			in: fleet.Instance{ID: "i-2", Provider: fleet.AWS, InstanceType: "p5.48xlarge",
				GPU: fleet.GPU{Model: "h100", Count: 4}, VCPUs: 96},
			want: fleet.Instance{ID: "i-2", Provider: fleet.AWS, InstanceType: "p5.48xlarge",
				GPU: fleet.GPU{Model: "h100", Count: 4, MemoryGiB: 80}, VCPUs: 96, MemoryGiB: 2048},
		},
		{
			name: "fractional GPU",
			in:   fleet.Instance{ID: "i-3", Provider: fleet.AWS, InstanceType: "g6f.large"},
			want: fleet.Instance{ID: "i-3", Provider: fleet.AWS, InstanceType: "g6f.large",
				GPU: fleet.GPU{Model: "L4", Count: 0.125, MemoryGiB: 2.79}, VCPUs: 2, MemoryGiB: 8},
		},
		{
			name: "alias of the same GPU is no contradiction",
			in:   fleet.Instance{ID: "vm-1", Provider: fleet.GCP, InstanceType: "a3-megagpu-8g", GPU: fleet.GPU{Model: "H100"}},
			want: fleet.Instance{ID: "vm-1", Provider: fleet.GCP, InstanceType: "a3-megagpu-8g",
				GPU: fleet.GPU{Model: "H100", Count: 8, MemoryGiB: 80}, VCPUs: 208, MemoryGiB: 1872},
		},
		{
			name: "unknown type described by the instance itself",
			in: fleet.Instance{ID: "i-4", Provider: fleet.AWS, InstanceType: "p9.huge",
				GPU: fleet.GPU{Model: "B300", Count: 8}, HourlyPrice: &price},
			want: fleet.Instance{ID: "i-4", Provider: fleet.AWS, InstanceType: "p9.huge",
				GPU: fleet.GPU{Model: "B300", Count: 8}, HourlyPrice: &price},
		},
		{
			name: "unknown type is kept as it is",
			in:   fleet.Instance{ID: "i-0abc", Provider: fleet.AWS, InstanceType: "p9.huge"},
			want: fleet.Instance{ID: "i-0abc", Provider: fleet.AWS, InstanceType: "p9.huge"},
		},
		{
			name: "unknown type without a price keeps its GPUs",
			in:   fleet.Instance{ID: "i-5", Provider: fleet.AWS, InstanceType: "p9.huge", GPU: fleet.GPU{Model: "B300", Count: 8}},
			want: fleet.Instance{ID: "i-5", Provider: fleet.AWS, InstanceType: "p9.huge", GPU: fleet.GPU{Model: "B300", Count: 8}},
		},
		{
			name:    "contradicting GPU model",
			in:      fleet.Instance{ID: "i-6", Provider: fleet.AWS, InstanceType: "p5.48xlarge", GPU: fleet.GPU{Model: "A100"}},
			wantErr: `instances[0] (id "i-6"): gpu.model "A100" contradicts the catalog: aws p5.48xlarge has H100`,
		},
		{
			name:    "bad provider",
			in:      fleet.Instance{ID: "x", Provider: "oracle", InstanceType: "BM.GPU4.8"},
			wantErr: `provider "oracle" is not one of aws, azure, gcp`,
		},
		{
			name:    "no instance type",
			in:      fleet.Instance{ID: "y", Provider: fleet.GCP},
			wantErr: "instanceType is empty",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := &fleet.Fleet{Instances: []fleet.Instance{tc.in}}
			err := Complete(f, testCatalog())
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, f.Instances[0]); d != "" {
				t.Errorf("instance (-want +got):\n%s", d)
			}
		})
	}
}

func TestCompleteJoinsAllErrors(t *testing.T) {
	f := &fleet.Fleet{Instances: []fleet.Instance{
		{ID: "ok", Provider: fleet.AWS, InstanceType: "p5.48xlarge"},
		{ID: "bad-1", Provider: "oracle", InstanceType: "BM.GPU4.8"},
		{ID: "ok-2", Provider: fleet.AWS, InstanceType: "g6f.large"},
		{ID: "bad-2", Provider: fleet.AWS, InstanceType: "g6f.large", GPU: fleet.GPU{Model: "T4"}},
		{ID: "unknown", Provider: fleet.AWS, InstanceType: "p9.huge"},
	}}
	err := Complete(f, testCatalog())
	want := `instances[1] (id "bad-1"): provider "oracle" is not one of aws, azure, gcp` + "\n" +
		`instances[3] (id "bad-2"): gpu.model "T4" contradicts the catalog: aws g6f.large has L4`
	if err == nil || err.Error() != want {
		t.Errorf("err =\n%v\nwant\n%s", err, want)
	}
	if f.Instances[2].GPU.Model != "L4" {
		t.Error("valid instances are still completed when others fail")
	}
}

func TestCompleteNoCatalog(t *testing.T) {
	if err := Complete(&fleet.Fleet{}, nil); err == nil {
		t.Error("want an error without a catalog")
	}
	if err := Complete(nil, testCatalog()); err != nil {
		t.Errorf("nil fleet: %v", err)
	}
}

// A scan keeps the cloud's GPU model where the catalog's differs, and no
// fleet contradicts a type the catalog gives no GPU (an N1 host).
func TestCompleteScannedAndHostTypes(t *testing.T) {
	cat := testCatalog()
	cat.types["gcp/n1-standard-8"] = InstanceType{Provider: fleet.GCP, Name: "n1-standard-8", VCPUs: 8, MemoryGiB: 30}
	f := &fleet.Fleet{Instances: []fleet.Instance{
		{ID: "i-1", Provider: fleet.AWS, InstanceType: "p5.48xlarge", GPU: fleet.GPU{Model: "H200", Count: 8}},
		{ID: "vm-1", Provider: fleet.GCP, InstanceType: "n1-standard-8", GPU: fleet.GPU{Model: "T4", Count: 2}},
	}}
	if err := Complete(f, cat); err == nil || !strings.Contains(err.Error(), `gpu.model "H200" contradicts the catalog`) || strings.Contains(err.Error(), "vm-1") {
		t.Errorf("file: %v, want only the p5 contradiction", err)
	}
	if err := CompleteScanned(f, cat); err != nil {
		t.Fatalf("scan: %v", err)
	}
	want := []fleet.GPU{{Model: "H200", Count: 8, MemoryGiB: 80}, {Model: "T4", Count: 2}}
	for i, in := range f.Instances {
		if in.GPU != want[i] {
			t.Errorf("%s: %+v, want %+v", in.ID, in.GPU, want[i])
		}
	}
	if f.Instances[1].VCPUs != 8 || f.Instances[1].MemoryGiB != 30 {
		t.Errorf("vm-1 host: %v vCPUs, %v GiB", f.Instances[1].VCPUs, f.Instances[1].MemoryGiB)
	}
}
