package idlestop

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/gpufinops/gpufinops/pkg/cmdutil/cmdtest"
	"github.com/gpufinops/gpufinops/pkg/config"
	"github.com/gpufinops/gpufinops/pkg/idlestop"
)

func TestNewCmdIdleStop(t *testing.T) {
	for _, tc := range []struct {
		args    string
		check   func(*testing.T, *IdleStopOptions)
		wantErr string
	}{
		{args: "--provider aws", check: func(t *testing.T, o *IdleStopOptions) {
			if o.Execute || o.Output != "table" || o.Threshold != nil || o.MaxStops != nil {
				t.Errorf("defaults: %+v", o)
			}
		}},
		{args: "--provider aws --execute --max-stops 3 --threshold 10 --window 45m --require-opt-in --selector Team=ml -o json --audit-log /tmp/a.jsonl", check: func(t *testing.T, o *IdleStopOptions) {
			p, err := o.policy(&config.Config{IdleStop: idlestop.DefaultPolicy()})
			if err != nil {
				t.Fatal(err)
			}
			if !o.Execute || o.Output != "json" || o.AuditLog != "/tmp/a.jsonl" || p.MaxStops != 3 || p.GPUPercent != 10 || p.Window != 45*time.Minute || !p.RequireOptIn || p.Selectors["Team"] != "ml" {
				t.Errorf("options %+v policy %+v", o, p)
			}
		}},
		{args: "", wantErr: "idle-stop acts on clouds: give --provider aws"},
		{args: "--provider aws --threshold 0", wantErr: "--threshold: 0 is outside (0, 100]"},
		{args: "--provider aws --window 1m", wantErr: "--window: 1m0s is outside 5m–24h"},
		{args: "--provider aws --max-stops -1", wantErr: "--max-stops: -1 is negative"},
		{args: "--provider aws --protect-instance-store", check: func(t *testing.T, o *IdleStopOptions) {
			p, err := o.policy(&config.Config{IdleStop: idlestop.DefaultPolicy()})
			if err != nil || !p.ProtectInstanceStore {
				t.Errorf("policy %+v %v", p, err)
			}
		}},
		{args: "--provider aws --selector Team", wantErr: `--selector "Team": want key=value`},
		{args: "--provider oracle", wantErr: `--provider: "oracle" is not one of aws, azure, gcp`},
	} {
		t.Run(tc.args, func(t *testing.T) {
			got, err := cmdtest.Parse(t, NewCmdIdleStop, strings.Fields(tc.args))
			if cmdtest.CheckErr(t, err, tc.wantErr) {
				return
			}
			tc.check(t, got)
		})
	}
}

// The flags, the config file and the environment meet the same limits:
// Policy.Validate's, named by flag when a flag gave the value.
func TestFlagLimitsAreThePolicyLimits(t *testing.T) {
	for _, tc := range []struct{ args, wantErr string }{
		{"--provider aws --window 4m59s", "--window: 4m59s is outside 5m–24h"},
		{"--provider aws --window 25h", "--window: 25h0m0s is outside 5m–24h"},
		{"--provider aws --threshold NaN", "--threshold: NaN is outside (0, 100]"},
		{"--provider aws --threshold +Inf", "--threshold: +Inf is outside (0, 100]"},
		{"--provider aws --threshold 100.5", "--threshold: 100.5 is outside (0, 100]"},
		{"--provider aws --min-uptime -1s", "--min-uptime: -1s is negative"},
		{"--provider aws --max-stops 0", "--max-stops: 0 is outside 1–10000"},
		{"--provider aws --exempt-tag ' '", "--exempt-tag: must not be empty (it would exempt nothing)"},
	} {
		t.Run(tc.args, func(t *testing.T) {
			args := strings.Fields(strings.ReplaceAll(tc.args, "' '", "\x00"))
			for i, a := range args {
				if a == "\x00" {
					args[i] = " "
				}
			}
			_, err := cmdtest.Parse(t, NewCmdIdleStop, args)
			cmdtest.CheckErr(t, err, tc.wantErr)
		})
	}
	// The same value from the config file is refused by the same check.
	dir := t.TempDir()
	file := dir + "/config.yaml"
	if err := os.WriteFile(file, []byte("idle_stop:\n  window: 1m\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := config.Load(config.Options{File: file, LookupEnv: func(string) (string, bool) { return "", false }})
	if err == nil || !strings.Contains(err.Error(), "idle_stop.window: 1m0s is outside 5m–24h") || !strings.Contains(err.Error(), file) {
		t.Errorf("config file: %v", err)
	}
	env := map[string]string{"GPUFINOPS_IDLE_STOP_GPU_PERCENT": "NaN"}
	_, err = config.Load(config.Options{LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }})
	if err == nil || !strings.Contains(err.Error(), "idle_stop.gpu_percent: NaN") || !strings.Contains(err.Error(), "GPUFINOPS_IDLE_STOP_GPU_PERCENT") {
		t.Errorf("environment: %v", err)
	}
	// Lists come from the environment comma-separated.
	env = map[string]string{"GPUFINOPS_IDLE_STOP_PRODUCTION_VALUES": "gold,platinum-*", "GPUFINOPS_IDLE_STOP_EXEMPT_VALUE": "no"}
	if _, err = config.Load(config.Options{LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }}); err == nil || !strings.Contains(err.Error(), "idle_stop.exempt_value") {
		t.Errorf("exempt_value no from the environment: %v", err)
	}
	delete(env, "GPUFINOPS_IDLE_STOP_EXEMPT_VALUE")
	cfg, err := config.Load(config.Options{LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }})
	if err != nil || strings.Join(cfg.IdleStop.ProductionValues, " ") != "gold platinum-*" {
		t.Errorf("production_values from the environment: %v %v", cfg, err)
	}
}
