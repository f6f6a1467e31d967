package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pkg/recommend"
	"github.com/gpufinops/gpufinops/pricing"
	"github.com/gpufinops/gpufinops/providers"
)

func env(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func write(t *testing.T, name, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestDefaults(t *testing.T) {
	cfg, err := Load(Options{LookupEnv: env(nil)})
	if err != nil {
		t.Fatal(err)
	}
	want := recommend.DefaultPolicy()
	if cfg.Policy.Idle != want.Idle || cfg.Policy.Commitment.Term != "1y" || cfg.File != "" {
		t.Errorf("got %+v", cfg)
	}
}

func TestPrecedence(t *testing.T) {
	file := write(t, "c.yaml", `
policy:
  idle:
    gpu_percent: 10
    schedule_buffer_hours: 2
  commitment:
    term: 3y
    discounts_1y:
      aws: 0.41
    plans:
      aws: ec2-instance-savings-plan
  spot:
    workloads: [training]
`)
	clouds := []*providers.RegInfo{
		{Name: "aws", Purchase: &providers.Purchase{Plan: pricing.ComputeSavingsPlan}},
		{Name: "gcp", Purchase: &providers.Purchase{Plan: pricing.ResourceCUD}},
	}
	cfg, err := Load(Options{File: file, Providers: clouds, LookupEnv: env(map[string]string{
		"GPUFINOPS_POLICY_IDLE_GPU_PERCENT":            "12.5",
		"GPUFINOPS_POLICY_COMMITMENT_DISCOUNTS_3Y_GCP": "0.5",
		"GPUFINOPS_POLICY_SPOT_WORKLOADS":              "training,batch",
	})})
	if err != nil {
		t.Fatal(err)
	}
	p := cfg.Policy
	if p.Idle.GPUPercent != 12.5 {
		t.Errorf("env should win over the file: gpu_percent = %v", p.Idle.GPUPercent)
	}
	if p.Idle.ScheduleBufferHours != 2 || p.Commitment.Term != "3y" {
		t.Errorf("file values lost: %+v %+v", p.Idle, p.Commitment)
	}
	if p.Commitment.Plans["aws"] != "ec2-instance-savings-plan" || p.Commitment.Plans["gcp"] != "resource-cud" {
		t.Errorf("map keys should merge with the clouds' registered plans: %v", p.Commitment.Plans)
	}
	if p.Commitment.Discounts1y["aws"] != 0.41 || len(p.Commitment.Discounts1y) != 1 {
		t.Errorf("configured discounts: %v", p.Commitment.Discounts1y)
	}
	if p.Commitment.Discounts3y["gcp"] != 0.5 || len(p.Commitment.Discounts3y) != 1 {
		t.Errorf("env map key: %v", p.Commitment.Discounts3y)
	}
	if len(p.Spot.Workloads) != 2 || p.Spot.Workloads[1] != fleet.Batch {
		t.Errorf("workloads = %v", p.Spot.Workloads)
	}
	if p.Idle.ScheduleMaxBusyPercent != 60 || p.Rightsize.GPUPercent != 50 {
		t.Errorf("untouched defaults changed: %+v", p)
	}
	if cfg.File != file {
		t.Errorf("File = %q", cfg.File)
	}
}

func TestDefaultFileFromXDG(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "gpufinops"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "gpufinops", "config.yaml"), []byte("policy: {rightsize: {headroom_percent: 30}}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := Load(Options{LookupEnv: env(map[string]string{"XDG_CONFIG_HOME": dir})})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Policy.Rightsize.HeadroomPercent != 30 {
		t.Errorf("headroom = %v", cfg.Policy.Rightsize.HeadroomPercent)
	}
}

func TestErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		file string
		env  map[string]string
		want string
	}{
		{"missing file", "/nonexistent/gpufinops.yaml", nil, "config file /nonexistent/gpufinops.yaml: no such file or directory"},
		{"unknown key", write(t, "a.yaml", "policy: {idle: {gpu_pct: 10}}\n"), nil, "policy.idle.gpu_pct"},
		{"mistyped key", write(t, "a2.yaml", "policy: {idle: {gpu_precent: 10}}\n"), nil, `unknown key policy.idle.gpu_precent; did you mean "policy.idle.gpu_percent"?`},
		{"mistyped section", write(t, "a3.yaml", "polcy: {idle: {gpu_percent: 10}}\n"), nil, `unknown key polcy; did you mean "policy"?`},
		{"bad yaml", write(t, "b.yaml", "policy: [\n"), nil, "b.yaml"},
		{"out of range", write(t, "c.yaml", "policy: {idle: {gpu_percent: 140}}\n"), nil, "policy.idle.gpu_percent: 140 is outside 0–100"},
		{"bad env number", "", map[string]string{"GPUFINOPS_POLICY_IDLE_GPU_PERCENT": "lots"}, "environment"},
		{"bad env term", "", map[string]string{"GPUFINOPS_POLICY_COMMITMENT_TERM": "2y"}, `policy.commitment.term: "2y" is not 1y or 3y`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load(Options{File: tc.file, LookupEnv: env(tc.env)})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestKeysAndEnvVars(t *testing.T) {
	keys := strings.Join(Keys(), " ")
	for _, k := range []string{"policy.idle.gpu_percent", "policy.commitment.discounts_1y.aws", "policy.spot.workloads", "policy.min_window_hours"} {
		if !strings.Contains(keys, k) {
			t.Errorf("Keys() lacks %s", k)
		}
	}
	if got := EnvVar("policy.idle.gpu_percent"); got != "GPUFINOPS_POLICY_IDLE_GPU_PERCENT" {
		t.Errorf("EnvVar = %s", got)
	}
}

func TestGovernanceFromFileAndEnv(t *testing.T) {
	file := write(t, "g.yaml", `
policy:
  governance:
    required_tags: [Team, Project]
    allowed_values:
      - {tag: Environment, values: [prod, dev]}
`)
	cfg, err := Load(Options{File: file, LookupEnv: env(map[string]string{"GPUFINOPS_POLICY_GOVERNANCE_REQUIRED_TAGS": "Team,CostCenter"})})
	if err != nil {
		t.Fatal(err)
	}
	g := cfg.Policy.Governance
	if strings.Join(g.RequiredTags, ",") != "Team,CostCenter" || len(g.AllowedValues) != 1 || g.AllowedValues[0].Values[1] != "dev" {
		t.Errorf("governance %+v", g)
	}
	if strings.Contains(strings.Join(Keys(), " "), "allowed_values") {
		t.Error("a list of objects has no environment variable")
	}
}

func TestExchangeRate(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(file, []byte("report:\n  exchange_rates:\n    EUR: 0.92\n    gbp: 0.79\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"GPUFINOPS_REPORT_EXCHANGE_RATES_GBP": "0.785"}
	cfg, err := Load(Options{File: file, LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ code, rate, source string }{
		{"EUR", "0.92", "config file " + file},
		{"eur", "0.92", "config file " + file},
		{"GBP", "0.785", "environment GPUFINOPS_REPORT_EXCHANGE_RATES_GBP"},
		{"JPY", "", ""},
	} {
		rate, source, ok := cfg.ExchangeRate(tc.code)
		if rate != tc.rate || source != tc.source || ok != (tc.rate != "") {
			t.Errorf("ExchangeRate(%s) = %q, %q, %v; want %q, %q", tc.code, rate, source, ok, tc.rate, tc.source)
		}
	}
}

func TestISFRatiosKey(t *testing.T) {
	file := write(t, "config.yaml", "analyze:\n  isf_ratios: /data/isf.csv\n")
	for _, tc := range []struct {
		env        map[string]string
		want, from string
	}{
		{nil, "/data/isf.csv", "config file " + file},
		{map[string]string{"GPUFINOPS_ANALYZE_ISF_RATIOS": "/other.csv"}, "/other.csv", "environment GPUFINOPS_ANALYZE_ISF_RATIOS"},
	} {
		cfg, err := Load(Options{File: file, LookupEnv: env(tc.env)})
		if err != nil {
			t.Fatal(err)
		}
		if cfg.Analyze.ISFRatios != tc.want || cfg.Source("analyze.isf_ratios") != tc.from {
			t.Errorf("%q from %q, want %q from %q", cfg.Analyze.ISFRatios, cfg.Source("analyze.isf_ratios"), tc.want, tc.from)
		}
	}
}
