package e2e

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/gpufinops/gpufinops/pkg/fleet"
)

// protectFleet is a mixed fleet with every protection class in several
// spellings; only the ids starting with "idle-" may be stopped. Every
// machine is idle by its GPUs unless its class says otherwise, so only the
// protection keeps it running.
func protectFleet() (*fleet.Fleet, map[string]string) {
	flat := func(gpu, mem, cpu float64) *fleet.Utilization {
		w := fleet.TimeRange{Start: stopNow.Add(-7 * 24 * time.Hour), End: stopNow}
		return &fleet.Utilization{Window: &w,
			GPU: &fleet.Stats{Avg: gpu, P95: gpu, Max: gpu}, GPUMemory: &fleet.Stats{Avg: mem, P95: mem, Max: mem},
			CPU: &fleet.Stats{Avg: cpu, P95: cpu, Max: cpu}, Memory: &fleet.Stats{Avg: 20, P95: 20, Max: 20}}
	}
	// hourly samples over a week, each with the given per-GPU values.
	hourly := func(gpus ...float64) *fleet.Utilization {
		w := fleet.TimeRange{Start: stopNow.Add(-7 * 24 * time.Hour), End: stopNow}
		u := &fleet.Utilization{Window: &w}
		for t := w.Start; t.Before(w.End); t = t.Add(time.Hour) {
			cpu := 3.0
			u.Samples = append(u.Samples, fleet.Sample{Time: t, GPU: append(fleet.PerGPU(nil), gpus...), GPUMemory: fleet.PerGPU{2}, CPU: &cpu})
		}
		return u
	}
	launched := stopNow.Add(-30 * 24 * time.Hour)
	want := map[string]string{}
	var out []fleet.Instance
	add := func(id, reason string, mod func(*fleet.Instance), tags ...string) {
		in := fleet.Instance{ID: id, Provider: fleet.AWS, Account: "111122223333", Region: "us-east-1", Zone: "us-east-1a",
			InstanceType: "p3.2xlarge", Lifecycle: fleet.OnDemand, State: fleet.Running, LaunchTime: &launched,
			Tags: map[string]string{"Team": "ml"}, Utilization: flat(2, 5, 3)}
		for i := 0; i+1 < len(tags); i += 2 {
			in.Tags[tags[i]] = tags[i+1]
		}
		if mod != nil {
			mod(&in)
		}
		out = append(out, in)
		want[id] = reason
	}
	typ := func(t string) func(*fleet.Instance) { return func(in *fleet.Instance) { in.InstanceType = t } }

	// Truly idle and allowed to stop, in several spellings.
	add("idle-plain", "stop/idle", nil, "AutoShutdown", "true")
	add("idle-exempt-false", "stop/idle", nil, "auto-shutdown-exempt", "false", "Environment", "dev")
	add("idle-staging", "stop/idle", nil, "Environment", " Staging ", "auto_shutdown", "Yes")
	add("idle-qa-terraform", "stop/idle", nil, "Stage", "qa", "managed-by", "terraform")
	add("idle-4-gpus", "stop/idle", typ("g4dn.12xlarge"), "env", "non-prod")
	add("idle-instance-store", "stop/idle", typ("g5.xlarge"), "Environment", "sandbox")
	add("idle-hibernation", "stop/idle", func(in *fleet.Instance) { in.Hibernation = true }, "Env", "test")
	// Exemption tag: any value but a false-like one.
	add("exempt-true", "skip/exempt", nil, "auto-shutdown-exempt", "TRUE")
	add("exempt-underscore", "skip/exempt", nil, "Auto_Shutdown_Exempt", "yes")
	add("exempt-empty", "skip/exempt", nil, "auto-shutdown-exempt", "")
	add("exempt-odd", "skip/exempt", nil, "AutoShutdownExempt", "until-friday")
	add("exempt-conflict", "skip/exempt", nil, "auto-shutdown-exempt", "false", "Auto-Shutdown-Exempt", "true")
	// AutoShutdown: false-like and unrecognised values.
	add("optout-false", "skip/opted-out", nil, "AutoShutdown", "false")
	add("optout-maybe", "skip/opted-out", nil, "autoshutdown", "Maybe")
	add("optout-disabled", "skip/opted-out", nil, "auto-shutdown", "disabled")
	add("optout-empty", "skip/opted-out", nil, "AutoShutdown", "")
	add("optout-conflict", "skip/opted-out", nil, "AutoShutdown", "true", "auto_shutdown", "no")
	// Production in the spellings teams use, unknown values, conflicts.
	add("prod-production", "skip/production", nil, "Environment", "Production")
	add("prod-prd", "skip/production", nil, "env", "PRD")
	add("prod-live", "skip/production", nil, "Stage", "live")
	add("prod-eu", "skip/production", nil, "Tier", "production-eu")
	add("prod-underscore", "skip/production", nil, "Environment", "prod_us")
	add("prod-unknown", "skip/production", nil, "Environment", "blue")
	add("prod-conflict", "skip/production", nil, "Environment", "dev", "environment", "prod")
	// Owned by a controller.
	add("owned-asg", "skip/managed", nil, "aws:autoscaling:groupName", "gpu-asg")
	add("owned-eks", "skip/managed", nil, "eks:cluster-name", "ml", "eks:nodegroup-name", "gpu", "aws:autoscaling:groupName", "eks-gpu-1")
	add("owned-karpenter", "skip/managed", nil, "karpenter.sh/nodepool", "gpu")
	add("owned-karpenter-old", "skip/managed", nil, "karpenter.sh/provisioner-name", "default")
	add("owned-k8s", "skip/managed", nil, "kubernetes.io/cluster/ml", "owned")
	add("owned-spot-fleet", "skip/managed", nil, "aws:ec2spot:fleet-request-id", "sfr-1234")
	add("owned-ec2-fleet", "skip/managed", nil, "aws:ec2:fleet-id", "fleet-1234")
	add("owned-batch", "skip/managed", nil, "AWSBatchServiceTag", "ce-gpu")
	add("owned-emr", "skip/managed", nil, "aws:elasticmapreduce:job-flow-id", "j-1234")
	add("owned-pcluster", "skip/managed", nil, "parallelcluster:cluster-name", "hpc")
	add("owned-controller", "skip/managed", nil, "ManagedBy", "ray-autoscaler")
	// Only some GPUs report: missing data, not idle.
	add("partial-2-of-4", "skip/partial-gpus", func(in *fleet.Instance) { in.InstanceType = "g4dn.12xlarge"; in.Utilization = hourly(1, 1) })
	add("partial-3-of-4", "skip/partial-gpus", func(in *fleet.Instance) { in.InstanceType = "g5.12xlarge"; in.Utilization = hourly(0, 1, 2) })
	add("partial-1-of-8", "skip/partial-gpus", func(in *fleet.Instance) { in.InstanceType = "p3.16xlarge"; in.Utilization = hourly(0, 0) })
	// Signs of use besides the GPU's utilization.
	add("mem-held-60", "skip/gpu-memory-held", func(in *fleet.Instance) { in.Utilization = flat(1, 60, 3) })
	add("mem-held-35", "skip/gpu-memory-held", func(in *fleet.Instance) { in.Utilization = flat(1, 35, 3) })
	add("cpu-busy-80", "skip/cpu-busy", func(in *fleet.Instance) { in.Utilization = flat(1, 5, 80) })
	add("cpu-busy-50", "skip/cpu-busy", func(in *fleet.Instance) { in.Utilization = flat(1, 5, 50) })
	add("inference-tag", "skip/inference", nil, "WorkloadType", "Inference")
	add("serving-tag", "skip/inference", nil, "workload_type", "serving")
	add("busy", "skip/busy", func(in *fleet.Instance) { in.Utilization = flat(80, 50, 30) })
	return &fleet.Fleet{APIVersion: fleet.APIVersion, Kind: fleet.Kind, Instances: out}, want
}

// The real idle-stop --execute flow against the simulator stops exactly the
// truly idle, unprotected machines: zero wrong stops.
func TestIdleStopNeverStopsTheWrongMachine(t *testing.T) {
	f, want := protectFleet()
	e := startSim(t, f, nil)
	audit := filepath.Join(t.TempDir(), "audit.jsonl")
	opts, out, errOut := e.options(t, true, audit, nil)
	if err := idleStopRunForTest(opts); err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	r := decode(t, out.String())
	got := reasons(r)
	if len(r.Machines) != len(want) || r.Summary.Stopped != 7 {
		t.Fatalf("%d machines decided (want %d), summary %+v", len(r.Machines), len(want), r.Summary)
	}
	var wrong []string
	for id, w := range want {
		if got[id] != w {
			wrong = append(wrong, fmt.Sprintf("%s: got %s, want %s", id, got[id], w))
		}
	}
	sort.Strings(wrong)
	if len(wrong) > 0 {
		t.Errorf("%d decisions wrong:\n%s", len(wrong), strings.Join(wrong, "\n"))
	}
	var stopped, wrongStops []string
	for id, st := range e.states() {
		if st != "stopped" {
			continue
		}
		stopped = append(stopped, id)
		if !strings.HasPrefix(id, "idle-") {
			wrongStops = append(wrongStops, id)
		}
	}
	sort.Strings(stopped)
	if len(wrongStops) > 0 {
		t.Errorf("wrong stops: %v", wrongStops)
	}
	if len(stopped) != 7 {
		t.Errorf("stopped %v, want the 7 idle- machines", stopped)
	}
	byID := map[string]int{}
	for i, d := range r.Machines {
		byID[d.ResourceID] = i
	}
	if d := r.Machines[byID["owned-eks"]]; d.ManagedBy == nil || d.ManagedBy.Kind != fleet.OwnerEKSNodeGroup || !strings.Contains(d.Message, "node pool") {
		t.Errorf("owned-eks: %+v %q", d.ManagedBy, d.Message)
	}
	if d := r.Machines[byID["idle-instance-store"]]; len(d.Warnings) == 0 || !strings.Contains(d.Warnings[0], "250 GB") {
		t.Errorf("idle-instance-store warnings %v", d.Warnings)
	}
	if d := r.Machines[byID["idle-hibernation"]]; len(d.Warnings) != 1 || !strings.Contains(d.Warnings[0], "hibernation") {
		t.Errorf("idle-hibernation warnings %v", d.Warnings)
	}
	if d := r.Machines[byID["idle-plain"]]; len(d.Warnings) != 0 {
		t.Errorf("idle-plain (p3.2xlarge, EBS only) warnings %v", d.Warnings)
	}
	lines := auditLines(t, audit)
	warned := false
	for _, l := range lines {
		if l["resourceId"] == "idle-instance-store" && l["warnings"] != nil {
			warned = true
		}
	}
	if !warned {
		t.Error("the audit log has no instance-store warning")
	}
	validateAgainst(t, "../../docs/schema/idle-stop.schema.json", out.String())
}
