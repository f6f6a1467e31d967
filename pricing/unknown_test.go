package pricing

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/fleet"
)

func TestUnknownTypes(t *testing.T) {
	price := decimal.RequireFromString("3.25")
	b300 := fleet.GPU{Model: "B300", Count: 8, MemoryGiB: 288}
	tests := []struct {
		name string
		in   []fleet.Instance
		want []fleet.ScanWarning
	}{
		{
			name: "known type: the engine's business",
			in:   []fleet.Instance{{ID: "i-1", Provider: fleet.AWS, Region: "us-east-1", InstanceType: "p5.48xlarge"}},
		},
		{
			name: "unknown type with its own GPUs and price",
			in:   []fleet.Instance{{ID: "i-2", Provider: fleet.AWS, Region: "us-east-1", InstanceType: "p9.huge", GPU: b300, HourlyPrice: &price}},
		},
		{
			name: "unknown type with GPUs, no price",
			in:   []fleet.Instance{{ID: "i-3", Provider: fleet.AWS, Region: "us-east-1", InstanceType: "p9.huge", GPU: b300}},
			want: []fleet.ScanWarning{{Code: fleet.ScanUnknownType, Provider: fleet.AWS, Region: "us-east-1",
				Reason: `instance type "p9.huge" is not in the catalog; missing: price`, Instances: []string{"i-3"}}},
		},
		{
			name: "unknown type with a price, no GPUs",
			in:   []fleet.Instance{{ID: "vm-1", Provider: fleet.Azure, Region: "westeurope", InstanceType: "Standard_NX9_v9", HourlyPrice: &price}},
			want: []fleet.ScanWarning{{Code: fleet.ScanUnknownType, Provider: fleet.Azure, Region: "westeurope",
				Reason: `instance type "Standard_NX9_v9" is not in the catalog; missing: GPU model, GPU count`, Instances: []string{"vm-1"}}},
		},
		{
			name: "count without a model",
			in: []fleet.Instance{{ID: "vm-2", Provider: fleet.Azure, Region: "westeurope", InstanceType: "Standard_NX9_v9",
				GPU: fleet.GPU{Count: 2}, HourlyPrice: &price}},
			want: []fleet.ScanWarning{{Code: fleet.ScanUnknownType, Provider: fleet.Azure, Region: "westeurope",
				Reason: `instance type "Standard_NX9_v9" is not in the catalog; missing: GPU model`, Instances: []string{"vm-2"}}},
		},
		{
			name: "mistyped type: nothing known, did you mean",
			in:   []fleet.Instance{{ID: "i-4", Provider: fleet.AWS, Region: "us-east-1", InstanceType: "p5.48xlarg"}},
			want: []fleet.ScanWarning{{Code: fleet.ScanUnknownType, Provider: fleet.AWS, Region: "us-east-1",
				Reason:    `instance type "p5.48xlarg" is not in the catalog; missing: GPU model, GPU count, price; did you mean "p5.48xlarge"?`,
				Instances: []string{"i-4"}}},
		},
		{
			name: "committed at its own rate",
			in: []fleet.Instance{{ID: "i-5", Provider: fleet.AWS, Region: "us-east-1", InstanceType: "p9.huge", GPU: b300,
				Lifecycle: fleet.Committed, Commitment: &fleet.Commitment{HourlyRate: &price}}},
		},
		{
			name: "one warning per type and region, each naming its instances, sorted",
			in: []fleet.Instance{
				{ID: "c", Provider: fleet.GCP, Region: "us-central1", InstanceType: "z9-gpu-8g"},
				{ID: "a", Provider: fleet.AWS, Region: "us-west-2", InstanceType: "p9.huge", GPU: b300},
				{ID: "b", Provider: fleet.AWS, Region: "us-east-1", InstanceType: "p9.huge", GPU: b300},
				{ID: "d", Provider: fleet.AWS, Region: "us-east-1", InstanceType: "p9.huge", GPU: b300},
			},
			want: []fleet.ScanWarning{
				{Code: fleet.ScanUnknownType, Provider: fleet.AWS, Region: "us-east-1",
					Reason: `instance type "p9.huge" is not in the catalog; missing: price`, Instances: []string{"b", "d"}},
				{Code: fleet.ScanUnknownType, Provider: fleet.AWS, Region: "us-west-2",
					Reason: `instance type "p9.huge" is not in the catalog; missing: price`, Instances: []string{"a"}},
				{Code: fleet.ScanUnknownType, Provider: fleet.GCP, Region: "us-central1",
					Reason: `instance type "z9-gpu-8g" is not in the catalog; missing: GPU model, GPU count, price`, Instances: []string{"c"}},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := &fleet.Fleet{Instances: tc.in}
			if err := Complete(f, testCatalog()); err != nil {
				t.Fatal(err)
			}
			got := UnknownTypes(f, testCatalog(), nil)
			if tc.want == nil {
				tc.want = []fleet.ScanWarning{}
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("warnings (-want +got):\n%s", d)
			}
		})
	}
}

// A scanned type the catalog lacks is priced from the live price read for
// it: the cloud's hardware (TypesOf) lets Overlay make an offer of it.
func TestWithTypesPricesScannedTypes(t *testing.T) {
	f := &fleet.Fleet{Instances: []fleet.Instance{
		{ID: "east", Provider: fleet.AWS, Region: "us-east-1", InstanceType: "g9z.4xlarge", GPU: fleet.GPU{Model: "Z9", Count: 1, MemoryGiB: 48}, VCPUs: 16, MemoryGiB: 64},
		{ID: "west", Provider: fleet.AWS, Region: "us-west-2", InstanceType: "g9z.4xlarge", GPU: fleet.GPU{Model: "Z9", Count: 1, MemoryGiB: 48}},
		{ID: "known", Provider: fleet.AWS, Region: "us-east-1", InstanceType: "p5.48xlarge", GPU: fleet.GPU{Model: "H100", Count: 4}},
	}}
	base := testCatalog()
	live := []Price{{Provider: fleet.AWS, Region: "us-east-1", InstanceType: "g9z.4xlarge", Option: OnDemand,
		Hourly: decimal.RequireFromString("1.75"), Currency: Currency, Unit: UnitHour, Source: "AWS Price List API", AsOf: "2026-12-06"}}

	// Without the scanned types the live price has nowhere to go.
	if _, ok := Overlay(base, live).Offer(fleet.AWS, "us-east-1", "g9z.4xlarge"); ok {
		t.Fatal("Overlay alone made an offer of a type base lacks")
	}
	types := TypesOf(f)
	want := []InstanceType{
		{Provider: fleet.AWS, Name: "g9z.4xlarge", GPUModel: "Z9", GPUCount: 1, GPUMemoryGiB: 48, VCPUs: 16, MemoryGiB: 64},
		{Provider: fleet.AWS, Name: "p5.48xlarge", GPUModel: "H100", GPUCount: 4},
	}
	if d := cmp.Diff(want, types); d != "" {
		t.Errorf("TypesOf (-want +got):\n%s", d)
	}
	cat := Overlay(WithTypes(base, types), live)
	off, ok := cat.Offer(fleet.AWS, "us-east-1", "g9z.4xlarge")
	if !ok || off.OnDemand == nil || !off.OnDemand.Hourly.Equal(decimal.RequireFromString("1.75")) || off.OnDemand.Source != "AWS Price List API" {
		t.Fatalf("offer = %+v, %v; want the live on-demand price", off, ok)
	}
	if pt, _ := cat.InstanceType(fleet.AWS, "p5.48xlarge"); pt.GPUCount != 8 {
		t.Errorf("a type base knows answers with base's hardware, got %+v", pt)
	}
	got := UnknownTypes(f, base, cat)
	wantW := []fleet.ScanWarning{{Code: fleet.ScanUnknownType, Provider: fleet.AWS, Region: "us-west-2",
		Reason: `instance type "g9z.4xlarge" is not in the catalog; missing: price`, Instances: []string{"west"}}}
	if d := cmp.Diff(wantW, got); d != "" {
		t.Errorf("UnknownTypes (-want +got):\n%s", d)
	}
	if _, ok := WithTypes(base, nil).(fakeCatalog); !ok {
		t.Error("WithTypes without types is base itself")
	}
}

// A bill's rate prices what the catalog cannot: the price-only warnings
// lose those instances, and go when none is left.
func TestWithoutPriced(t *testing.T) {
	price := fleet.ScanWarning{Code: fleet.ScanUnknownType, Provider: fleet.AWS, Region: "us-east-1",
		Reason: `instance type "g9z.4xlarge" is not in the catalog; missing: price`, Instances: []string{"a", "b"}}
	gpus := fleet.ScanWarning{Code: fleet.ScanUnknownType, Provider: fleet.AWS, Region: "us-east-1",
		Reason: `instance type "g9.mega" is not in the catalog; missing: GPU model, GPU count, price`, Instances: []string{"c"}}
	scope := fleet.ScanWarning{Code: fleet.ScanScopeFailed, Provider: fleet.AWS, Region: "eu-west-1", Reason: "DescribeInstances: 500"}
	ws := []fleet.ScanWarning{price, gpus, scope}
	billed := map[string]bool{"a": true, "c": true}
	got := WithoutPriced(ws, func(id string) bool { return billed[id] })
	want := []fleet.ScanWarning{price, gpus, scope}
	want[0].Instances = []string{"b"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	if ws[0].Instances[0] != "a" {
		t.Error("the input was changed")
	}
	billed["b"] = true
	if got := WithoutPriced(ws, func(id string) bool { return billed[id] }); len(got) != 2 || got[0].Reason != gpus.Reason {
		t.Errorf("all billed: %+v", got)
	}
}

// FuzzUnknownTypes: whatever an instance says of itself, Complete and
// UnknownTypes never panic, and each instance of a type the catalog lacks
// that misses a fact is named by exactly one warning, one that says what it
// misses.
func FuzzUnknownTypes(f *testing.F) {
	f.Add(uint8(0), "g9z.4xlarge", "Z9", 1.0, true, "us-east-1")
	f.Add(uint8(0), "p5.48xlarg", "", 0.0, false, "us-east-1")
	f.Add(uint8(1), "Standard_NV9zz_v9", "", 2.0, true, "westeurope")
	f.Add(uint8(2), "n9-standard-8", "T4", 0.5, false, "")
	f.Add(uint8(0), "p5.48xlarge", "H100", 8.0, false, "us-east-1")
	f.Fuzz(func(t *testing.T, p uint8, typ, model string, count float64, priced bool, region string) {
		providers := []fleet.Provider{fleet.AWS, fleet.Azure, fleet.GCP}
		in := fleet.Instance{ID: "x", Provider: providers[int(p)%3], Region: region, InstanceType: typ, GPU: fleet.GPU{Model: model, Count: count}}
		if priced {
			h := decimal.RequireFromString("1.5")
			in.HourlyPrice = &h
		}
		fl := &fleet.Fleet{Instances: []fleet.Instance{in, in}}
		fl.Instances[1].ID = "y"
		cat := testCatalog()
		_ = Complete(fl, cat)
		ws := UnknownTypes(fl, cat, cat)
		_, known := cat.InstanceType(in.Provider, typ)
		lacks := typ != "" && !known && (strings.TrimSpace(model) == "" || !(count > 0) || !priced)
		named := map[string]int{}
		for _, w := range ws {
			if w.Code != fleet.ScanUnknownType || !strings.Contains(w.Reason, "missing: ") || w.Message() == "" {
				t.Fatalf("warning %+v", w)
			}
			for _, id := range w.Instances {
				named[id]++
			}
		}
		for _, id := range []string{"x", "y"} {
			if want := map[bool]int{true: 1}[lacks]; named[id] != want {
				t.Fatalf("%s named %d times, want %d (warnings %+v)", id, named[id], want, ws)
			}
		}
	})
}
