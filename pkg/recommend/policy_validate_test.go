package recommend

import (
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/gpufinops/gpufinops/internal/purchasetest"
)

// floatFields lists the config key and address of every float of p.
func floatFields(v reflect.Value, key string, out map[string]reflect.Value) {
	switch v.Kind() {
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			tag := v.Type().Field(i).Tag.Get("mapstructure")
			if tag == "" || tag == "-" {
				continue
			}
			floatFields(v.Field(i), key+"."+tag, out)
		}
	case reflect.Float64:
		out[key] = v
	}
}

func TestValidateRefusesNonFiniteEverywhere(t *testing.T) {
	fields := map[string]reflect.Value{}
	probe := DefaultPolicy().WithPurchases(purchasetest.Purchases())
	floatFields(reflect.ValueOf(&probe).Elem(), "policy", fields)
	if len(fields) < 20 {
		t.Fatalf("found only %d float keys", len(fields))
	}
	bad := []float64{math.NaN(), math.Inf(1), math.Inf(-1), 1e300, -1e300, 2e9}
	for key := range fields {
		for _, b := range bad {
			p := DefaultPolicy().WithPurchases(purchasetest.Purchases())
			f := map[string]reflect.Value{}
			floatFields(reflect.ValueOf(&p).Elem(), "policy", f)
			f[key].SetFloat(b)
			err := p.Validate()
			var pe *PolicyError
			if !errors.As(err, &pe) || pe.Key != key {
				t.Errorf("%s = %v: got %v, want a PolicyError naming %s", key, b, err, key)
			}
		}
	}
}

func TestValidateMapValues(t *testing.T) {
	for _, v := range []float64{math.NaN(), math.Inf(1), -0.1, 1, 7} {
		p := DefaultPolicy().WithPurchases(purchasetest.Purchases())
		p.Commitment.Discounts3y = map[string]float64{"aws": 0.5, "gcp": v}
		err := p.Validate()
		var pe *PolicyError
		if !errors.As(err, &pe) || pe.Key != "policy.commitment.discounts_3y.gcp" {
			t.Errorf("discount %v: got %v", v, err)
		}
	}
}

func TestValidateRanges(t *testing.T) {
	for _, tc := range []struct {
		name string
		set  func(*Policy)
		key  string
	}{
		{"negative threshold", func(p *Policy) { p.Idle.GPUPercent = -1 }, "policy.idle.gpu_percent"},
		{"threshold above 100", func(p *Policy) { p.Idle.GPUPercent = 100.5 }, "policy.idle.gpu_percent"},
		{"sharing NaN", func(p *Policy) { p.Sharing.TargetGPUPercent = math.NaN() }, "policy.sharing.target_gpu_percent"},
		{"sharing range", func(p *Policy) { p.Sharing.HeadroomPercent = 101 }, "policy.sharing.headroom_percent"},
		{"huge context", func(p *Policy) { p.Quantize.Context = 1 << 40 }, "policy.quantize.context"},
		{"huge batch", func(p *Policy) { p.Quantize.Batch = 2_000_000 }, "policy.quantize.batch"},
		{"zero batch", func(p *Policy) { p.Quantize.Batch = 0 }, "policy.quantize.batch"},
		{"huge replicas", func(p *Policy) { p.Sharing.MaxReplicas = 1 << 31 }, "policy.sharing.max_replicas"},
		{"window beyond retention", func(p *Policy) { p.MinWindowHours = 20000 }, "policy.min_window_hours"},
		{"restart a month", func(p *Policy) { p.Spot.RestartMinutes = 50000 }, "policy.spot.restart_minutes"},
		{"zero write speed", func(p *Policy) { p.Spot.CheckpointWriteGBps = 0 }, "policy.spot.checkpoint_write_gbps"},
		{"min days huge", func(p *Policy) { p.Idle.ScheduleMinDays = 1000 }, "policy.idle.schedule_min_days"},
		{"coverage above 1", func(p *Policy) { p.Idle.MinCoverage = 1.01 }, "policy.idle.min_coverage"},
		{"bad term", func(p *Policy) { p.Commitment.Term = "2y" }, "policy.commitment.term"},
		{"governance", func(p *Policy) { p.Governance.RequiredTags = []string{" "} }, "policy.governance"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := DefaultPolicy().WithPurchases(purchasetest.Purchases())
			tc.set(&p)
			err := p.Validate()
			var pe *PolicyError
			if !errors.As(err, &pe) || pe.Key != tc.key {
				t.Fatalf("got %v, want a PolicyError naming %s", err, tc.key)
			}
			if strings.Contains(err.Error(), "\n") || !strings.HasPrefix(err.Error(), tc.key+": ") {
				t.Errorf("message %q", err)
			}
		})
	}
	if err := DefaultPolicy().WithPurchases(purchasetest.Purchases()).Validate(); err != nil {
		t.Errorf("defaults: %v", err)
	}
}

func TestValidateManagedPolicy(t *testing.T) {
	for _, c := range []struct {
		key string
		set func(*ManagedPolicy)
	}{
		{"policy.managed.target_gpu_percent", func(m *ManagedPolicy) { m.TargetGPUPercent = 0 }},
		{"policy.managed.target_gpu_percent", func(m *ManagedPolicy) { m.TargetGPUPercent = 101 }},
		{"policy.managed.production_min_replicas", func(m *ManagedPolicy) { m.ProductionMinReplicas = 0 }},
		{"policy.managed.idle_min_hours", func(m *ManagedPolicy) { m.IdleMinHours = -1 }},
		{"policy.managed.idle_min_hours", func(m *ManagedPolicy) { m.IdleMinHours = 20000 }},
		{"policy.managed.idle_shutdown_minutes", func(m *ManagedPolicy) { m.IdleShutdownMinutes = 0 }},
		{"policy.managed.cluster_scale_down_minutes", func(m *ManagedPolicy) { m.ClusterScaleDownMinutes = 1e5 }},
		{"policy.managed.job_max_hours", func(m *ManagedPolicy) { m.JobMaxHours = 0 }},
	} {
		p := DefaultPolicy().WithPurchases(purchasetest.Purchases())
		c.set(&p.Managed)
		var pe *PolicyError
		if err := p.Validate(); !errors.As(err, &pe) || pe.Key != c.key {
			t.Errorf("%s: got %v", c.key, err)
		}
	}
	if err := DefaultPolicy().WithPurchases(purchasetest.Purchases()).Validate(); err != nil {
		t.Errorf("defaults refused: %v", err)
	}
}
