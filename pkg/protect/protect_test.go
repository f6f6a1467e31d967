package protect

import (
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
		// switches: unrecognised or negative values protect
		{map[string]string{"auto-shutdown": "disabled"}, ReasonOptedOut},
		{map[string]string{"auto-stop": "maybe"}, ReasonOptedOut},
		{map[string]string{"AutoStop": "false"}, ReasonOptedOut},
		{map[string]string{"idle_shutdown": "never"}, ReasonOptedOut},
		{map[string]string{"auto-shutdown": "19:00"}, ReasonOptedOut},
		{map[string]string{"autostop": "keep-running"}, ReasonOptedOut},
		// (b) production under keys not configured
		{map[string]string{"deployment": "prod"}, ReasonProduction},
		{map[string]string{"lifecycle": "production"}, ReasonProduction},
		{map[string]string{"env-type": "PRD"}, ReasonProduction},
		{map[string]string{"environment_name": "live"}, ReasonProduction},
		{map[string]string{"DeployStage": "prod-eu-1"}, ReasonProduction},
		{map[string]string{"ring": "eu_prod"}, ReasonProduction},
		{map[string]string{"Environment": "odd"}, ReasonProduction},
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
