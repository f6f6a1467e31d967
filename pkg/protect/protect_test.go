package protect

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gpufinops/gpufinops/pkg/fleet"
)

func policy() Policy {
	return Policy{
		ExemptTag: "auto-shutdown-exempt", ExemptValue: "true",
		ProductionTags:      []string{"Environment", "Env", "Stage", "Tier", "DeploymentEnvironment", "AppEnv"},
		ProductionValues:    []string{"prod", "prd", "production", "live", "prod*", "*-prod", "*-prod-*"},
		NonProductionValues: []string{"dev", "test", "staging", "sandbox", "research", "qa", "non-prod"},
		ProtectInference:    true,
	}
}

func TestTokens(t *testing.T) {
	cases := map[string][]string{
		"DoNotStop":                 {"do", "not", "stop"},
		"do_not_stop":               {"do", "not", "stop"},
		"keep-running":              {"keep", "running"},
		"HTTPServer":                {"http", "server"},
		"aws:autoscaling:groupName": {"aws", "autoscaling", "group", "name"},
		"k8s.io/cluster-autoscaler": {"k8s", "io", "cluster", "autoscaler"},
		"don't stop":                {"dont", "stop"},
		"  Auto Shutdown.Exempt  ":  {"auto", "shutdown", "exempt"},
		"text-generation-inference": {"text", "generation", "inference"},
		"":                          nil,
		"--__//":                    nil,
	}
	for in, want := range cases {
		if got := Tokens(in); !slices.Equal(got, want) {
			t.Errorf("Tokens(%q) = %q, want %q", in, got, want)
		}
	}
}

// Each class in several spellings, across the three clouds' tag rules
// (AWS: most characters; Azure: no / < > % & \ ?; GCP: lower case
// [a-z0-9_-]), including spellings no table lists literally.
func TestClassesSpellings(t *testing.T) {
	cases := []struct {
		tags map[string]string
		want Reason
	}{
		// (a) exemption conventions
		{map[string]string{"DoNotStop": "true"}, ReasonExempt},
		{map[string]string{"do_not_stop": "yes"}, ReasonExempt},
		{map[string]string{"do-not-stop": ""}, ReasonExempt},
		{map[string]string{"donotstop": "1"}, ReasonExempt},
		{map[string]string{"keep-running": "yes"}, ReasonExempt},
		{map[string]string{"KeepRunning": "please"}, ReasonExempt},
		{map[string]string{"shutdown-exempt": "true"}, ReasonExempt},
		{map[string]string{"Shutdown.Exempt": "true"}, ReasonExempt},
		{map[string]string{"no_shutdown": "x"}, ReasonExempt},
		{map[string]string{"AlwaysOn": "True"}, ReasonExempt},
		{map[string]string{"idle-stop-exemption": "granted"}, ReasonExempt},
		{map[string]string{"schedule": "always-on"}, ReasonExempt},
		{map[string]string{"policy": "Do Not Stop"}, ReasonExempt},
		{map[string]string{"ops": "keep_running"}, ReasonExempt},
		{map[string]string{"autoshutdownexempt": "y"}, ReasonExempt},
		{map[string]string{"Protected": "yes"}, ReasonExempt},
		// the tool's own key
		{map[string]string{"gpufinops": "skip"}, ReasonExempt},
		{map[string]string{"GpuFinOps": "Ignore"}, ReasonExempt},
		{map[string]string{"gpufinops-ignore": "true"}, ReasonExempt},
		{map[string]string{"gpufinops_exclude": ""}, ReasonExempt},
		{map[string]string{"GPUFinOps:Skip": "yes"}, ReasonExempt},
		{map[string]string{"gpufinops.opt-out": "1"}, ReasonExempt},
		// switches: unrecognised or negative values protect
		{map[string]string{"auto-shutdown": "disabled"}, ReasonOptedOut},
		{map[string]string{"auto-stop": "maybe"}, ReasonOptedOut},
		{map[string]string{"AutoStop": "false"}, ReasonOptedOut},
		{map[string]string{"idle_shutdown": "never"}, ReasonOptedOut},
		{map[string]string{"auto-shutdown": "19:00"}, ReasonOptedOut},
		{map[string]string{"AutoStop": "Excluded"}, ReasonOptedOut},
		{map[string]string{"idle-stop": "ignore"}, ReasonOptedOut},
		{map[string]string{"autostop": "keep-running"}, ReasonOptedOut},
		// (b) production under keys not configured
		{map[string]string{"deployment": "prod"}, ReasonProduction},
		{map[string]string{"lifecycle": "production"}, ReasonProduction},
		{map[string]string{"env-type": "PRD"}, ReasonProduction},
		{map[string]string{"environment_name": "live"}, ReasonProduction},
		{map[string]string{"DeployStage": "prod-eu-1"}, ReasonProduction},
		{map[string]string{"ring": "eu_prod"}, ReasonProduction},
		{map[string]string{"Environment": "odd"}, ReasonProduction},
		// a whole production value under any key, and critical machines
		{map[string]string{"workspace": "prod"}, ReasonProduction},
		{map[string]string{"realm": "Production"}, ReasonProduction},
		{map[string]string{"account_kind": "PRD"}, ReasonProduction},
		{map[string]string{"Criticality": "Mission-Critical"}, ReasonProduction},
		{map[string]string{"criticality": "High"}, ReasonProduction},
		{map[string]string{"business_criticality": "tier-1"}, ReasonProduction},
		{map[string]string{"importance": "business_critical"}, ReasonProduction},
	}
	p := policy()
	for _, c := range cases {
		f := Tags(c.tags, p)
		if f == nil || f.Reason != c.want {
			t.Errorf("%v: got %+v, want %s", c.tags, f, c.want)
			continue
		}
		if f.Message == "" || f.Tag == "" && c.want != ReasonNotOptedIn {
			t.Errorf("%v: finding without message or tag: %+v", c.tags, f)
		}
	}
	allowed := []map[string]string{
		{"DoNotStop": "false"},
		{"keep-running": "no"},
		{"auto-shutdown": "true"},
		{"AutoStop": "enabled"},
		{"deployment": "staging"},
		{"lifecycle": "pre-prod"},
		{"env": "non-prod"},
		{"deploy-tier": "gpu"},
		{"schedule": "not-exempt"},
		{"Team": "ml", "CostCenter": "123"},
		{"gpufinops-ignore": "false"},
		{"gpufinops": "enabled"},
		{"gpufinops-owner": "alice"},
		{"team": "prod-infra"},
		{"criticality": "low"},
		{"impact": "non-critical"},
	}
	for _, tags := range allowed {
		if f := Tags(tags, p); f != nil {
			t.Errorf("%v: protected (%s: %s), want none", tags, f.Reason, f.Message)
		}
	}
}

func TestInferenceSpellings(t *testing.T) {
	p := policy()
	yes := []map[string]string{
		{"role": "serving"},
		{"Service": "llm-inference"},
		{"app": "chat-api"},
		{"component": "Predictor"},
		{"stack": "vllm"},
		{"image": "nvcr.io/nvidia/tritonserver"},
		{"framework": "text-generation-inference"},
		{"runtime": "TensorRT-LLM"},
		{"ray-serve": "v2"},
		{"engine": "sglang"},
		{"x": "ollama"},
		{"kserve.io-isvc": "llama"},
		{"serving-runtime": "torchserve"},
		{"role": "model-server"},
		{"app": "ModelMesh"},
		{"svc": "llm_server"},
		{"WorkloadType": "inference"},
	}
	for _, tags := range yes {
		in := &fleet.Instance{Tags: tags}
		if f := Inference(in, p); f == nil {
			t.Errorf("%v: not inference", tags)
		}
	}
	no := []map[string]string{{"role": "trainer"}, {"app": "jupyter"}, {"team": "tgi-research-x"}, {"service": "training"}}
	no[2] = map[string]string{"team": "nimbus"}
	for _, tags := range no {
		if f := Inference(&fleet.Instance{Tags: tags}, p); f != nil {
			t.Errorf("%v: inference (%s)", tags, f.Message)
		}
	}
	if f := Inference(&fleet.Instance{Workload: &fleet.Workload{Type: fleet.Inference}}, p); f == nil {
		t.Error("workload block inference: not inference")
	}
}

// TestControllers: the owner signals of no one cloud (Ray, Slurm, PBS); each
// cloud's own are its adapter's registered rules (providers/all's
// TestProtectOwnersPerCloud).
func TestControllers(t *testing.T) {
	p := policy()
	cases := []struct {
		id   string
		tags map[string]string
		kind fleet.OwnerKind
	}{
		{"g-5", map[string]string{"ray-cluster-name": "rc"}, fleet.OwnerRay},
		{"p-1", map[string]string{"PBS_Server": "head"}, fleet.OwnerPBS},
		{"p-2", map[string]string{"slurm_partition": "gpu"}, fleet.OwnerSlurm},
		{"p-3", map[string]string{"Ray-Node-Type": "worker"}, fleet.OwnerRay},
	}
	for _, c := range cases {
		in := &fleet.Instance{ID: c.id, Tags: c.tags}
		f := Static(in, p)
		if f == nil || f.Reason != ReasonManaged || f.Owner.Kind != c.kind {
			t.Errorf("%s %v: got %+v, want managed by %s", c.id, c.tags, f, c.kind)
		}
	}
}

func TestPeers(t *testing.T) {
	p := policy()
	mk := func(id string, tags map[string]string) *fleet.Instance {
		return &fleet.Instance{ID: id, Provider: fleet.GCP, Tags: tags}
	}
	insts := []*fleet.Instance{
		mk("a", map[string]string{"job": "llm-pretrain"}),
		mk("b", map[string]string{"Job": "llm-pretrain"}),
		mk("c", map[string]string{"ray-cluster": "rc1"}),
		mk("d", map[string]string{"ray_cluster": "rc1"}),
		mk("e", map[string]string{"placement-group": "pg"}),
		mk("f", map[string]string{"tpu-slice": "s1"}),
		mk("g", map[string]string{"tpu_slice": "s1"}),
		{ID: "h", Provider: fleet.GCP, Workload: &fleet.Workload{Type: fleet.Training, TrainingRun: "r1"}},
		{ID: "i", Provider: fleet.GCP, Workload: &fleet.Workload{Type: fleet.Training, TrainingRun: "r1"}},
	}
	inUse := []bool{false, true, false, false, false, false, true, false, true}
	g := NewPeers(insts, func(i int) bool { return inUse[i] }, p)
	for i, want := range []bool{true, false, false, false, false, true, false, true, false} {
		if got := g.Check(i) != nil; got != want {
			t.Errorf("%s: protected %v, want %v", insts[i].ID, got, want)
		}
	}
}

func TestInUse(t *testing.T) {
	p := policy()
	cpu := 60.0
	u := &fleet.Utilization{Samples: []fleet.Sample{
		{Time: time.Unix(0, 0), GPU: fleet.PerGPU{1, 2}, GPUMemory: fleet.PerGPU{1, 1}},
		{Time: time.Unix(60, 0), GPU: fleet.PerGPU{1, 2}, CPU: &cpu},
	}}
	if f := InUse(Measure(u, 4), "the window", p); f == nil || f.Reason != ReasonPartialGPUs {
		t.Errorf("2 of 4 GPUs: %+v", f)
	}
	if f := InUse(Measure(u, 2), "the window", p); f == nil || f.Reason != ReasonCPUBusy {
		t.Errorf("cpu 60: %+v", f)
	}
	u.Samples[0].GPUMemory = fleet.PerGPU{80, 1}
	if f := InUse(Measure(u, 2), "the window", p); f == nil || f.Reason != ReasonGPUMemoryHeld {
		t.Errorf("memory 80: %+v", f)
	}
}

// A spot machine is stopped only when the cloud would stop it itself
// (Azure eviction policy Deallocate, GCP termination action STOP); delete,
// terminate and an unknown or missing behaviour protect, and say which.
func TestSpotProtectsUnlessTheCloudWouldStopIt(t *testing.T) {
	for _, tc := range []struct {
		life    fleet.Lifecycle
		si      fleet.SpotInterruption
		protect bool
		says    string
	}{
		{fleet.Spot, fleet.SpotDeallocate, false, ""},
		{fleet.Spot, fleet.SpotStop, false, ""},
		{fleet.Spot, fleet.SpotDelete, true, "delete"},
		{fleet.Spot, fleet.SpotTerminate, true, "terminate"},
		{fleet.Spot, "", true, "unknown"},
		{fleet.Spot, "hibernate", true, "hibernate"},
		{fleet.OnDemand, fleet.SpotDelete, false, ""},
		{fleet.Committed, "", false, ""},
	} {
		f := Spot(&fleet.Instance{Lifecycle: tc.life, SpotInterruption: tc.si})
		if (f != nil) != tc.protect {
			t.Errorf("%s/%q: %+v, want protected %v", tc.life, tc.si, f, tc.protect)
			continue
		}
		if f != nil && (f.Reason != ReasonSpot || !strings.Contains(f.Message, tc.says)) {
			t.Errorf("%s/%q: %+v, want %s saying %q", tc.life, tc.si, f, ReasonSpot, tc.says)
		}
	}
}

// TestPlacementGroups: the clouds' placement constructs (an AWS placement
// group name, an Azure proximity placement group ID in any case, GCP
// resource policy URLs, several per machine) group hosts within one
// provider, account and region only; blank names group nothing.
func TestPlacementGroups(t *testing.T) {
	p := policy()
	ppg := "/subscriptions/s1/resourceGroups/rg/providers/Microsoft.Compute/proximityPlacementGroups/ppg-train"
	pol := "projects/p1/regions/us-central1/resourcePolicies/compact-a3"
	mk := func(id string, prov fleet.Provider, account, region string, pgs ...string) *fleet.Instance {
		return &fleet.Instance{ID: id, Provider: prov, Account: account, Region: region, PlacementGroups: pgs}
	}
	cases := []struct {
		name      string
		idle      *fleet.Instance
		busy      *fleet.Instance
		protected bool
	}{
		{"aws same group", mk("i-1", fleet.AWS, "111", "us-east-1", "hpc-cluster"), mk("i-2", fleet.AWS, "111", "us-east-1", "hpc-cluster"), true},
		{"aws other account", mk("i-1", fleet.AWS, "111", "us-east-1", "hpc-cluster"), mk("i-2", fleet.AWS, "222", "us-east-1", "hpc-cluster"), false},
		{"aws other region", mk("i-1", fleet.AWS, "111", "us-east-1", "hpc-cluster"), mk("i-2", fleet.AWS, "111", "us-west-2", "hpc-cluster"), false},
		{"aws other group", mk("i-1", fleet.AWS, "111", "us-east-1", "hpc-a"), mk("i-2", fleet.AWS, "111", "us-east-1", "hpc-b"), false},
		{"other cloud", mk("i-1", fleet.AWS, "p1", "r", "g"), mk("i-2", fleet.GCP, "p1", "r", "g"), false},
		{"azure id in another case", mk("vm-1", fleet.Azure, "s1", "eastus", ppg), mk("vm-2", fleet.Azure, "S1", "EastUS", strings.ToLower(ppg)), true},
		{"gcp one of several policies", mk("a", fleet.GCP, "p1", "us-central1", "projects/p1/regions/us-central1/resourcePolicies/nightly", pol), mk("b", fleet.GCP, "p1", "us-central1", pol), true},
		{"padded name", mk("a", fleet.GCP, "p1", "us-central1", " "+pol+" "), mk("b", fleet.GCP, "p1", "us-central1", pol), true},
		{"blank names", mk("a", fleet.GCP, "p1", "us-central1", "", " "), mk("b", fleet.GCP, "p1", "us-central1", "", " "), false},
		{"no group", mk("a", fleet.AWS, "111", "us-east-1"), mk("b", fleet.AWS, "111", "us-east-1"), false},
	}
	for _, c := range cases {
		g := NewPeers([]*fleet.Instance{c.idle, c.busy}, func(i int) bool { return i == 1 }, p)
		f := g.Check(0)
		if (f != nil) != c.protected {
			t.Errorf("%s: protected %+v, want %v", c.name, f, c.protected)
			continue
		}
		if f != nil && (f.Reason != ReasonMultiHost || !strings.HasPrefix(f.Tag, "placement=")) {
			t.Errorf("%s: %+v, want a multi-host finding naming the placement group", c.name, f)
		}
		if g.Check(1) != nil {
			t.Errorf("%s: the busy host is protected by its idle peer", c.name)
		}
	}
}

// TestPlacementGroupsProperty: over random fleets, an idle machine is kept
// by its placement group exactly when another machine of the same provider,
// account and region shares one of its (trimmed, case-folded) placement
// names and works.
func TestPlacementGroupsProperty(t *testing.T) {
	p := policy()
	names := []string{"pg-a", "PG-A", "pg-b", " pg-b", "", "projects/p/regions/r/resourcePolicies/x"}
	provs := []fleet.Provider{fleet.AWS, fleet.Azure, fleet.GCP}
	norm := func(s string) string { return strings.ToLower(strings.TrimSpace(s)) }
	for seed := range 300 {
		rng := rand.New(rand.NewPCG(uint64(seed), 34))
		n := 2 + rng.IntN(8)
		insts := make([]*fleet.Instance, n)
		busy := make([]bool, n)
		for i := range insts {
			in := &fleet.Instance{ID: string(rune('a' + i)), Provider: provs[rng.IntN(2)], Account: []string{"1", "2"}[rng.IntN(2)], Region: "r"}
			for range rng.IntN(3) {
				in.PlacementGroups = append(in.PlacementGroups, names[rng.IntN(len(names))])
			}
			insts[i], busy[i] = in, rng.IntN(3) == 0
		}
		g := NewPeers(insts, func(i int) bool { return busy[i] }, p)
		for i, a := range insts {
			want := false
			for j, b := range insts {
				if i == j || !busy[j] || a.Provider != b.Provider || a.Account != b.Account {
					continue
				}
				for _, x := range a.PlacementGroups {
					for _, y := range b.PlacementGroups {
						want = want || norm(x) != "" && norm(x) == norm(y)
					}
				}
			}
			if got := g.Check(i) != nil; got != want {
				t.Fatalf("seed %d: %s %+v protected %v, want %v (fleet %+v)", seed, a.ID, a.PlacementGroups, got, want, insts)
			}
		}
	}
}

// Keys no table lists that name a distributed job by their words group
// their machines; keys that describe a job's kind, queue or state do not.
func TestJobKeys(t *testing.T) {
	p := policy()
	grouped := []map[string]string{
		{"torchrun-job": "llama-ft"},
		{"mpi_job_name": "bert-8n"},
		{"DeepSpeedJobId": "ds-42"},
		{"jobset.sigs.k8s.io/jobset-name": "pretrain"},
		{"tpu-multislice": "ms-1"},
		{"horovod": "resnet-run-3"},
		{"kubeflow.org/pytorchjob": "pj-7"},
	}
	for _, tags := range grouped {
		if g := GroupsOf(&fleet.Instance{Tags: tags}, p); len(g) != 1 {
			t.Errorf("%v: groups %v, want one", tags, g)
		}
	}
	loose := []map[string]string{
		{"job-type": "training"},
		{"job_queue": "gpu-long"},
		{"JobPriority": "high"},
		{"deepspeed": "enabled"},
		{"mpi": "true"},
		{"job-owner": "alice"},
	}
	for _, tags := range loose {
		if g := GroupsOf(&fleet.Instance{Tags: tags}, p); len(g) != 0 {
			t.Errorf("%v: groups %v, want none", tags, g)
		}
	}
	// Two idle-capable hosts of one job: the idle one is kept while the other works.
	insts := []*fleet.Instance{
		{ID: "a", Provider: fleet.GCP, Tags: map[string]string{"torchrun-job": "llama-ft"}},
		{ID: "b", Provider: fleet.GCP, Tags: map[string]string{"torchrun_job": "llama-ft"}},
	}
	peers := NewPeers(insts, func(i int) bool { return i == 1 }, p)
	if f := peers.Check(0); f == nil || f.Reason != ReasonMultiHost {
		t.Errorf("idle host of a working torchrun job: %+v, want multi-host", f)
	}
}
