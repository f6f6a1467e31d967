package bench

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gpufinops/gpufinops/pkg/fleet"
)

// TestHarnessOnTinyFleet runs every kind of row on 30 instances at 0 ms
// (short-safe): the baseline's clients sent exactly the requests the AWS
// simulator counted, every cloud was asked at least its bound, the
// throttled scan gave the clean scan's report, and the table prints a
// verdict for every target.
func TestHarnessOnTinyFleet(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	dir := t.TempDir()
	rows, err := Run(ctx, Config{
		Sizes: []int{30}, Live: []int{30}, Target: 30, Throttle: 0.1, Baseline: true,
		Fleet: FleetOptions{Seed: 3, Regions: 2, Accounts: 2}, Dir: dir,
	})
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]Row{}
	for _, r := range rows {
		if r.Err != nil {
			t.Fatalf("%s: %v", r.Name, r.Err)
		}
		byName[r.Name] = r
	}
	for _, name := range []string{"engine", "scan", "scan 10 % throttled", "scan aws", "baseline"} {
		if _, ok := byName[name]; !ok {
			t.Fatalf("no %q row in %d rows", name, len(rows))
		}
	}
	engine, scan, thr, base := byName["engine"], byName["scan"], byName["scan 10 % throttled"], byName["baseline"]
	if engine.Outcome.Instances != 30 || engine.Client.CPU <= 0 || engine.Client.PeakRSS < 1<<20 || engine.Client.Wall <= 0 {
		t.Errorf("engine row: %+v", engine)
	}
	// The AWS adapter leaves out instances without a GPU (the catalog's
	// FPGA types), so a scan may report a few fewer than the file.
	if scan.Outcome.Instances < 25 || scan.Outcome.Instances > 30 {
		t.Errorf("the scan reported %d of 30 instances", scan.Outcome.Instances)
	}
	if scan.Client.CPU <= 0 || scan.Sim.CPU <= 0 || scan.Client.PeakRSS < 1<<20 {
		t.Errorf("scan usage: client %+v, sim %+v", scan.Client, scan.Sim)
	}
	if len(scan.Bounds) != 3 {
		t.Fatalf("%d clouds bounded", len(scan.Bounds))
	}
	for _, b := range scan.Bounds {
		if got := scan.Requests.Cloud(b.Cloud); got < b.Total() || b.Total() == 0 || b.Chain == 0 {
			t.Errorf("%s: %d requests, bound %d, chain %d: the scan cannot beat its lower bound", b.Cloud, got, b.Total(), b.Chain)
		}
	}
	if scan.Requests.Total() != scan.Requests.Cloud(fleet.AWS)+scan.Requests.Cloud(fleet.Azure)+scan.Requests.Cloud(fleet.GCP) {
		t.Error("some requests belong to no cloud")
	}
	if thr.Same == nil || !*thr.Same {
		t.Errorf("the throttled scan's report differs: %+v vs %+v", thr.Outcome, scan.Outcome)
	}
	if thr.Requests.Total() <= scan.Requests.Total() {
		t.Errorf("10 %% throttling added no retries: %d vs %d requests", thr.Requests.Total(), scan.Requests.Total())
	}
	if base.Sent == 0 || base.Requests.Total() != base.Sent || base.Requests.Cloud(fleet.AWS) != base.Sent {
		t.Errorf("the baseline sent %d requests; the simulators counted %d (%d AWS)", base.Sent, base.Requests.Total(), base.Requests.Cloud(fleet.AWS))
	}
	if got := base.Requests.Op("monitoring.GetMetricData"); got-base.MetricRetries != base.Outcome.Instances || got == 0 {
		t.Errorf("%d GetMetricData calls (%d of them the SDK's retries) for %d AWS instances", got, base.MetricRetries, base.Outcome.Instances)
	}
	// The AWS part scanned alone: the baseline's instances (less the FPGA
	// ones), AWS requests only, AWS's bound.
	aws := byName["scan aws"]
	if aws.Requests.Cloud(fleet.Azure)+aws.Requests.Cloud(fleet.GCP) != 0 || aws.Requests.Cloud(fleet.AWS) == 0 ||
		len(aws.Bounds) != 1 || aws.Bounds[0].Cloud != fleet.AWS ||
		aws.Outcome.Instances == 0 || aws.Outcome.Instances > base.Outcome.Instances || aws.Outcome.Instances >= scan.Outcome.Instances {
		t.Errorf("scan aws: %d instances (baseline %d, scan %d), requests %+v, bounds %+v", aws.Outcome.Instances, base.Outcome.Instances, scan.Outcome.Instances, aws.Requests, aws.Bounds)
	}
	var out bytes.Buffer
	Print(&out, rows, 30)
	s := out.String()
	for _, want := range []string{"Measured runs", "Requests per operation", "ec2.DescribeInstances", "Targets (issue 16)", "throttled: same results"} {
		if !strings.Contains(s, want) {
			t.Errorf("the table has no %q:\n%s", want, s)
		}
	}
	if n := strings.Count(s, "PASS ") + strings.Count(s, "FAIL ") + strings.Count(s, "---- "); n != 8 {
		t.Errorf("%d verdicts for 8 targets:\n%s", n, s)
	}
	t.Logf("\n%s", s)
}
