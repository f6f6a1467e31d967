package sharing

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/gpufinops/gpufinops/pkg/fleet"
)

// Independent shapes of the payloads, as the device plugin and mig-parted
// read them, so that the round trip does not just mirror the writer's types.
type parsedDevicePlugin struct {
	Version string `json:"version"`
	Sharing struct {
		TimeSlicing struct {
			RenameByDefault            *bool `json:"renameByDefault"`
			FailRequestsGreaterThanOne *bool `json:"failRequestsGreaterThanOne"`
			Resources                  []struct {
				Name     string `json:"name"`
				Replicas int    `json:"replicas"`
			} `json:"resources"`
		} `json:"timeSlicing"`
	} `json:"sharing"`
}

type parsedMIGParted struct {
	Version    string `json:"version"`
	MIGConfigs map[string][]struct {
		Devices    string         `json:"devices"`
		MIGEnabled bool           `json:"mig-enabled"`
		MIGDevices map[string]int `json:"mig-devices"`
	} `json:"mig-configs"`
}

func splitDocs(t *testing.T, b []byte) []corev1.ConfigMap {
	t.Helper()
	var out []corev1.ConfigMap
	for _, doc := range strings.Split(string(b), "\n---\n") {
		var cm corev1.ConfigMap
		if err := yaml.UnmarshalStrict([]byte(doc), &cm); err != nil {
			t.Fatalf("document does not parse as a ConfigMap: %v\n%s", err, doc)
		}
		out = append(out, cm)
	}
	return out
}

func TestManifestsRoundTrip(t *testing.T) {
	gpus := realGPUs(t)
	tenants := []Tenant{
		t4("nb-1", 20, 3), t4("nb-2", 20, 3), t4("nb-3", 20, 3), t4("nb-4", 20, 3), t4("nb-5", 20, 3),
		a100("inf-1", true, 20, 30), a100("inf-2", true, 10, 9), a100("inf-3", true, 20, 30), a100("inf-4", true, 20, 30),
		a100("inf-5", false, 5, 2), a100("inf-6", false, 5, 2),
	}
	other := t4("nb-west-1", 30, 2)
	other.Region = "us-west-2"
	other2 := t4("nb-west-2", 30, 2)
	other2.Region = "us-west-2"
	tenants = append(tenants, other, other2)
	plan := Build(tenants, gpus, DefaultPolicy())

	b, err := Manifests(plan)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "#") {
		t.Errorf("manifests carry comments:\n%s", b)
	}
	docs := splitDocs(t, b)
	if len(docs) != 2 {
		t.Fatalf("%d documents, want 2:\n%s", len(docs), b)
	}
	for i, want := range []string{TimeSlicingConfigMap, MIGConfigMap} {
		cm := docs[i]
		if cm.Kind != "ConfigMap" || cm.APIVersion != "v1" || cm.Name != want || cm.Namespace != "gpu-operator" {
			t.Errorf("document %d: %s %s %s/%s", i, cm.APIVersion, cm.Kind, cm.Namespace, cm.Name)
		}
		if cm.Annotations[AnnotationNodeLabels] == "" || cm.Annotations[AnnotationClusterPolicy] == "" {
			t.Errorf("%s: annotations %v", cm.Name, cm.Annotations)
		}
	}

	// Time-slicing: one key per group, replicas as planned.
	wantReplicas := map[string]int{}
	wantLabels := []string{}
	for _, g := range plan.Groups {
		if g.Mode == TimeSlicing {
			wantReplicas[g.Config] = g.Replicas
			for _, h := range g.Hosts {
				wantLabels = append(wantLabels, h.InstanceID+": nvidia.com/device-plugin.config="+g.Config)
			}
		}
	}
	if d := cmp.Diff(map[string]int{"g4dn-xlarge-t4": 4, "g4dn-xlarge-t4-us-west-2": 2}, wantReplicas); d != "" {
		t.Fatalf("plan's time-slicing groups (-want +got):\n%s", d)
	}
	gotReplicas := map[string]int{}
	for key, payload := range docs[0].Data {
		var cfg parsedDevicePlugin
		if err := yaml.UnmarshalStrict([]byte(payload), &cfg); err != nil {
			t.Fatalf("%s: %v", key, err)
		}
		ts := cfg.Sharing.TimeSlicing
		if cfg.Version != "v1" || len(ts.Resources) != 1 || ts.Resources[0].Name != "nvidia.com/gpu" ||
			ts.RenameByDefault == nil || *ts.RenameByDefault || ts.FailRequestsGreaterThanOne == nil {
			t.Errorf("%s: %+v", key, cfg)
		}
		gotReplicas[key] = ts.Resources[0].Replicas
	}
	if d := cmp.Diff(wantReplicas, gotReplicas); d != "" {
		t.Errorf("replicas (-want +got):\n%s", d)
	}
	if d := cmp.Diff(strings.Join(wantLabels, "\n"), docs[0].Annotations[AnnotationNodeLabels]); d != "" {
		t.Errorf("node labels (-want +got):\n%s", d)
	}

	// MIG: one entry per distinct layout (plus all-disabled), devices as planned.
	var mig parsedMIGParted
	if len(docs[1].Data) != 1 {
		t.Fatalf("MIG data keys %v", docs[1].Data)
	}
	if err := yaml.UnmarshalStrict([]byte(docs[1].Data["config.yaml"]), &mig); err != nil {
		t.Fatal(err)
	}
	if mig.Version != "v1" {
		t.Errorf("mig-parted version %q", mig.Version)
	}
	wantLayouts := map[string]map[string]int{}
	hosts := 0
	for _, g := range plan.Groups {
		if g.Mode != MIG {
			continue
		}
		for _, h := range g.Hosts {
			hosts++
			wantLayouts[h.MIGConfig] = h.MIGDevices
			if !strings.Contains(docs[1].Annotations[AnnotationNodeLabels], h.InstanceID+": nvidia.com/mig.config="+h.MIGConfig) {
				t.Errorf("no node label for %s in %q", h.InstanceID, docs[1].Annotations[AnnotationNodeLabels])
			}
		}
	}
	if hosts != 3 || len(wantLayouts) != 3 {
		t.Fatalf("plan has %d MIG hosts, %d layouts: %v", hosts, len(wantLayouts), layout(plan))
	}
	gotLayouts := map[string]map[string]int{}
	for name, devs := range mig.MIGConfigs {
		if len(devs) != 1 || devs[0].Devices != "all" {
			t.Errorf("%s: %+v", name, devs)
			continue
		}
		if name == "all-disabled" {
			if devs[0].MIGEnabled {
				t.Errorf("all-disabled enables MIG")
			}
			continue
		}
		if !devs[0].MIGEnabled {
			t.Errorf("%s: MIG not enabled", name)
		}
		gotLayouts[name] = devs[0].MIGDevices
	}
	if d := cmp.Diff(wantLayouts, gotLayouts); d != "" {
		t.Errorf("MIG layouts (-want +got):\n%s", d)
	}
	for _, want := range []string{"mig.strategy=mixed", "migManager.enabled=true", "migManager.config.name=custom-mig-config"} {
		if !strings.Contains(docs[1].Annotations[AnnotationClusterPolicy], want) {
			t.Errorf("cluster policy note lacks %q", want)
		}
	}

	// Deterministic bytes.
	for range 5 {
		again, err := Manifests(Build(tenants, gpus, DefaultPolicy()))
		if err != nil || string(again) != string(b) {
			t.Fatalf("manifests differ between runs (err %v)", err)
		}
	}
}

func TestManifestsOneMode(t *testing.T) {
	b, err := Manifests(Build([]Tenant{t4("a", 10, 1), t4("b", 10, 1)}, noGPUs, DefaultPolicy()))
	if err != nil {
		t.Fatal(err)
	}
	docs := splitDocs(t, b)
	if len(docs) != 1 || docs[0].Name != TimeSlicingConfigMap {
		t.Fatalf("got:\n%s", b)
	}
}

func TestManifestsEmptyPlan(t *testing.T) {
	for _, p := range []Plan{{}, Build(nil, noGPUs, DefaultPolicy())} {
		b, err := Manifests(p)
		if err != nil || len(b) != 0 {
			t.Errorf("Manifests(empty) = %q, %v", b, err)
		}
	}
}

func TestManifestsDerivesMissingConfigNames(t *testing.T) {
	plan := Plan{Groups: []Group{{
		Mode: TimeSlicing, Provider: fleet.AWS, Region: "us-east-1", InstanceType: "g4dn.xlarge", GPUModel: "T4",
		Replicas: 3, Hosts: []Host{{InstanceID: "i-1", Tenants: []string{"i-1", "i-2", "i-3"}}},
	}}}
	b, err := Manifests(plan)
	if err != nil {
		t.Fatal(err)
	}
	docs := splitDocs(t, b)
	if _, ok := docs[0].Data["g4dn-xlarge-t4"]; !ok {
		t.Errorf("keys %v", docs[0].Data)
	}
}

func TestManifestsErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		plan Plan
		want string
	}{
		{"bad config name", Plan{Groups: []Group{{Mode: TimeSlicing, Config: "no spaces", Replicas: 2, Hosts: []Host{{InstanceID: "i"}}}}},
			`config name "no spaces"`},
		{"one replica", Plan{Groups: []Group{{Mode: TimeSlicing, Config: "x", Replicas: 1}}}, "at least 2"},
		{"MIG host without devices", Plan{Groups: []Group{{Mode: MIG, Hosts: []Host{{InstanceID: "i"}}}}}, "MIG host i has no MIG devices"},
		{"same key, other replicas", Plan{Groups: []Group{
			{Mode: TimeSlicing, Config: "x", Replicas: 2, Hosts: []Host{{InstanceID: "a"}}},
			{Mode: TimeSlicing, Config: "x", Replicas: 3, Hosts: []Host{{InstanceID: "b"}}},
		}}, `"x" with different replicas`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Manifests(tc.plan)
			if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("error %v, want one line with %q", err, tc.want)
			}
		})
	}
}
