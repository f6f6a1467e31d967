package analyze

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpufinops/gpufinops/internal/purchasetest"
	"github.com/gpufinops/gpufinops/pkg/cmdutil"
	"github.com/gpufinops/gpufinops/pkg/config"
	"github.com/gpufinops/gpufinops/pkg/recommend"
)

// Bad numbers are refused the same way whether a flag, a config file key or
// an environment variable gives them: exit 2, one line naming the source.
func TestBadNumbersEveryPath(t *testing.T) {
	bad := []string{"NaN", "nan", "+Inf", "-Inf", "Infinity", "-Infinity", "+infinity", "-1", "100.5", "1e300", "-1e300"}
	for _, v := range bad {
		t.Run("flag "+v, func(t *testing.T) {
			out, err, code := runAnalyze(t, nil, false, "--demo", "--idle-threshold="+v)
			var fe *cmdutil.FlagError
			if !errors.As(err, &fe) || code != cmdutil.ExitUsage || !strings.HasPrefix(err.Error(), "--idle-threshold: ") || out != "" {
				t.Errorf("got %v (exit %d), out %q", err, code, out)
			}
		})
		t.Run("env "+v, func(t *testing.T) {
			_, err := config.Load(config.Options{LookupEnv: func(k string) (string, bool) {
				if k == "GPUFINOPS_POLICY_IDLE_GPU_PERCENT" {
					return v, true
				}
				return "", false
			}})
			if err == nil || !strings.Contains(err.Error(), "environment GPUFINOPS_POLICY_IDLE_GPU_PERCENT: policy.idle.gpu_percent: ") {
				t.Errorf("got %v", err)
			}
		})
		t.Run("file "+v, func(t *testing.T) {
			yamlV := map[string]string{"NaN": ".nan", "nan": ".NaN", "+Inf": ".inf", "-Inf": "-.inf", "Infinity": "+.Inf", "-Infinity": "-.Inf", "+infinity": `"+infinity"`}[v]
			if yamlV == "" {
				yamlV = v
			}
			file := filepath.Join(t.TempDir(), "c.yaml")
			if err := os.WriteFile(file, []byte("policy:\n  idle:\n    gpu_percent: "+yamlV+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := config.Load(config.Options{File: file, LookupEnv: func(string) (string, bool) { return "", false }})
			if err == nil || !strings.Contains(err.Error(), "config file "+file+": policy.idle.gpu_percent: ") {
				t.Errorf("got %v", err)
			}
		})
	}
	// Numbers the flag parser cannot read at all are refused by it (the
	// root command's flag error function makes them usage errors, exit 2).
	for _, v := range []string{"1e309", "", "ten", "0x"} {
		out, err, _ := runAnalyze(t, nil, false, "--demo", "--idle-threshold="+v)
		if err == nil || !strings.Contains(err.Error(), `for "--idle-threshold" flag`) || out != "" {
			t.Errorf("--idle-threshold=%q: %v", v, err)
		}
	}
}

// The flag is checked again with the configuration it is laid over; a
// configuration that went bad after loading (a test double, a future key) is
// an input error naming the key.
func TestMergedPolicyValidated(t *testing.T) {
	cfg := demoConfig()
	cfg.Policy.Rightsize.GPUPercent = 300
	_, err, code := runAnalyze(t, cfg, false, "--demo", "--idle-threshold", "10")
	var ie *cmdutil.InputError
	if !errors.As(err, &ie) || code != cmdutil.ExitUsage || !strings.Contains(err.Error(), "policy.rightsize.gpu_percent: 300 is outside 0–100") {
		t.Errorf("got %v (exit %d)", err, code)
	}
}

func TestBadExchangeRates(t *testing.T) {
	for _, v := range []string{"NaN", "nan", "Inf", "+Inf", "-Infinity", "1e309", "1e7", "0", "-0.9", "0.0000001", "", " "} {
		out, err, code := runAnalyze(t, nil, false, "--demo", "--currency", "EUR", "--exchange-rate="+v)
		var fe *cmdutil.FlagError
		if !errors.As(err, &fe) || code != cmdutil.ExitUsage || !strings.HasPrefix(err.Error(), "--exchange-rate: ") || out != "" {
			t.Errorf("--exchange-rate=%q: %v (exit %d)", v, err, code)
		}
	}
	for _, v := range []string{"NaN", "Infinity", "1e309", "0", "-1", "2e6"} {
		cfg, err := config.Load(config.Options{LookupEnv: func(k string) (string, bool) {
			if k == "GPUFINOPS_REPORT_EXCHANGE_RATES_EUR" {
				return v, true
			}
			return "", false
		}})
		if err != nil {
			t.Fatal(err)
		}
		out, err, code := runAnalyze(t, cfg, false, "--demo", "--currency", "EUR")
		var ie *cmdutil.InputError
		if !errors.As(err, &ie) || code != cmdutil.ExitUsage || !strings.Contains(err.Error(), "environment GPUFINOPS_REPORT_EXCHANGE_RATES_EUR: exchange rate") || out != "" {
			t.Errorf("env rate %q: %v (exit %d)", v, err, code)
		}
	}
	for _, v := range []string{"0.5", "160.25", "1e3", "0.000001"} {
		if _, err, _ := runAnalyze(t, nil, false, "--demo", "--currency", "JPY", "--exchange-rate", v); err != nil {
			t.Errorf("--exchange-rate %s: %v", v, err)
		}
	}
}

func demoConfig() *config.Config {
	return &config.Config{Policy: recommend.DefaultPolicy().WithPurchases(purchasetest.Purchases())}
}

func TestJQTimeLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a program to its limit")
	}
	for _, expr := range []string{"def f: f; f", "last(range(1e12))"} {
		out, err, code := runAnalyze(t, nil, false, "--demo", "-o", "json", "--jq", expr, "--jq-timeout", "300ms")
		if code != cmdutil.ExitUsage || err == nil || !strings.Contains(err.Error(), "stopped after 300ms (--jq-timeout)") || out != "" {
			t.Errorf("%s: %v (exit %d), out %q", expr, err, code, out)
		}
	}
	for _, d := range []string{"0s", "-1s", "1h"} {
		_, err, code := runAnalyze(t, nil, false, "--demo", "-o", "json", "--jq", ".", "--jq-timeout", d)
		if code != cmdutil.ExitUsage || err == nil || !strings.HasPrefix(err.Error(), "--jq-timeout: ") {
			t.Errorf("--jq-timeout %s: %v", d, err)
		}
	}
}

// Bad numbers in a fleet file stop analyze with exit 2 and one line naming
// the file, the line or instance, and the field, before anything is printed.
func TestBadFleetFileFields(t *testing.T) {
	base := "apiVersion: gpufinops/v1\nkind: Fleet\ninstances:\n  - id: a\n    provider: aws\n    region: us-east-1\n    instanceType: g5.xlarge\n"
	for _, tc := range []struct{ field, want string }{
		{"    gpu: {count: .nan}\n", `line 8: instances[0]: gpu.count: ".nan" is not a finite number`},
		{"    gpu: {count: .Inf}\n", `gpu.count: ".Inf" is not a finite number`},
		{"    hourlyPrice: -.inf\n", `hourlyPrice: "-.inf" is not a finite number`},
		{"    hourlyPrice: 1e300\n", `hourlyPrice: 1e300 is above 10000 USD an hour`},
		{"    hourlyPrice: -1\n", `hourlyPrice: -1 is negative`},
		{"    gpu: {count: 8}\n", `gpu.count: 8 contradicts the catalog: aws g5.xlarge has 1 GPU`},
		{"    gpu: {count: 1e9}\n", `gpu.count: 1000000000 is above the limit of 64`},
		{"    vcpus: 1e309\n", `vcpus`},
		{"    utilization: {gpu: {avg: 1, p95: .nan, max: 3}}\n", `utilization.gpu.p95: ".nan" is not a finite number`},
		{"    utilization:\n      samples:\n        - {time: \"2026-11-30T00:00:00Z\", gpu: [1, 2, 3, 4, 5, 6, 7, 8]}\n", `utilization.samples[0].gpu: 8 values, but aws g5.xlarge has 1 GPU`},
		{"---\n" + base, `line 8: a second YAML document starts here`},
	} {
		file := filepath.Join(t.TempDir(), "fleet.yaml")
		if err := os.WriteFile(file, []byte(base+tc.field), 0o644); err != nil {
			t.Fatal(err)
		}
		out, err, code := runAnalyze(t, nil, false, "--fleet", file)
		var ie *cmdutil.InputError
		if !errors.As(err, &ie) || code != cmdutil.ExitUsage || !strings.HasPrefix(err.Error(), file+": ") || !strings.Contains(err.Error(), tc.want) || out != "" {
			t.Errorf("%q: %v (exit %d), want %q", tc.field, err, code, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: several lines: %q", tc.field, err)
		}
	}
}
