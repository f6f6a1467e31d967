package config

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gpufinops/gpufinops/pkg/idlestop"
)

func TestRunSettings(t *testing.T) {
	cfg, err := Load(Options{LookupEnv: env(nil)})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Timeouts != (TimeoutsConfig{Connect: 10 * time.Second, Request: 30 * time.Second, Run: 10 * time.Minute, Grace: idlestop.DefaultGrace}) || cfg.Locks.Wait != 5*time.Minute || cfg.Locks.Dir != "" || cfg.Audit.Log != "" {
		t.Fatalf("defaults %+v %+v %+v", cfg.Timeouts, cfg.Locks, cfg.Audit)
	}
	file := write(t, "c.yaml", "timeouts:\n  connect: 3s\n  request: 5s\n  run: 2m\n  grace: 0s\nlocks:\n  dir: /var/lib/gpufinops/locks\n  wait: 1m\naudit:\n  log: /var/log/gpufinops/idle-stop.jsonl\n")
	cfg, err = Load(Options{File: file, LookupEnv: env(map[string]string{"GPUFINOPS_TIMEOUTS_RUN": "90s", "GPUFINOPS_LOCKS_WAIT": "1ms"})})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Timeouts.Connect != 3*time.Second || cfg.Timeouts.Request != 5*time.Second || cfg.Timeouts.Run != 90*time.Second || cfg.Timeouts.Grace != 0 ||
		cfg.Locks.Dir != "/var/lib/gpufinops/locks" || cfg.Locks.Wait != time.Millisecond || cfg.Audit.Log != "/var/log/gpufinops/idle-stop.jsonl" {
		t.Fatalf("got %+v %+v %+v", cfg.Timeouts, cfg.Locks, cfg.Audit)
	}
	keys := Keys()
	for _, k := range []string{"timeouts.connect", "timeouts.request", "timeouts.run", "timeouts.grace", "locks.dir", "locks.wait", "audit.log"} {
		if !slices.Contains(keys, k) {
			t.Errorf("Keys() lacks %s", k)
		}
	}
}

func TestRunSettingsRefused(t *testing.T) {
	for _, tc := range []struct{ env, val, want string }{
		{"GPUFINOPS_TIMEOUTS_REQUEST", "0s", "timeouts.request"},
		{"GPUFINOPS_TIMEOUTS_CONNECT", "0s", "timeouts.connect"},
		{"GPUFINOPS_TIMEOUTS_REQUEST", "-5s", "timeouts.request"},
		{"GPUFINOPS_TIMEOUTS_REQUEST", "2h", "timeouts.request"},
		{"GPUFINOPS_TIMEOUTS_RUN", "0", "timeouts.run"},
		{"GPUFINOPS_TIMEOUTS_RUN", "1000h", "timeouts.run"},
		{"GPUFINOPS_TIMEOUTS_RUN", "soon", "timeouts"},
		{"GPUFINOPS_TIMEOUTS_RUN", "NaN", "timeouts"},
		{"GPUFINOPS_TIMEOUTS_GRACE", "-1s", "timeouts.grace"},
		{"GPUFINOPS_TIMEOUTS_GRACE", "11m", "timeouts.grace"},
		{"GPUFINOPS_LOCKS_WAIT", "-1ns", "locks.wait"},
		{"GPUFINOPS_LOCKS_WAIT", "0s", "locks.wait"},
	} {
		_, err := Load(Options{LookupEnv: env(map[string]string{tc.env: tc.val})})
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s=%s: %v, want one line naming %s", tc.env, tc.val, err, tc.want)
		}
	}
	file := write(t, "c.yaml", "timeouts:\n  run: 0s\n")
	if _, err := Load(Options{File: file, LookupEnv: env(nil)}); err == nil || !strings.Contains(err.Error(), "timeouts.run") {
		t.Errorf("file: %v", err)
	}
}
