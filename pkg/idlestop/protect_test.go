package idlestop

import (
	"math"
	"math/rand"
	"strings"
	"testing"
	"time"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pkg/protect"
)

func withTags(kv ...string) func(*Candidate) {
	return func(c *Candidate) {
		c.Instance.Tags = map[string]string{"Team": "ml"}
		for i := 0; i+1 < len(kv); i += 2 {
			c.Instance.Tags[kv[i]] = kv[i+1]
		}
	}
}

// Every spelling of every protection class skips; every spelling of an
// allowed value stops.
func TestProtectionSpellings(t *testing.T) {
	p := DefaultPolicy()
	optIn := DefaultPolicy()
	optIn.RequireOptIn = true
	cases := []struct {
		name string
		kv   []string
		p    Policy
		want Reason
	}{
		// Exemption tag: any value other than a false-like one protects.
		{"exempt true", []string{"auto-shutdown-exempt", "true"}, p, ReasonExempt},
		{"exempt TRUE spaced", []string{" Auto-Shutdown-Exempt ", " TRUE "}, p, ReasonExempt},
		{"exempt underscore key", []string{"auto_shutdown_exempt", "yes"}, p, ReasonExempt},
		{"exempt camel key", []string{"AutoShutdownExempt", "1"}, p, ReasonExempt},
		{"exempt spaced key", []string{"auto shutdown exempt", "on"}, p, ReasonExempt},
		{"exempt empty value", []string{"auto-shutdown-exempt", ""}, p, ReasonExempt},
		{"exempt odd value", []string{"auto-shutdown-exempt", "please"}, p, ReasonExempt},
		{"exempt value exempt", []string{"auto-shutdown-exempt", "exempt"}, p, ReasonExempt},
		{"exempt date", []string{"auto-shutdown-exempt", "until-2027-01-01"}, p, ReasonExempt},
		{"exempt false", []string{"auto-shutdown-exempt", "false"}, p, ReasonIdle},
		{"exempt No", []string{"Auto-Shutdown-Exempt", " No "}, p, ReasonIdle},
		{"exempt 0", []string{"auto_shutdown_exempt", "0"}, p, ReasonIdle},
		{"exempt conflict", []string{"auto-shutdown-exempt", "false", "Auto-Shutdown-Exempt", "true"}, p, ReasonExempt},
		{"exempt conflict odd", []string{"auto-shutdown-exempt", "no", "AUTO_SHUTDOWN_EXEMPT", "maybe"}, p, ReasonExempt},
		// AutoShutdown: false-like and unrecognised values protect.
		{"autoshutdown false", []string{"AutoShutdown", "false"}, p, ReasonOptedOut},
		{"autoshutdown FALSE", []string{"autoshutdown", " FALSE"}, p, ReasonOptedOut},
		{"auto-shutdown no", []string{"auto-shutdown", "no"}, p, ReasonOptedOut},
		{"auto_shutdown off", []string{"Auto_Shutdown", "off"}, p, ReasonOptedOut},
		{"autoshutdown disabled", []string{"AutoShutdown", "disabled"}, p, ReasonOptedOut},
		{"autoshutdown never", []string{"AutoShutdown", "Never"}, p, ReasonOptedOut},
		{"autoshutdown maybe", []string{"AutoShutdown", "maybe"}, p, ReasonOptedOut},
		{"autoshutdown empty", []string{"AutoShutdown", ""}, p, ReasonOptedOut},
		{"autoshutdown 19:00", []string{"AutoShutdown", "19:00"}, p, ReasonOptedOut},
		{"autoshutdown true", []string{"AutoShutdown", "true"}, p, ReasonIdle},
		{"autoshutdown Yes", []string{"auto shutdown", " Yes"}, p, ReasonIdle},
		{"autoshutdown conflict", []string{"AutoShutdown", "true", "autoshutdown", "false"}, p, ReasonOptedOut},
		{"autoshutdown conflict odd", []string{"AutoShutdown", "true", "auto-shutdown", "later"}, optIn, ReasonOptedOut},
		{"opt-in true", []string{"auto_shutdown", "TRUE"}, optIn, ReasonIdle},
		{"opt-in enabled", []string{"AutoShutdown", "enabled"}, optIn, ReasonIdle},
		{"opt-in missing", nil, optIn, ReasonNotOptedIn},
		{"opt-in both true", []string{"AutoShutdown", "true", "autoshutdown", "yes"}, optIn, ReasonIdle},
		// Production: keys and values teams use.
		{"Environment Production", []string{"Environment", "Production"}, p, ReasonProduction},
		{"env prod", []string{"env", "prod"}, p, ReasonProduction},
		{"ENV PRD", []string{"ENV", "PRD"}, p, ReasonProduction},
		{"Stage live", []string{"Stage", "live"}, p, ReasonProduction},
		{"tier production-eu", []string{"tier", "production-eu"}, p, ReasonProduction},
		{"environment prod-us", []string{"environment", " prod-us-east "}, p, ReasonProduction},
		{"environment prod_eu", []string{"Environment", "prod_eu"}, p, ReasonProduction},
		{"environment eu-prod", []string{"Environment", "eu-prod"}, p, ReasonProduction},
		{"environment eu-prod-1", []string{"Environment", "eu-prod-1"}, p, ReasonProduction},
		{"environment unknown", []string{"Environment", "blue"}, p, ReasonProduction},
		{"environment empty", []string{"Environment", ""}, p, ReasonProduction},
		{"deployment_environment", []string{"deployment_environment", "production"}, p, ReasonProduction},
		{"environment dev", []string{"Environment", "dev"}, p, ReasonIdle},
		{"environment Staging", []string{"Environment", " Staging "}, p, ReasonIdle},
		{"env non-prod", []string{"env", "non-prod"}, p, ReasonIdle},
		{"env nonprod", []string{"Env", "NonProd"}, p, ReasonIdle},
		{"environment conflict", []string{"Environment", "dev", "environment", "production"}, p, ReasonProduction},
		{"environment vs stage", []string{"Environment", "dev", "Stage", "prod"}, p, ReasonProduction},
		{"include production", []string{"Environment", "Production"}, func() Policy { q := p; q.IncludeProduction = true; return q }(), ReasonIdle},
		{"include production unknown", []string{"Environment", "blue"}, func() Policy { q := p; q.IncludeProduction = true; return q }(), ReasonIdle},
		// The configured exemption tag, in its own spellings.
		{"custom exempt", []string{"keep_alive", "True"}, func() Policy { q := p; q.ExemptTag = "Keep-Alive"; return q }(), ReasonExempt},
		{"custom production value", []string{"Environment", "gold"}, func() Policy {
			q := p
			q.ProductionValues = []string{"gold"}
			q.NonProductionValues = []string{"silver"}
			return q
		}(), ReasonProduction},
		{"custom non-production value", []string{"Environment", "silver"}, func() Policy {
			q := p
			q.NonProductionValues = []string{"silver"}
			return q
		}(), ReasonIdle},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := Decide([]Candidate{cand("i-1", withTags(tc.kv...))}, now, tc.p)[0]
			if d.Reason != tc.want {
				t.Fatalf("tags %v: reason %q (%s), want %q", tc.kv, d.Reason, d.Message, tc.want)
			}
			if (d.Decision == Stop) != (tc.want == ReasonIdle) {
				t.Fatalf("decision %s", d.Decision)
			}
		})
	}
}

// Unrecognised values say that they protect.
func TestProtectionMessagesSayWhy(t *testing.T) {
	for _, kv := range [][]string{{"AutoShutdown", "maybe"}, {"Environment", "blue"}, {"auto-shutdown-exempt", "please"}} {
		d := Decide([]Candidate{cand("i-1", withTags(kv...))}, now, DefaultPolicy())[0]
		if d.Decision != Skip || !strings.Contains(d.Message, kv[1]) || !strings.Contains(d.Message, "protect") {
			t.Errorf("%v: %s %q", kv, d.Reason, d.Message)
		}
	}
}

func TestManagedMachinesAreNeverStopped(t *testing.T) {
	cases := []struct {
		kv   []string
		kind fleet.OwnerKind
	}{
		{[]string{"aws:autoscaling:groupName", "gpu-asg"}, fleet.OwnerAutoScalingGroup},
		{[]string{"AWS:AutoScaling:GroupName", "gpu-asg"}, fleet.OwnerAutoScalingGroup},
		{[]string{"eks:cluster-name", "ml", "eks:nodegroup-name", "gpu", "aws:autoscaling:groupName", "eks-gpu"}, fleet.OwnerEKSNodeGroup},
		{[]string{"kubernetes.io/cluster/ml", "owned"}, fleet.OwnerKubernetes},
		{[]string{"karpenter.sh/nodepool", "gpu"}, fleet.OwnerKarpenter},
		{[]string{"karpenter.sh/provisioner-name", "default"}, fleet.OwnerKarpenter},
		{[]string{"karpenter.k8s.aws/ec2nodeclass", "default"}, fleet.OwnerKarpenter},
		{[]string{"k8s.io/cluster-autoscaler/enabled", "true"}, fleet.OwnerClusterAutoscaler},
		{[]string{"aws:elasticmapreduce:job-flow-id", "j-1"}, fleet.OwnerEMR},
		{[]string{"AWSBatchServiceTag", "ce-1"}, fleet.OwnerBatch},
		{[]string{"aws:batch:compute-environment", "ce-1"}, fleet.OwnerBatch},
		{[]string{"parallelcluster:cluster-name", "hpc"}, fleet.OwnerParallelCluster},
		{[]string{"aws:ec2spot:fleet-request-id", "sfr-1"}, fleet.OwnerSpotFleet},
		{[]string{"aws:ec2:fleet-id", "fleet-1"}, fleet.OwnerEC2Fleet},
		{[]string{"aws:sagemaker:domain-arn", "arn"}, fleet.OwnerSageMaker},
		{[]string{"sagemaker:cluster-name", "hp"}, fleet.OwnerSageMaker},
		{[]string{"aks-managed-poolName", "gpu"}, fleet.OwnerAKSNodePool},
		{[]string{"kubernetes.azure.com/cluster", "c"}, fleet.OwnerAKSNodePool},
		{[]string{"goog-gke-node", ""}, fleet.OwnerGKENodePool},
		{[]string{"goog-k8s-cluster-name", "c"}, fleet.OwnerGKENodePool},
		{[]string{"created-by", "projects/1/zones/us-central1-a/instanceGroupManagers/gpu"}, fleet.OwnerMIG},
		{[]string{"Vendor", "Databricks"}, fleet.OwnerDatabricks},
		{[]string{"managed-by", "argo-workflows"}, fleet.OwnerController},
		{[]string{"ManagedBy", "ray-autoscaler"}, fleet.OwnerController},
	}
	for _, tc := range cases {
		// Opted in and idle: only the owner keeps it running.
		kv := append([]string{"AutoShutdown", "true"}, tc.kv...)
		d := Decide([]Candidate{cand("i-1", withTags(kv...))}, now, DefaultPolicy())[0]
		if d.Decision != Skip || d.Reason != ReasonManaged || d.ManagedBy == nil || d.ManagedBy.Kind != tc.kind {
			t.Errorf("%v: %s/%s %+v (%s), want managed by %s", tc.kv, d.Decision, d.Reason, d.ManagedBy, d.Message, tc.kind)
		}
	}
	// Not owners: Terraform, a plain created-by.
	for _, kv := range [][]string{{"managed-by", "terraform"}, {"ManagedBy", "Pulumi"}, {"created-by", "alice"}} {
		d := Decide([]Candidate{cand("i-1", withTags(kv...))}, now, DefaultPolicy())[0]
		if d.Decision != Stop {
			t.Errorf("%v: %s/%s (%s), want stop", kv, d.Decision, d.Reason, d.Message)
		}
	}
	// A managedBy set by the adapter or the file counts without tags; an
	// Azure scale-set id does too.
	d := Decide([]Candidate{cand("i-1", func(c *Candidate) {
		c.Instance.ManagedBy = &fleet.ManagedBy{Kind: fleet.OwnerAutoScalingGroup, Name: "g"}
	})}, now, DefaultPolicy())[0]
	if d.Reason != ReasonManaged || !strings.Contains(d.Message, "desired capacity") {
		t.Errorf("managedBy field: %s %q", d.Reason, d.Message)
	}
	d = Decide([]Candidate{cand("/subscriptions/s/resourceGroups/r/providers/Microsoft.Compute/virtualMachineScaleSets/gpu/virtualMachines/3")}, now, DefaultPolicy())[0]
	if d.Reason != ReasonManaged {
		t.Errorf("VMSS id: %s", d.Reason)
	}
}

// gpuSamples is 30 one-minute samples of n GPUs at v, each GPU's memory at
// mem and the host CPU at cpu (negative: absent).
func gpuSamples(n int, v, mem, cpu float64) []fleet.Sample {
	var out []fleet.Sample
	for i := range 30 {
		s := fleet.Sample{Time: now.Add(-time.Duration(30-i) * time.Minute)}
		for range n {
			s.GPU = append(s.GPU, v)
			if mem >= 0 {
				s.GPUMemory = append(s.GPUMemory, mem)
			}
		}
		if cpu >= 0 {
			c := cpu
			s.CPU = &c
		}
		out = append(out, s)
	}
	return out
}

func TestWholeMachineEvidence(t *testing.T) {
	p := DefaultPolicy()
	withGPUs := func(count float64, s []fleet.Sample) func(*Candidate) {
		return func(c *Candidate) {
			c.Instance.GPU = fleet.GPU{Model: "A10G", Count: count}
			c.Instance.Utilization.Samples = s
		}
	}
	cases := []struct {
		name string
		mod  func(*Candidate)
		p    Policy
		want Reason
	}{
		{"8 of 8 GPUs", withGPUs(8, gpuSamples(8, 1, 1, 2)), p, ReasonIdle},
		{"7 of 8 GPUs", withGPUs(8, gpuSamples(7, 1, 1, 2)), p, ReasonPartialGPUs},
		{"1 of 4 GPUs", withGPUs(4, gpuSamples(1, 0, -1, -1)), p, ReasonPartialGPUs},
		{"3 of 4 in most samples", withGPUs(4, func() []fleet.Sample {
			s := gpuSamples(4, 1, 1, 2)
			for i := 0; i < 10; i++ {
				s[i].GPU = s[i].GPU[:3]
			}
			return s
		}()), p, ReasonPartialGPUs},
		{"a NaN GPU is missing", withGPUs(2, func() []fleet.Sample {
			s := gpuSamples(2, 1, 1, 2)
			for i := range s {
				s[i].GPU[1] = math.NaN()
			}
			return s
		}()), p, ReasonPartialGPUs},
		{"partition counts as one", withGPUs(0.125, gpuSamples(1, 1, 1, 2)), p, ReasonIdle},
		{"1.5 rounds up to 2", withGPUs(1.5, gpuSamples(1, 1, 1, 2)), p, ReasonPartialGPUs},
		{"GPU memory held", withGPUs(1, gpuSamples(1, 0, 60, 2)), p, ReasonGPUMemoryHeld},
		{"GPU memory just above", withGPUs(1, gpuSamples(1, 0, 20.1, 2)), p, ReasonGPUMemoryHeld},
		{"GPU memory at threshold", withGPUs(1, gpuSamples(1, 0, 20, 2)), p, ReasonIdle},
		{"GPU memory of one GPU of two", withGPUs(2, func() []fleet.Sample {
			s := gpuSamples(2, 0, 1, 2)
			s[12].GPUMemory[1] = 70
			return s
		}()), p, ReasonGPUMemoryHeld},
		{"CPU busy", withGPUs(2, gpuSamples(2, 0, 1, 80)), p, ReasonCPUBusy},
		{"CPU busy configurable", withGPUs(2, gpuSamples(2, 0, 1, 30)), func() Policy { q := p; q.CPUPercent = 50; return q }(), ReasonIdle},
		{"inference workload", func(c *Candidate) { c.Instance.Workload = &fleet.Workload{Type: fleet.Inference} }, p, ReasonInference},
		{"serving tag", withTag("workload_type", "Serving"), p, ReasonInference},
		{"inference tag with a bad precision", func(c *Candidate) {
			c.Instance.Tags["WorkloadType"] = "inference"
			c.Instance.Tags["ModelPrecision"] = "fp7"
		}, p, ReasonInference},
		// Spellings of the tag that disagree: any one saying inference
		// protects, whatever order the map gives (run many times below).
		{"inference among disagreeing spellings", func(c *Candidate) {
			c.Instance.Tags["WorkloadType"] = "Training"
			c.Instance.Tags["workload_type"] = "inference"
			c.Instance.Tags["Workload-Type"] = "batch"
		}, p, ReasonInference},
		{"inference tag key with a tab", withTag("\tWorkloadType", "inference"), p, ReasonInference},
		{"inference next to an unknown spelling", func(c *Candidate) {
			c.Instance.Tags["workload type"] = "gaming"
			c.Instance.Tags["WORKLOADTYPE"] = " Serving "
		}, p, ReasonInference},
		{"inference not protected", func(c *Candidate) { c.Instance.Workload = &fleet.Workload{Type: fleet.Inference} }, func() Policy { q := p; q.ProtectInference = false; return q }(), ReasonIdle},
		{"launch time zero", func(c *Candidate) { c.Instance.LaunchTime = &time.Time{} }, p, ReasonLaunchUnknown},
		{"instance store protected", func(c *Candidate) { c.Instance.InstanceStoreGB = 250 }, func() Policy { q := p; q.ProtectInstanceStore = true; return q }(), ReasonInstanceStore},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for range 20 { // map order varies from run to run
				d := Decide([]Candidate{cand("i-1", tc.mod)}, now, tc.p)[0]
				if d.Reason != tc.want {
					t.Fatalf("reason %q (%s), want %q", d.Reason, d.Message, tc.want)
				}
			}
		})
	}
}

func TestInstanceStoreAndHibernationWarn(t *testing.T) {
	d := Decide([]Candidate{cand("i-1", func(c *Candidate) { c.Instance.InstanceStoreGB = 900; c.Instance.Hibernation = true })}, now, DefaultPolicy())[0]
	if d.Decision != Stop || len(d.Warnings) != 2 || !strings.Contains(d.Warnings[0], "900 GB") || !strings.Contains(d.Warnings[1], "hibernation") {
		t.Fatalf("%s %v", d.Decision, d.Warnings)
	}
	if d := Decide([]Candidate{cand("i-1")}, now, DefaultPolicy())[0]; len(d.Warnings) != 0 {
		t.Fatalf("warnings on a plain machine: %v", d.Warnings)
	}
}

func TestPolicyValidateRefusesUnsafeSettings(t *testing.T) {
	bad := map[string]func(*Policy){
		"gpu_percent":           func(p *Policy) { p.GPUPercent = math.NaN() },
		"gpu_percent inf":       func(p *Policy) { p.GPUPercent = math.Inf(1) },
		"gpu_percent 0":         func(p *Policy) { p.GPUPercent = 0 },
		"gpu_percent 101":       func(p *Policy) { p.GPUPercent = 101 },
		"gpu_memory_percent":    func(p *Policy) { p.GPUMemoryPercent = math.NaN() },
		"gpu_memory -inf":       func(p *Policy) { p.GPUMemoryPercent = math.Inf(-1) },
		"cpu_percent":           func(p *Policy) { p.CPUPercent = 1e300 },
		"window 1m":             func(p *Policy) { p.Window = time.Minute },
		"window 0":              func(p *Policy) { p.Window = 0 },
		"window 25h":            func(p *Policy) { p.Window = 25 * time.Hour },
		"min_uptime":            func(p *Policy) { p.MinUptime = -time.Second },
		"exempt_tag blank":      func(p *Policy) { p.ExemptTag = "  " },
		"exempt_value false":    func(p *Policy) { p.ExemptValue = "false" },
		"exempt_value No":       func(p *Policy) { p.ExemptValue = " No " },
		"exempt_value 0":        func(p *Policy) { p.ExemptValue = "0" },
		"exempt_value off":      func(p *Policy) { p.ExemptValue = "OFF" },
		"exempt_value disabled": func(p *Policy) { p.ExemptValue = "disabled" },
		"exempt_value blank":    func(p *Policy) { p.ExemptValue = "" },
		"max_stops 0":           func(p *Policy) { p.MaxStops = 0 },
		"stale_after":           func(p *Policy) { p.StaleAfter = 0 },
		"min_coverage NaN":      func(p *Policy) { p.MinCoverage = math.NaN() },
		"min_coverage 1.5":      func(p *Policy) { p.MinCoverage = 1.5 },
		"production_tags blank": func(p *Policy) { p.ProductionTags = []string{"Environment", " "} },
		"non_production *":      func(p *Policy) { p.NonProductionValues = []string{"*"} },
		"non_production prod":   func(p *Policy) { p.NonProductionValues = []string{"Prod"} },
		"non_production custom": func(p *Policy) { p.ProductionValues = []string{"gold"}; p.NonProductionValues = []string{" GOLD"} },
		"selector key":          func(p *Policy) { p.Selectors = map[string]string{" ": "x"} },
	}
	for name, mod := range bad {
		p := DefaultPolicy()
		mod(&p)
		err := p.Validate()
		if err == nil || !strings.HasPrefix(err.Error(), "idle_stop.") || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v", name, err)
		}
	}
	if err := DefaultPolicy().Validate(); err != nil {
		t.Fatal(err)
	}
	ok := DefaultPolicy()
	ok.Window, ok.ExemptValue = 24*time.Hour, "keep"
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
	// Unset thresholds and lists are the defaults, never "off".
	unset := DefaultPolicy()
	unset.GPUMemoryPercent, unset.CPUPercent, unset.ProductionTags, unset.ProductionValues, unset.NonProductionValues = 0, 0, nil, []string{}, nil
	if err := unset.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, kv := range [][]string{{"Environment", "prod"}, {"Stage", "blue"}} {
		if d := Decide([]Candidate{cand("i-1", withTags(kv...))}, now, unset)[0]; d.Reason != ReasonProduction {
			t.Errorf("unset lists, %v: %s", kv, d.Reason)
		}
	}
	if d := Decide([]Candidate{cand("i-1", func(c *Candidate) { c.Instance.Utilization.Samples = gpuSamples(1, 0, 50, 60) })}, now, unset)[0]; d.Reason != ReasonGPUMemoryHeld {
		t.Errorf("unset thresholds: %s", d.Reason)
	}
	// With no coverage required, missing GPUs still skip.
	loose := DefaultPolicy()
	loose.MinCoverage = 0
	if d := Decide([]Candidate{cand("i-1", func(c *Candidate) { c.Instance.GPU.Count = 4; c.Instance.Utilization.Samples = gpuSamples(3, 0, 1, 1) })}, now, loose)[0]; d.Reason != ReasonPartialGPUs {
		t.Errorf("min_coverage 0, 3 of 4 GPUs: %s", d.Reason)
	}
}

// protectiveTags lists tag sets any of which must keep a machine running
// under the default policy.
var protectiveKeys = []string{"auto-shutdown-exempt", "AutoShutdown", "Environment", "env", "Stage", "aws:autoscaling:groupName", "karpenter.sh/nodepool"}

// respell returns a random spelling of a tag key that folds to the same key.
func respell(r *rand.Rand, k string) string {
	var b strings.Builder
	if r.Intn(4) == 0 {
		b.WriteString(" ")
	}
	for _, c := range k {
		switch {
		case c == '-' && r.Intn(3) == 0:
			b.WriteString([]string{"_", " ", ""}[r.Intn(3)])
		case r.Intn(2) == 0:
			b.WriteString(strings.ToUpper(string(c)))
		default:
			b.WriteString(strings.ToLower(string(c)))
		}
	}
	if r.Intn(4) == 0 {
		b.WriteString(" ")
	}
	return b.String()
}

var anyValues = []string{"true", "false", "TRUE", " no ", "yes", "maybe", "", "prod", "production-eu", "dev", "staging", "0", "1", "disabled", "x", "Live", "non-prod"}

// Property: adding a tag can never turn a skip into a stop, and a machine
// with conflicting spellings of a protection tag is stopped only when each
// spelling alone would allow it.
func TestPropertyMoreTagsNeverStopMore(t *testing.T) {
	r := rand.New(rand.NewSource(10))
	p := DefaultPolicy()
	for i := 0; i < 3000; i++ {
		tags := map[string]string{}
		for n := r.Intn(4); n > 0; n-- {
			tags[respell(r, protectiveKeys[r.Intn(len(protectiveKeys))])] = anyValues[r.Intn(len(anyValues))]
		}
		base := decideTags(tags, p)
		more := map[string]string{}
		for k, v := range tags {
			more[k] = v
		}
		more[respell(r, protectiveKeys[r.Intn(len(protectiveKeys))])] = anyValues[r.Intn(len(anyValues))]
		after := decideTags(more, p)
		if base.Decision == Skip && after.Decision == Stop {
			t.Fatalf("tags %q skip (%s), with one more %q stop", tags, base.Reason, more)
		}
		if after.Decision == Stop {
			for k, v := range more {
				if one := decideTags(map[string]string{k: v}, p); one.Decision == Skip {
					t.Fatalf("tags %q stop, but %q alone skips (%s)", more, k+"="+v, one.Reason)
				}
			}
		}
	}
}

func decideTags(tags map[string]string, p Policy) Decision {
	c := cand("i-1", func(c *Candidate) {
		c.Instance.Tags = map[string]string{}
		for k, v := range tags {
			c.Instance.Tags[k] = v
		}
	})
	return decide(c, now, p, p.Protection())
}

// FuzzProtection: whatever the tags, a machine carrying a protective
// reading of any protection tag (in any spelling) is never stopped.
func FuzzProtection(f *testing.F) {
	f.Add("auto-shutdown-exempt", "true", "AutoShutdown", "true")
	f.Add("AutoShutdown", "maybe", "autoshutdown", "true")
	f.Add("Environment", "prod-eu", "env", "dev")
	f.Add("aws:autoscaling:groupName", "g", "AutoShutdown", "yes")
	f.Add("Auto_Shutdown_Exempt", "", "x", "y")
	f.Add("STAGE", " Live ", "Team", "ml")
	f.Fuzz(func(t *testing.T, k1, v1, k2, v2 string) {
		p := DefaultPolicy()
		tags := map[string]string{k1: v1, k2: v2}
		d := decideTags(tags, p)
		if d.Decision != Stop {
			return
		}
		for k, v := range tags {
			switch fleet.NormTagKey(k) {
			case fleet.NormTagKey(p.ExemptTag):
				if !IsFalseValue(v) {
					t.Fatalf("%q: stopped with exemption tag %q=%q", tags, k, v)
				}
			case fleet.NormTagKey(TagAutoShutdown):
				if !IsTrueValue(v) {
					t.Fatalf("%q: stopped with %q=%q", tags, k, v)
				}
			}
			for _, pk := range p.ProductionTags {
				if fleet.NormTagKey(k) == fleet.NormTagKey(pk) && !protect.MatchAny(v, p.NonProductionValues) {
					t.Fatalf("%q: stopped with environment %q=%q", tags, k, v)
				}
			}
		}
		if fleet.DetectOwner("i-1", tags) != nil {
			t.Fatalf("%q: stopped an owned machine", tags)
		}
	})
}

// The re-check's window includes the current, partial minute: its missing
// datapoint does not count against coverage, even at min_coverage 1.
func TestPartialMinuteIsNotMissingData(t *testing.T) {
	p := DefaultPolicy()
	p.MinCoverage = 1
	at := now.Add(40 * time.Second) // 14:30:40; the window ends at 14:31
	c := cand("i-1", func(c *Candidate) {
		end := now.Add(time.Minute)
		c.Instance.Utilization.Window = &fleet.TimeRange{Start: end.Add(-30 * time.Minute), End: end}
		c.Instance.Utilization.Samples = samples(29, 1, 1) // 14:01 … 14:29; none yet for 14:30
	})
	if d := Decide([]Candidate{c}, at, p)[0]; d.Decision != Stop {
		t.Fatalf("%s %s", d.Reason, d.Message)
	}
	// A gap inside the complete minutes still counts.
	c.Instance.Utilization.Samples = c.Instance.Utilization.Samples[1:]
	if d := Decide([]Candidate{c}, at, p)[0]; d.Reason != ReasonPartialMetrics {
		t.Fatalf("%s %s", d.Reason, d.Message)
	}
}
