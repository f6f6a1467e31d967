package fleet

import (
	"math"
	"math/rand"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestWorkloadFromTags(t *testing.T) {
	yes := true
	for _, tc := range []struct {
		name string
		tags map[string]string
		want *Workload
	}{
		{"none", map[string]string{"Team": "ml"}, nil},
		{"training with everything", map[string]string{"WorkloadType": "Training", "ModelName": "llama-3.1-8b", "ModelPrecision": "BF16", "Checkpoints": "true", "TrainingRun": "run-1"},
			&Workload{Type: Training, Model: "llama-3.1-8b", Precision: "bf16", Checkpoints: &yes, TrainingRun: "run-1"}},
		{"GCP labels", map[string]string{"workload_type": "fine-tuning", "model_name": "mistral-7b"}, &Workload{Type: FineTuning, Model: "mistral-7b"}},
		{"synonyms", map[string]string{"workloadtype": "HPO"}, &Workload{Type: HPO}},
		{"unknown type", map[string]string{"WorkloadType": "Gaming"}, nil},
		{"bad precision", map[string]string{"WorkloadType": "Inference", "ModelPrecision": "fp64"}, nil},
		{"bad checkpoints", map[string]string{"WorkloadType": "Training", "Checkpoints": "sometimes"}, nil},
		{"params", map[string]string{"WorkloadType": "Inference", "ModelParams": " 7.2b "}, &Workload{Type: Inference, ParamsBillions: 7.2}},
		{"params in millions", map[string]string{"WorkloadType": "Inference", "model_params": "350M"}, &Workload{Type: Inference, ParamsBillions: 0.35}},
		{"params NaN", map[string]string{"WorkloadType": "Inference", "ModelParams": "NaN"}, nil},
		{"params infinite", map[string]string{"WorkloadType": "Inference", "ModelParams": "+InfB"}, nil},
		{"params absurd", map[string]string{"WorkloadType": "Inference", "ModelParams": "1e300B"}, nil},
		{"params above the limit", map[string]string{"WorkloadType": "Inference", "ModelParams": "100001B"}, nil},
		{"params zero", map[string]string{"WorkloadType": "Inference", "ModelParams": "0.0B"}, nil},
		{"params hex", map[string]string{"WorkloadType": "Inference", "ModelParams": "0x1p3"}, nil},
		{"params underscores", map[string]string{"WorkloadType": "Inference", "ModelParams": "1_000B"}, nil},
		{"params signed", map[string]string{"WorkloadType": "Inference", "ModelParams": "+8B"}, nil},
		{"types agree", map[string]string{"WorkloadType": "Training", "workload_type": "train"}, &Workload{Type: Training}},
		{"types disagree", map[string]string{"WorkloadType": "Training", "workload_type": "Inference"}, nil},
		{"type and an unknown spelling", map[string]string{"WorkloadType": "Training", "workload_type": "gaming"}, nil},
		{"models disagree", map[string]string{"WorkloadType": "Inference", "ModelName": "a", "model_name": "b"}, nil},
		{"models agree", map[string]string{"WorkloadType": "Inference", "ModelName": "a", "model_name": " a"}, &Workload{Type: Inference, Model: "a"}},
		{"empty values count as absent", map[string]string{"WorkloadType": "Training", "ModelParams": " ", "ModelPrecision": "", "Checkpoints": ""}, &Workload{Type: Training}},
		{"keys with white space around", map[string]string{"\tWorkloadType\n": "Inference", " ModelName\t": "m"}, &Workload{Type: Inference, Model: "m"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for range 20 { // map order varies from run to run
				if got := WorkloadFromTags(tc.tags); !reflect.DeepEqual(got, tc.want) {
					t.Fatalf("got %+v, want %+v", got, tc.want)
				}
			}
		})
	}
}

func TestParseReadsWorkloadFromTags(t *testing.T) {
	f, err := Parse("f.yaml", []byte(`apiVersion: gpufinops/v1
kind: Fleet
instances:
  - {id: a, provider: aws, region: us-east-1, instanceType: g5.xlarge, tags: {WorkloadType: Inference, ModelName: mistral-7b}}
  - {id: b, provider: aws, region: us-east-1, instanceType: g5.xlarge, tags: {WorkloadType: Inference}, workload: {type: batch}}
`))
	if err != nil {
		t.Fatal(err)
	}
	if w := f.Instances[0].Workload; w == nil || w.Type != Inference || w.Model != "mistral-7b" {
		t.Errorf("from tags: %+v", w)
	}
	if w := f.Instances[1].Workload; w.Type != Batch {
		t.Errorf("a workload block wins over tags: %+v", w)
	}
}

func TestWorkloadTagsRoundTrip(t *testing.T) {
	no := false
	w := &Workload{Type: FineTuning, Model: "llama-3.1-8b", ParamsBillions: 8, Precision: "bf16", Checkpoints: &no, TrainingRun: "r"}
	tags := WorkloadTags(w, nil)
	if got := WorkloadFromTags(tags); !reflect.DeepEqual(got, w) {
		t.Errorf("round trip: %+v from %v", got, tags)
	}
	if got := WorkloadTags(w, map[string]string{"workload_type": "Training"}); got["WorkloadType"] != "" {
		t.Errorf("an existing tag must win: %v", got)
	}
	if got := WorkloadTags(w, map[string]string{"workload_type": "Training", "WorkloadType": "Batch"}); got["WorkloadType"] != "" {
		t.Errorf("existing spellings that disagree still exist: %v", got)
	}
	if n, ok := parseBillions("350M"); !ok || n != 0.35 {
		t.Errorf("350M = %v %v", n, ok)
	}
}

func TestDetectOwnerSpellingsAndNonOwners(t *testing.T) {
	for _, tc := range []struct {
		tags map[string]string
		kind OwnerKind
		name string
	}{
		{map[string]string{"aws:autoscaling:groupName": "gpu-asg"}, OwnerAutoScalingGroup, "gpu-asg"},
		{map[string]string{" aws:AutoScaling:groupname ": "gpu-asg"}, OwnerAutoScalingGroup, "gpu-asg"},
		{map[string]string{"aws:autoscaling:groupName": "eks-x", "eks:nodegroup-name": "gpu"}, OwnerEKSNodeGroup, "gpu"},
		{map[string]string{"kubernetes.io/cluster/ml-prod": "owned"}, OwnerKubernetes, "ml-prod"},
		{map[string]string{"k8s.io/cluster-autoscaler/ml": "owned"}, OwnerClusterAutoscaler, "ml"},
		{map[string]string{"Karpenter.sh/NodePool": "gpu"}, OwnerKarpenter, "gpu"},
		{map[string]string{"aks-managed-poolName": "gpu"}, OwnerAKSNodePool, "gpu"},
		{map[string]string{"goog-gke-node": ""}, OwnerGKENodePool, "goog-gke-node"},
		{map[string]string{"created-by": "projects/p/zones/z/instanceGroupManagers/m"}, OwnerMIG, "projects/p/zones/z/instanceGroupManagers/m"},
		{map[string]string{"app.kubernetes.io/managed-by": "kuberay"}, OwnerController, "kuberay"},
	} {
		got := DetectOwner("i-1", tc.tags)
		if got == nil || got.Kind != tc.kind || got.Name != tc.name {
			t.Errorf("%v: got %+v, want %s %q", tc.tags, got, tc.kind, tc.name)
		}
	}
	for _, tags := range []map[string]string{nil, {"Team": "ml"}, {"managed-by": "Terraform"}, {"created-by": "bob"}, {"Name": "autoscaling"}} {
		if got := DetectOwner("i-1", tags); got != nil {
			t.Errorf("%v: got %+v, want none", tags, got)
		}
	}
}

func TestApplyDefaultsFillsManagedBy(t *testing.T) {
	f, err := Parse("f.yaml", []byte("apiVersion: gpufinops/v1\nkind: Fleet\ninstances:\n  - {id: i-1, provider: aws, region: us-east-1, instanceType: g5.xlarge, tags: {aws:autoscaling:groupName: g}}\n  - {id: i-2, provider: aws, region: us-east-1, instanceType: g5.xlarge, managedBy: {kind: batch, name: ce}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if m := f.Instances[0].ManagedBy; m == nil || m.Kind != OwnerAutoScalingGroup || m.Name != "g" {
		t.Errorf("from tags: %+v", m)
	}
	if m := f.Instances[1].ManagedBy; m == nil || m.Kind != OwnerBatch {
		t.Errorf("from the file: %+v", m)
	}
	if _, err := Parse("f.yaml", []byte("apiVersion: gpufinops/v1\nkind: Fleet\ninstances:\n  - {id: i-1, provider: aws, region: us-east-1, instanceType: g5.xlarge, managedBy: {name: x}}\n")); err == nil || !strings.Contains(err.Error(), "managedBy.kind") {
		t.Errorf("a managedBy without kind: %v", err)
	}
}

// Property: every owner rule matches its key in any spelling that folds to
// it (case, '-', '_', spaces, surrounding blanks), with any value it allows.
func TestOwnerRulesMatchEverySpelling(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	respell := func(k string) string {
		var b strings.Builder
		b.WriteString([]string{"", " ", "  "}[r.Intn(3)])
		for _, c := range k {
			switch {
			case (c == '-' || c == '_') && r.Intn(2) == 0:
				b.WriteString([]string{"_", "-", " ", ""}[r.Intn(4)])
			case r.Intn(2) == 0:
				b.WriteString(strings.ToUpper(string(c)))
			default:
				b.WriteString(strings.ToLower(string(c)))
			}
		}
		return b.String()
	}
	for _, rule := range AllOwnerRules() {
		if rule.IDContains != "" {
			continue
		}
		for range 50 {
			key := respell(rule.Key)
			if rule.Prefix {
				key += "x" + strconv.Itoa(r.Intn(100))
			}
			value := "owner-" + strconv.Itoa(r.Intn(100))
			if rule.ValueContains != "" {
				value = "a/" + strings.ToUpper(rule.ValueContains) + "/b"
			}
			got := DetectOwner("i-1", map[string]string{key: value, "Team": "ml"})
			if got == nil || got.Kind != rule.Kind {
				t.Fatalf("rule %s: tag %q=%q gives %+v", rule.Key, key, value, got)
			}
		}
	}
}

// An id rule matches its marker anywhere in the id, in any case, whatever
// the tags say, and names the owner by the id; ids without it are not owned.
func TestOwnerIDRules(t *testing.T) {
	RegisterOwnerRules(OwnerRule{Provider: "acme", IDContains: "/nodeGroups/", Kind: OwnerController})
	r := rand.New(rand.NewSource(2))
	for _, rule := range AllOwnerRules() {
		if rule.IDContains == "" {
			continue
		}
		for range 20 {
			var b strings.Builder
			for _, c := range rule.IDContains {
				if r.Intn(2) == 0 {
					b.WriteString(strings.ToUpper(string(c)))
				} else {
					b.WriteString(strings.ToLower(string(c)))
				}
			}
			id := "/subscriptions/s" + strconv.Itoa(r.Intn(9)) + b.String() + "pool/" + strconv.Itoa(r.Intn(9))
			got := DetectOwner(id, map[string]string{"Team": "ml"})
			if got == nil || got.Kind != rule.Kind || got.Name != id {
				t.Fatalf("id rule %s: id %q gives %+v", rule.IDContains, id, got)
			}
		}
	}
	for _, id := range []string{"i-0abc", "/subscriptions/s/resourceGroups/rg/providers/Microsoft.Compute/virtualMachines/vm1", "projects/p/zones/z/instances/vm"} {
		if got := DetectOwner(id, nil); got != nil {
			t.Errorf("%s: owned by %+v", id, got)
		}
	}
}

// FuzzDetectOwner: any tag never panics the detector, and a key that folds
// to an unconditional owner rule's key is always detected, whatever the
// other tag says.
func FuzzDetectOwner(f *testing.F) {
	f.Add("aws:autoscaling:groupName", "g", "Team", "ml")
	f.Add("KARPENTER.SH/NODEPOOL", "", "managed-by", "terraform")
	f.Add("kubernetes.io/cluster/", "owned", "created-by", "x")
	f.Add("x", "y", "Vendor", "Databricks")
	f.Fuzz(func(t *testing.T, k1, v1, k2, v2 string) {
		tags := map[string]string{k1: v1, k2: v2}
		got := DetectOwner("i-1", tags)
		for _, r := range AllOwnerRules() {
			if r.Prefix || r.ValueContains != "" || r.ValueNotIn != nil || r.IDContains != "" {
				continue
			}
			for k := range tags {
				if NormTagKey(k) == NormTagKey(r.Key) && got == nil {
					t.Fatalf("%q: key %q is rule %s, not detected", tags, k, r.Key)
				}
			}
		}
	})
}

// normTagReference is the plain definition normTag must match.
func normTagReference(s string) string {
	return strings.ToLower(strings.NewReplacer("-", "", "_", "", " ", "").Replace(s))
}

func TestNormTagMatchesReference(t *testing.T) {
	for _, s := range []string{
		"", "workloadtype", "WorkloadType", "workload-type", "Workload_Type", "workload type",
		" -_ ", "KARPENTER.SH/NODEPOOL", "aks-managed-poolName", "ÄRGER-Key", "straße_X",
		"\xff-\xfe_A", "İstanbul", "ǅ-x", "a\tb", "ALLCAPS", "mixed-Ünïcode_KEY ",
	} {
		if got, want := normTag(s), normTagReference(s); got != want {
			t.Errorf("normTag(%q) = %q, want %q", s, got, want)
		}
	}
}

func TestNormTagAllocatesNothingWhenClean(t *testing.T) {
	if n := testing.AllocsPerRun(100, func() { _ = normTag("workloadtype") }); n != 0 {
		t.Errorf("normTag of a clean key allocates %v times, want 0", n)
	}
}

// paramsPattern is what a ModelParams tag may hold: a plain decimal with an
// optional B or M.
var paramsPattern = regexp.MustCompile(`^[0-9]*\.?[0-9]*[BbMm]?$`)

// FuzzParseBillions: a parameter count read is finite, above zero, at most
// MaxParamsBillions, and written as a plain decimal; it never panics.
func FuzzParseBillions(f *testing.F) {
	for _, s := range []string{"8B", "7.2b", "350M", "70", "NaN", "Inf", "1e300B", "0x10", "1_000", "-0", " 8B ", ".5B", "5.B", ".", "B", "100000B", "100000.0000001B"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, ok := parseBillions(s)
		if !ok {
			return
		}
		if !(n > 0 && n <= MaxParamsBillions) || math.IsNaN(n) || math.IsInf(n, 0) {
			t.Fatalf("parseBillions(%q) = %v", s, n)
		}
		if !paramsPattern.MatchString(strings.TrimSpace(s)) {
			t.Fatalf("parseBillions(%q) = %v: not a plain decimal", s, n)
		}
	})
}

// TestWorkloadTypesFromTags: every known type some spelling names, sorted.
func TestWorkloadTypesFromTags(t *testing.T) {
	got := WorkloadTypesFromTags(map[string]string{"WorkloadType": "Training", "workload_type": "serving", "Workload-Type": "gaming", "workloadtype": "train", "Team": "inference"})
	if want := []WorkloadType{Inference, Training}; !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if got := WorkloadTypesFromTags(nil); len(got) != 0 {
		t.Errorf("no tags: %v", got)
	}
}

func FuzzNormTag(f *testing.F) {
	for _, s := range []string{"", "Workload-Type", "a_b c", "\xff-Ä", "İ_x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := normTag(s), normTagReference(s); got != want {
			t.Fatalf("normTag(%q) = %q, want %q", s, got, want)
		}
	})
}

// TestWorkloadTypeIsTheOneAllSpellingsName: over random sets of spellings
// of WorkloadType, WorkloadTypeFromTags gives a type exactly when every
// spelling names that one known type, and WorkloadTypesFromTags holds every
// known type some spelling names; an empty value counts as absent.
func TestWorkloadTypeIsTheOneAllSpellingsName(t *testing.T) {
	keys := []string{"WorkloadType", "workload_type", "Workload-Type", " workloadtype\t", "WORKLOAD TYPE"}
	values := []string{"Training", "train", "Inference", " serving ", "batch", "gaming", ""}
	rng := rand.New(rand.NewSource(7))
	for range 5000 {
		tags := map[string]string{"Team": "inference"}
		for _, k := range keys {
			if rng.Intn(3) == 0 {
				tags[k] = values[rng.Intn(len(values))]
			}
		}
		named := map[WorkloadType]bool{}
		unknown := false
		for k, v := range tags {
			if k == "Team" || strings.TrimSpace(v) == "" {
				continue
			}
			if wt, ok := workloadTagValues[normTag(strings.TrimSpace(v))]; ok {
				named[wt] = true
			} else {
				unknown = true
			}
		}
		got, ok := WorkloadTypeFromTags(tags)
		if want := len(named) == 1 && !unknown; ok != want || ok && !named[got] {
			t.Fatalf("%v: WorkloadTypeFromTags = %q, %v; named %v, unknown %v", tags, got, ok, named, unknown)
		}
		types := WorkloadTypesFromTags(tags)
		if len(types) != len(named) || !slices.IsSorted(types) {
			t.Fatalf("%v: WorkloadTypesFromTags = %v, named %v", tags, types, named)
		}
		for _, wt := range types {
			if !named[wt] {
				t.Fatalf("%v: %q in %v is named by no spelling", tags, wt, types)
			}
		}
	}
}
