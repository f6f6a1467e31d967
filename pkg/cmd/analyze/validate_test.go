package analyze

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
	return &config.Config{Policy: recommend.DefaultPolicy()}
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
