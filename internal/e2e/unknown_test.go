package e2e

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/cmdutil"
	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pricing/catalog"
	"github.com/gpufinops/gpufinops/providers/file"
)

// unknownInstance is a demo instance of cloud turned into one of a type the
// embedded catalog lacks: its GPUs, host and price as the fleet file (and so
// the simulator) gives them.
func unknownInstance(t *testing.T, demo *fleet.Fleet, cloud fleet.Provider, id, typ string, gpu fleet.GPU, vcpus, memGiB float64, hourly string) fleet.Instance {
	t.Helper()
	for _, in := range demo.Instances {
		if in.Provider != cloud || in.Lifecycle != fleet.OnDemand {
			continue
		}
		in.ID, in.Name, in.InstanceType, in.GPU, in.VCPUs, in.MemoryGiB = id, id, typ, gpu, vcpus, memGiB
		in.ManagedBy, in.Commitment, in.InstanceStoreGB, in.HourlyPrice = nil, nil, 0, nil
		if hourly != "" {
			p := decimal.RequireFromString(hourly)
			in.HourlyPrice = &p
		}
		return in
	}
	t.Fatalf("the demo has no on-demand %s instance", cloud)
	return fleet.Instance{}
}

// TestUnknownTypesThreeCloudScan: a three-cloud scan through the simulators
// whose fleet holds types the embedded catalog lacks keeps every instance.
// A type the cloud describes and prices (the simulator serving the fleet's
// figures and price as the cloud's API would) is priced from the live
// answer; one whose GPU model the cloud does not say (Azure's Resource SKUs
// gives only a count) or that the price API does not price (GCP machines
// with attached GPUs) is in the report with a warning naming what is
// missing, unpriced rather than priced at 0; the run exits 3.
func TestUnknownTypesThreeCloudScan(t *testing.T) {
	all, err := file.Demo()
	if err != nil {
		t.Fatal(err)
	}
	demo := asScanned(all)
	cat, err := catalog.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	type extra struct {
		in fleet.Instance
		// priced is the hourly price the scan must find; "" for unpriced,
		// "live" for priced at whatever the live answer composes.
		priced  string
		missing string // the unknown-type warning's missing facts; "" for none
	}
	extras := []extra{
		{unknownInstance(t, demo, fleet.AWS, "i-0fa1ce0000000a001", "g9z.4xlarge", fleet.GPU{Model: "Z9", Count: 1, MemoryGiB: 48}, 16, 64, "1.75"), "1.75", ""},
		{unknownInstance(t, demo, fleet.AWS, "i-0fa1ce0000000a002", "g9z.4xlarge", fleet.GPU{Model: "Z9", Count: 1, MemoryGiB: 48}, 16, 64, ""), "1.75", ""},
		{unknownInstance(t, demo, fleet.Azure, "vm-nv9zz-1", "Standard_NV9zz_v9", fleet.GPU{Model: "Z9", Count: 2, MemoryGiB: 48}, 36, 440, "6.5"), "6.5", "missing: GPU model"},
		{unknownInstance(t, demo, fleet.GCP, "a3-sixteen-1", "a3-highgpu-16g", fleet.GPU{Model: "H100", Count: 16, MemoryGiB: 80}, 416, 3744, "190"), "live", ""},
		{unknownInstance(t, demo, fleet.GCP, "n9-t4-1", "n9-standard-8", fleet.GPU{Model: "T4", Count: 2, MemoryGiB: 16}, 8, 30, "1.2"), "", "missing: price"},
	}
	for _, e := range extras {
		if _, known := cat.InstanceType(e.in.Provider, e.in.InstanceType); known {
			t.Fatalf("the catalog knows %s %s: not the fleet this test is about", e.in.Provider, e.in.InstanceType)
		}
		demo.Instances = append(demo.Instances, e.in)
	}
	allCloudsServing(t, demo)

	code, doc, stderr := gpufinops(t, "analyze", "--provider", "aws,azure,gcp", "-o", "json")
	if code != cmdutil.ExitPartial {
		t.Fatalf("analyze exited %d, want %d (partial): %s", code, cmdutil.ExitPartial, stderr)
	}
	var r struct {
		Summary struct {
			Current  decimal.Decimal `json:"currentMonthlyCost"`
			Unpriced int             `json:"unpricedCount"`
		} `json:"summary"`
		Instances []struct {
			ResourceID string           `json:"resourceId"`
			Type       string           `json:"instanceType"`
			Priced     bool             `json:"priced"`
			Hours      float64          `json:"monthlyHours"`
			Monthly    *decimal.Decimal `json:"currentMonthlyCost"`
			Hourly     *struct {
				Hourly decimal.Decimal `json:"hourly"`
				Source string          `json:"source"`
			} `json:"hourlyPrice"`
		} `json:"instances"`
		Recommendations []struct {
			Kind       string `json:"kind"`
			ResourceID string `json:"resourceId"`
		} `json:"recommendations"`
		Warnings []struct {
			Code, Message string
		} `json:"warnings"`
	}
	if err := json.Unmarshal([]byte(doc), &r); err != nil {
		t.Fatalf("report does not parse: %v", err)
	}
	byID := map[string]int{}
	for i, in := range r.Instances {
		byID[in.ResourceID] = i
	}
	for _, in := range demo.Instances {
		if _, ok := byID[in.ID]; !ok {
			t.Errorf("%s %s (%s) is missing from the report", in.Provider, in.ID, in.InstanceType)
		}
	}
	var sum decimal.Decimal
	unpriced := 0
	for _, in := range r.Instances {
		switch {
		case in.Priced && in.Monthly != nil:
			sum = sum.Add(*in.Monthly)
		case in.Priced:
			t.Errorf("%s: priced without a cost", in.ResourceID)
		default:
			unpriced++
			if in.Monthly != nil || in.Hourly != nil {
				t.Errorf("%s: unpriced, yet costed %v at %v", in.ResourceID, in.Monthly, in.Hourly)
			}
		}
	}
	if !sum.Equal(r.Summary.Current) || unpriced != r.Summary.Unpriced {
		t.Errorf("summary current %s, %d unpriced; the instances add up to %s, %d unpriced", r.Summary.Current, r.Summary.Unpriced, sum, unpriced)
	}
	advised := map[string]bool{}
	for _, rec := range r.Recommendations {
		if rec.Kind != "tagging" {
			advised[rec.ResourceID] = true
		}
	}
	for _, e := range extras {
		i, ok := byID[e.in.ID]
		if !ok {
			continue
		}
		in := r.Instances[i]
		switch e.priced {
		case "":
			if in.Priced {
				t.Errorf("%s (%s): priced at %v; the live answer has no price for it", in.ResourceID, in.Type, in.Hourly)
			}
			if advised[in.ResourceID] {
				t.Errorf("%s (%s): unpriced, yet advised", in.ResourceID, in.Type)
			}
		case "live":
			if !in.Priced || in.Hourly == nil || !in.Hourly.Hourly.IsPositive() || strings.Contains(in.Hourly.Source, "fleet") {
				t.Errorf("%s (%s): want a live price, got priced %v at %+v", in.ResourceID, in.Type, in.Priced, in.Hourly)
			}
		default:
			want := decimal.RequireFromString(e.priced)
			if !in.Priced || in.Hourly == nil || !in.Hourly.Hourly.Equal(want) || strings.Contains(in.Hourly.Source, "fleet") {
				t.Errorf("%s (%s): want the live price %s, got priced %v at %+v", in.ResourceID, in.Type, want, in.Priced, in.Hourly)
			}
		}
		found := false
		for _, w := range r.Warnings {
			if w.Code == fleet.ScanUnknownType && strings.Contains(w.Message, `"`+e.in.InstanceType+`"`) {
				found = true
				if e.missing == "" || !strings.Contains(w.Message, e.missing) {
					t.Errorf("%s: warning %q, want one saying %q", e.in.InstanceType, w.Message, e.missing)
				}
			}
		}
		if e.missing != "" && !found {
			t.Errorf("%s: no %s warning; warnings: %+v", e.in.InstanceType, fleet.ScanUnknownType, r.Warnings)
		}
		if e.missing != "" && !strings.Contains(stderr, e.in.InstanceType) {
			t.Errorf("stderr does not name %s: %s", e.in.InstanceType, stderr)
		}
	}

	// inventory lists the same instances, with the same warnings.
	code, inv, stderr := gpufinops(t, "inventory", "--provider", "aws,azure,gcp", "-o", "json")
	if code != cmdutil.ExitPartial {
		t.Fatalf("inventory exited %d, want %d: %s", code, cmdutil.ExitPartial, stderr)
	}
	scanned, err := fleet.Parse("inventory.json", []byte(inv))
	if err != nil {
		t.Fatalf("inventory output is not a fleet: %v", err)
	}
	if len(scanned.Instances) != len(demo.Instances) {
		t.Errorf("inventory lists %d instances, the fleet has %d", len(scanned.Instances), len(demo.Instances))
	}
	warned := 0
	for _, w := range scanned.Metadata.Warnings {
		if w.Code == fleet.ScanUnknownType {
			warned++
		}
	}
	if warned == 0 {
		t.Errorf("the snapshot records no %s warning: %+v", fleet.ScanUnknownType, scanned.Metadata.Warnings)
	}

	// doctor names the types the catalog lacks, a warning that does not
	// fail it.
	code, out, stderr := gpufinops(t, "doctor", "--provider", "aws,azure,gcp", "-o", "json")
	if code != cmdutil.ExitOK {
		t.Errorf("doctor exited %d: %s", code, stderr)
	}
	for _, e := range extras {
		if e.missing != "" && !strings.Contains(out, `instance type \"`+e.in.InstanceType+`\" is not in the catalog`) {
			t.Errorf("doctor does not name %s:\n%s", e.in.InstanceType, out)
		}
	}

	// idle-stop decides on the same instances, warns of the same types.
	// 11 machines stop: the 8 notebooks idle at the scan's end, the idle
	// ND H100 VM, the idle Azure ML compute instance (a notebook, stopped by
	// Azure ML's own stop) and the unknown Azure size; the default
	// --max-stops 10 would refuse the run (exit 5), which is not this test.
	code, out, stderr = gpufinops(t, "idle-stop", "--provider", "aws,azure,gcp", "--max-stops", "20", "-o", "json")
	if code != cmdutil.ExitPartial {
		t.Fatalf("idle-stop exited %d, want %d: %s", code, cmdutil.ExitPartial, stderr)
	}
	for _, e := range extras {
		if !strings.Contains(out, `"`+e.in.ID+`"`) {
			t.Errorf("idle-stop decided nothing on %s (%s)", e.in.ID, e.in.InstanceType)
		}
		if e.missing != "" && !strings.Contains(stderr, `instance type "`+e.in.InstanceType+`" is not in the catalog`) {
			t.Errorf("idle-stop's stderr does not name %s: %s", e.in.InstanceType, stderr)
		}
	}
}

// TestFOCUSSampleKeepsEveryGPUType: the FOCUS 1.0 sample's GPU instances are
// all found, those of a type the catalog may lack (g3.4xlarge) by the
// cloud's GPU families, with a warning when their GPU count is unknown.
func TestFOCUSSampleKeepsEveryGPUType(t *testing.T) {
	code, out, stderr := gpufinops(t, "billing", "summary", "--billing", "../../testdata/billing/focus-1.0-sample.csv", "-o", "json")
	if code != cmdutil.ExitOK {
		t.Fatalf("billing summary exited %d: %s", code, stderr)
	}
	var doc struct {
		Resources []struct {
			InstanceType string `json:"instanceType"`
		} `json:"resources"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	byType := map[string]int{}
	for _, r := range doc.Resources {
		byType[r.InstanceType]++
	}
	if byType["g5.4xlarge"] != 8 || byType["g3.4xlarge"] != 2 || len(doc.Resources) != 10 {
		t.Errorf("GPU instances by type %v, want 8 g5.4xlarge and 2 g3.4xlarge", byType)
	}
	cat, err := catalog.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	if _, known := cat.InstanceType(fleet.AWS, "g3.4xlarge"); !known && !strings.Contains(out, "aws g3.4xlarge is a GPU instance type the catalog lacks") {
		t.Errorf("no warning of g3.4xlarge:\n%s", out)
	}
}
