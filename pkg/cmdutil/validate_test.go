package cmdutil

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/config"
	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pkg/recommend"
	"github.com/gpufinops/gpufinops/pricing"
	"github.com/gpufinops/gpufinops/pricing/catalog"
)

func TestCheckFloatFlag(t *testing.T) {
	for _, v := range []float64{math.NaN(), math.Inf(1), math.Inf(-1), -0.001, 100.0001, 1e300, -1e300} {
		err := CheckFloatFlag("--x", v, 0, 100, "%")
		var fe *FlagError
		if !errors.As(err, &fe) || !strings.HasPrefix(err.Error(), "--x: ") || ExitCodeFor(err) != ExitUsage {
			t.Errorf("%v: %v", v, err)
		}
	}
	for _, v := range []float64{0, 0.5, 15, 100} {
		if err := CheckFloatFlag("--x", v, 0, 100, "%"); err != nil {
			t.Errorf("%v: %v", v, err)
		}
	}
	if err := CheckIntFlag("--n", 1<<40, 1, 100, ""); err == nil || ExitCodeFor(err) != ExitUsage {
		t.Errorf("huge int: %v", err)
	}
}

func TestParseExchangeRate(t *testing.T) {
	for _, s := range []string{"NaN", "nan", "Inf", "+Inf", "-Infinity", "1e309", "1e7", "1000000.1", "0", "-0", "-1", "0.0000009", "", "  ", "0x10", "1,5", "1e-10"} {
		if d, err := ParseExchangeRate(s, "EUR"); err == nil {
			t.Errorf("%q accepted as %s", s, d)
		} else if strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "EUR per USD") {
			t.Errorf("%q: message %q", s, err)
		}
	}
	for s, want := range map[string]string{"0.92": "0.92", " 150.5 ": "150.5", "1e3": "1000", "0.000001": "0.000001", "1000000": "1000000"} {
		d, err := ParseExchangeRate(s, "EUR")
		if err != nil || !d.Equal(decimal.RequireFromString(want)) {
			t.Errorf("%q: %v, %v", s, d, err)
		}
	}
}

func TestValidatePolicy(t *testing.T) {
	p := recommend.DefaultPolicy()
	p.Idle.GPUPercent = math.NaN()
	err := ValidatePolicy(&config.Config{}, p, map[string]string{"policy.idle.gpu_percent": "--idle-threshold"})
	var fe *FlagError
	if !errors.As(err, &fe) || err.Error() != "--idle-threshold: NaN is not a finite number" {
		t.Errorf("flag: %v", err)
	}
	err = ValidatePolicy(&config.Config{File: "c.yaml"}, p, nil)
	var ie *InputError
	if !errors.As(err, &ie) || err.Error() != "config file c.yaml: policy.idle.gpu_percent: NaN is not a finite number" {
		t.Errorf("config: %v", err)
	}
	if err := ValidatePolicy(nil, recommend.DefaultPolicy(), nil); err != nil {
		t.Errorf("defaults: %v", err)
	}
}

func TestCheckCatalogFacts(t *testing.T) {
	inst := func(typ string, count float64, samples ...fleet.PerGPU) fleet.Instance {
		in := fleet.Instance{ID: "i-" + typ, Provider: fleet.AWS, Region: "us-east-1", InstanceType: typ, GPU: fleet.GPU{Count: count}, Lifecycle: fleet.OnDemand, State: fleet.Running}
		if len(samples) > 0 {
			u := &fleet.Utilization{}
			for _, s := range samples {
				u.Samples = append(u.Samples, fleet.Sample{GPU: s})
			}
			in.Utilization = u
		}
		return in
	}
	for _, tc := range []struct {
		name string
		in   fleet.Instance
		want string
	}{
		{"g5.xlarge claims 8", inst("g5.xlarge", 8), `f.yaml: instances[0] (id "i-g5.xlarge"): gpu.count: 8 contradicts the catalog: aws g5.xlarge has 1 GPU`},
		{"g5.xlarge claims 2", inst("g5.xlarge", 2), "has 1 GPU"},
		{"p4d claims 4", inst("p4d.24xlarge", 4), "aws p4d.24xlarge has 8 GPUs"},
		{"p4d claims 16", inst("p4d.24xlarge", 16), "aws p4d.24xlarge has 8 GPUs"},
		{"g5.12xlarge claims half", inst("g5.12xlarge", 0.5), "aws g5.12xlarge has 4 GPUs"},
		{"samples wider than the type", inst("g5.xlarge", 0, fleet.PerGPU{1, 2}), "utilization.samples[0].gpu: 2 values, but aws g5.xlarge has 1 GPU"},
		{"samples wider than p4d", inst("p4d.24xlarge", 8, fleet.PerGPU{1}, fleet.PerGPU{1, 2, 3, 4, 5, 6, 7, 8, 9}), "utilization.samples[1].gpu: 9 values, but aws p4d.24xlarge has 8 GPUs"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fl := &fleet.Fleet{APIVersion: fleet.APIVersion, Kind: fleet.Kind, Instances: []fleet.Instance{tc.in}}
			_, err := ReadFleet(context.Background(), nil, catalog.Embedded,
				func(string, bool) (*fleet.Fleet, error) { return fl, nil }, nil, FleetFlags{Path: "f.yaml", LookbackDays: 14})
			var ie *InputError
			if !errors.As(err, &ie) || !strings.Contains(err.Error(), tc.want) || ExitCodeFor(err) != ExitUsage {
				t.Fatalf("got %v, want %q", err, tc.want)
			}
		})
	}
	for _, ok := range []fleet.Instance{inst("g5.xlarge", 0), inst("g5.xlarge", 1, fleet.PerGPU{3}), inst("p4d.24xlarge", 8, fleet.PerGPU{1, 2, 3, 4, 5, 6, 7, 8}), inst("g5.12xlarge", 4, fleet.PerGPU{1, 2})} {
		fl := &fleet.Fleet{APIVersion: fleet.APIVersion, Kind: fleet.Kind, Instances: []fleet.Instance{ok}}
		if _, err := ReadFleet(context.Background(), nil, catalog.Embedded,
			func(string, bool) (*fleet.Fleet, error) { return fl, nil }, nil, FleetFlags{Path: "f.yaml", LookbackDays: 14}); err != nil {
			t.Errorf("%s with %v GPUs: %v", ok.InstanceType, ok.GPU.Count, err)
		}
	}
}

func TestSanePrices(t *testing.T) {
	p := func(s string) pricing.Price {
		return pricing.Price{Provider: fleet.AWS, Region: "us-east-1", InstanceType: "g5.xlarge", Option: pricing.OnDemand, Hourly: decimal.RequireFromString(s)}
	}
	kept, notes := SanePrices([]pricing.Price{p("1.006"), p("10000.01"), p("1e6000"), p("98.32")})
	if len(kept) != 2 || len(notes) != 2 || !strings.Contains(notes[1], "1e6000") {
		t.Errorf("kept %v, notes %q", kept, notes)
	}
}
