package e2e

import (
	"encoding/json"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/gpufinops/gpufinops/pkg/cmdutil"
	"github.com/gpufinops/gpufinops/pkg/fleet"
)

// classesFleet has the five protection classes of issue 34 on all three
// clouds, in the spellings each cloud's tag rules allow (Azure tag names
// without '/', GCP labels lower case [a-z0-9_-]), none of them a literal
// entry of the configuration: exemption conventions, production under
// other keys, inference under other keys, idle hosts of a multi-host job
// whose other host works, and controllers known by other signals. Only ids
// starting "idle-" may be stopped.
func classesFleet() *fleet.Fleet {
	w := fleet.TimeRange{Start: demoEnd.Add(-7 * 24 * time.Hour), End: demoEnd}
	flat := func(gpu, mem, cpu float64) *fleet.Utilization {
		return &fleet.Utilization{Window: &w,
			GPU: &fleet.Stats{Avg: gpu, P95: gpu, Max: gpu}, GPUMemory: &fleet.Stats{Avg: mem, P95: mem, Max: mem},
			CPU: &fleet.Stats{Avg: cpu, P95: cpu, Max: cpu}, Memory: &fleet.Stats{Avg: 20, P95: 20, Max: 20}}
	}
	hourly := func(gpus ...float64) *fleet.Utilization {
		u := &fleet.Utilization{Window: &w}
		for t := w.Start; t.Before(w.End); t = t.Add(time.Hour) {
			cpu := 3.0
			u.Samples = append(u.Samples, fleet.Sample{Time: t, GPU: append(fleet.PerGPU(nil), gpus...), GPUMemory: fleet.PerGPU{2, 2}, CPU: &cpu})
		}
		return u
	}
	launched := demoEnd.Add(-30 * 24 * time.Hour)
	var out []fleet.Instance
	add := func(p fleet.Provider, id, typ string, u *fleet.Utilization, tags ...string) {
		in := fleet.Instance{ID: id, Provider: p, InstanceType: typ, Lifecycle: fleet.OnDemand, State: fleet.Running, LaunchTime: &launched,
			Tags: map[string]string{}, Utilization: u}
		switch p {
		case fleet.AWS:
			in.Account, in.Region, in.Zone = "111122223333", "us-east-1", "us-east-1a"
		case fleet.Azure:
			in.Account, in.Region = "0b1f6471-1bf0-4dda-aec3-cb9272f09590", "eastus"
		case fleet.GCP:
			in.Account, in.Region, in.Zone = "ml-platform-prod", "us-central1", "us-central1-a"
		}
		for i := 0; i+1 < len(tags); i += 2 {
			in.Tags[tags[i]] = tags[i+1]
		}
		if u == nil {
			in.Utilization = flat(2, 5, 3)
		}
		out = append(out, in)
	}
	aws, az, gcp := fleet.AWS, fleet.Azure, fleet.GCP
	// Idle and unprotected: these may stop.
	add(aws, "idle-aws", "p3.2xlarge", nil, "AutoShutdown", "true")
	add(az, "idle-azure", "Standard_NC4as_T4_v3", nil, "Environment", "dev")
	add(gcp, "idle-gcp", "g2-standard-8", nil, "env", "dev")
	// (a) exemption conventions.
	add(aws, "exempt-donotstop", "p3.2xlarge", nil, "DoNotStop", "true")
	add(aws, "exempt-keep-running", "p3.2xlarge", nil, "keep-running", "yes")
	add(aws, "optout-auto-stop-maybe", "p3.2xlarge", nil, "auto-stop", "maybe")
	add(az, "exempt-azure-keeprunning", "Standard_NC4as_T4_v3", nil, "KeepRunning", "Yes")
	add(az, "exempt-azure-always-on", "Standard_NC4as_T4_v3", nil, "Schedule", "Always On")
	add(az, "optout-azure-disabled", "Standard_NC4as_T4_v3", nil, "Auto-Shutdown", "Disabled")
	add(gcp, "exempt-gcp-do-not-stop", "g2-standard-8", nil, "do_not_stop", "true")
	add(gcp, "exempt-gcp-shutdown-exempt", "g2-standard-8", nil, "shutdown-exempt", "yes")
	add(gcp, "optout-gcp-autostop", "g2-standard-8", nil, "autostop", "keep-running")
	// (b) production under keys not configured.
	add(aws, "prod-deployment", "p3.2xlarge", nil, "deployment", "production")
	add(az, "prod-azure-lifecycle", "Standard_NC4as_T4_v3", nil, "Lifecycle", "Prod")
	add(gcp, "prod-gcp-env-type", "g2-standard-8", nil, "env-type", "prd")
	// (c) inference under other keys, serving stacks.
	add(aws, "infer-role", "p3.2xlarge", nil, "role", "inference-api")
	add(az, "infer-azure-triton", "Standard_NC4as_T4_v3", nil, "Service", "triton-server")
	add(gcp, "infer-gcp-vllm", "g2-standard-8", nil, "app", "vllm")
	// (d) an idle host of a multi-host job whose other host works.
	add(aws, "mh-idle-aws", "p3.2xlarge", nil, "job", "pretrain-7b")
	add(aws, "mh-busy-aws", "p3.2xlarge", flat(80, 50, 30), "Job", "pretrain-7b")
	add(gcp, "mh-idle-gcp", "g2-standard-8", nil, "tpu_slice", "slice-1")
	add(gcp, "mh-busy-gcp", "g2-standard-8", flat(80, 50, 30), "tpu-slice", "slice-1")
	// (e) controllers known by other signals.
	add(aws, "owned-ray", "p3.2xlarge", nil, "ray-cluster-name", "rc")
	add(az, "owned-azure-batch", "Standard_NC4as_T4_v3", nil, "BatchAccountName", "acct")
	add(az, "owned-azure-avd", "Standard_NC4as_T4_v3", nil, "cm-resource-parent", "/subscriptions/s/resourceGroups/rg/providers/Microsoft.DesktopVirtualization/hostpools/hp")
	add(az, "owned-azure-poolname", "Standard_NC4as_T4_v3", nil, "poolName", "gpupool")
	add(gcp, "owned-gcp-batch", "g2-standard-8", nil, "goog-batch-job-uid", "j-1")
	add(gcp, "owned-gcp-slurm", "g2-standard-8", nil, "slurm-cluster-name", "hpc")
	// Missing data: half the GPUs report.
	add(az, "partial-azure", "Standard_NC64as_T4_v3", hourly(1, 1))
	add(gcp, "partial-gcp", "a2-highgpu-4g", hourly(1, 1))
	return &fleet.Fleet{APIVersion: fleet.APIVersion, Kind: fleet.Kind, Instances: out}
}

// Through the three clouds' simulators and their real SDKs: idle-stop
// --execute stops none of the protected classes, analyze counts a stop
// saving for exactly the machines idle-stop stops, and partial GPUs get no
// high-confidence idle advice.
func TestProtectionClassesOnThreeClouds(t *testing.T) {
	recs, r := analyzeThenIdleStop(t, classesFleet())
	stopped := map[string]bool{}
	var wrong []string
	for _, d := range r.Machines {
		if d.Decision == "stop" {
			stopped[d.ResourceID] = true
			if !strings.HasPrefix(d.ResourceID, "idle-") {
				wrong = append(wrong, d.ResourceID+" ("+string(d.Reason)+")")
			}
		} else if strings.HasPrefix(d.ResourceID, "idle-") {
			t.Errorf("%s: %s %s: %s, want a stop", d.ResourceID, d.Decision, d.Reason, d.Message)
		} else {
			t.Logf("%s: %s: %s", d.ResourceID, d.Reason, d.Message)
		}
	}
	sort.Strings(wrong)
	if len(wrong) > 0 {
		t.Errorf("stopped protected machines: %v", wrong)
	}
	if len(r.Machines) != len(classesFleet().Instances) {
		t.Errorf("%d machines decided, want %d", len(r.Machines), len(classesFleet().Instances))
	}

	counted := map[string]bool{}
	for _, rec := range recs {
		if rec.Kind == "idle-stop" && rec.ShortAction == "stop" && rec.MonthlySavings > 0 {
			counted[rec.ResourceID] = true
		}
		if strings.HasPrefix(rec.ResourceID, "partial-") && (rec.Kind == "idle-stop" || rec.Kind == "schedule" || rec.Kind == "rightsize") && rec.Confidence == "high" {
			t.Errorf("%s: %s advice with high confidence on 2 of 4 GPUs reporting", rec.ResourceID, rec.Kind)
		}
	}
	for _, in := range classesFleet().Instances {
		if stopped[in.ID] != counted[in.ID] {
			t.Errorf("%s: idle-stop stops it %v, analyze counts a stop saving %v", in.ID, stopped[in.ID], counted[in.ID])
		}
	}
}

// liveRec is the part of an analyze recommendation the live e2e tests
// compare with idle-stop's decisions.
type liveRec struct {
	ResourceID     string  `json:"resourceId"`
	Kind           string  `json:"kind"`
	ShortAction    string  `json:"shortAction"`
	Confidence     string  `json:"confidence"`
	MonthlySavings float64 `json:"monthlySavings"`
}

// analyzeThenIdleStop serves f through the three clouds' simulators, runs
// analyze on them (first: idle-stop --execute then stops the idle ones in
// the simulators) and idle-stop --execute, and returns analyze's
// recommendations and idle-stop's decisions.
func analyzeThenIdleStop(t *testing.T, f *fleet.Fleet) ([]liveRec, runOutput) {
	t.Helper()
	allCloudsServing(t, f)
	code, rep, stderr := gpufinopsAt(t, demoEnd, "analyze", "--provider", "aws,azure,gcp", "-o", "json")
	if code != cmdutil.ExitOK {
		t.Fatalf("analyze exited %d: %s", code, stderr)
	}
	var doc struct {
		Recommendations []liveRec `json:"recommendations"`
	}
	if err := json.Unmarshal([]byte(rep), &doc); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	code, out, stderr := gpufinopsAt(t, demoEnd, "idle-stop", "--provider", "aws,azure,gcp", "--execute", "--max-stops", "100",
		"--audit-log", filepath.Join(dir, "audit.jsonl"), "--lock-dir", filepath.Join(dir, "locks"), "-o", "json")
	if code != cmdutil.ExitOK {
		t.Fatalf("idle-stop exited %d: %s", code, stderr)
	}
	return doc.Recommendations, decode(t, out)
}
