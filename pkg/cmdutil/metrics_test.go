package cmdutil

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpufinops/gpufinops/pkg/config"
	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pricing/catalog"
)

func metricsFleet() *fleet.Fleet {
	return &fleet.Fleet{APIVersion: fleet.APIVersion, Kind: fleet.Kind, Instances: []fleet.Instance{
		{ID: "i-1", Name: "nb-1", Provider: fleet.AWS, Region: "us-east-1", InstanceType: "g4dn.xlarge", Lifecycle: fleet.OnDemand, State: fleet.Running},
	}}
}

func readWithMetrics(t *testing.T, m MetricsFlags) (*FleetInputs, error) {
	t.Helper()
	in := FleetFlags{Path: "f.yaml", LookbackDays: 14, Metrics: m}
	if err := in.Validate(); err != nil {
		return nil, err
	}
	return ReadFleet(context.Background(), func() (*config.Config, error) { return &config.Config{}, nil },
		catalog.Embedded,
		func(string, bool) (*fleet.Fleet, error) { return metricsFleet(), nil }, nil, in)
}

func writeCSV(t *testing.T, name, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

const csvHead = "timestamp, index, utilization.gpu [%], memory.used [MiB], memory.total [MiB]\n"

func TestMetricsFile(t *testing.T) {
	p := writeCSV(t, "nb-1.csv", csvHead+"2026/11/30 12:00:01.123, 0, 3 %, 1024 MiB, 4096 MiB\n2026/11/30 12:02:01.123, 0, 5 %, 1024 MiB, 4096 MiB\n")
	out, err := readWithMetrics(t, MetricsFlags{Files: []string{p}})
	if err != nil {
		t.Fatal(err)
	}
	u := out.Fleet.Instances[0].Utilization
	if u == nil || u.Source != "nvidia-smi:nb-1.csv" || *u.Coverage != 0.6667 || len(u.Samples) != 2 {
		t.Fatalf("utilization = %+v", u)
	}
	if len(out.Failures) != 0 || len(out.Notes) != 1 || out.Notes[0] != "i-1: utilization from nvidia-smi:nb-1.csv covers 66.7 % of the window" {
		t.Errorf("failures %v, notes %q", out.Failures, out.Notes)
	}
}

func TestMetricsErrors(t *testing.T) {
	bad := writeCSV(t, "nb-1.csv", csvHead+"2026/11/30 12:00:01.123, 0, abc, 1024 MiB, 4096 MiB\n")
	other := writeCSV(t, "gpu-9.csv", csvHead+"2026/11/30 12:00:01.123, 0, 3 %, 1024 MiB, 4096 MiB\n")
	for _, tc := range []struct {
		name string
		m    MetricsFlags
		code ExitCode
		want string
	}{
		{"malformed CSV", MetricsFlags{Files: []string{bad}}, ExitUsage, `nb-1.csv: line 2: utilization.gpu: "abc" is not a number`},
		{"unknown source", MetricsFlags{Source: "datadog"}, ExitUsage, `--metrics: "datadog" is not one of cloud, prometheus`},
		{"prometheus flag without prometheus", MetricsFlags{PrometheusURL: "http://127.0.0.1:1"}, ExitUsage, "--prometheus-* flags need --metrics prometheus"},
		{"bad header", MetricsFlags{Source: MetricsPrometheus, Headers: []string{"X-Org"}}, ExitUsage, `--prometheus-header: "X-Org" is not K=V`},
		{"no URL", MetricsFlags{Source: MetricsPrometheus}, ExitUsage, "prometheus: no URL; set --prometheus-url"},
		{"nothing matches", MetricsFlags{Files: []string{other}}, ExitPartial, "some scopes failed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := readWithMetrics(t, tc.m)
			if err == nil && out != nil {
				err = out.Partial()
			}
			if err == nil || ExitCodeFor(err) != tc.code {
				t.Fatalf("err = %v (exit %d), want exit %d", err, ExitCodeFor(err), tc.code)
			}
			if tc.code == ExitPartial {
				if len(out.Failures) != 1 || !strings.HasPrefix(errors.Unwrap(out.Failures[0]).Error(), `metrics nvidia-smi: no host in gpu-9.csv (gpu-9)`) {
					t.Errorf("failures = %v", out.Failures)
				}
				ws := out.Fleet.Metadata.Warnings
				if len(ws) != 1 || ws[0].Code != fleet.ScanMetricsFailed || ws[0].Source != "nvidia-smi" || !strings.HasPrefix(ws[0].Reason, "no host in gpu-9.csv") {
					t.Errorf("metadata.warnings = %+v", ws)
				}
				return
			}
			if !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("err = %v, want %s", err, tc.want)
			}
		})
	}
}
