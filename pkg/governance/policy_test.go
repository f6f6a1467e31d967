package governance

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gpufinops/gpufinops/pkg/fleet"
)

func TestDefaultPolicy(t *testing.T) {
	p := DefaultPolicy()
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	want := []string{"Team", "Project", "Environment", "WorkloadType", "ModelName", "CostCenter", "AutoShutdown"}
	if d := cmp.Diff(want, p.RequiredTags); d != "" {
		t.Errorf("required tags (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"Production", "Staging", "Development", "Experiment"}, p.allowed("environment")); d != "" {
		t.Errorf("Environment values (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"Training", "Inference", "FineTuning", "Development"}, p.allowed("workload_type")); d != "" {
		t.Errorf("WorkloadType values (-want +got):\n%s", d)
	}
	for class, want := range map[string]bool{"Training": true, "Inference": true, "FineTuning": true, "fine-tuning": true, "Development": false, "": false} {
		if got := p.needsModelName(class); got != want {
			t.Errorf("needsModelName(%q) = %v, want %v", class, got, want)
		}
	}
	// A fresh copy each time: callers may change it.
	p.RequiredTags[0] = "Owner"
	if DefaultPolicy().RequiredTags[0] != "Team" {
		t.Error("DefaultPolicy shares its slices")
	}
}

func TestPolicyValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*Policy)
		want string
	}{
		{"empty required", func(p *Policy) { p.RequiredTags = append(p.RequiredTags, " ") }, "governance policy: requiredTags[7] is empty"},
		{"duplicate required", func(p *Policy) { p.RequiredTags = append(p.RequiredTags, "cost_center") }, `governance policy: requiredTags lists "CostCenter" and "cost_center", which are the same tag`},
		{"empty allowed tag", func(p *Policy) { p.AllowedValues[0].Tag = "" }, "governance policy: allowedValues[0].tag is empty"},
		{"duplicate allowed tag", func(p *Policy) { p.AllowedValues[1].Tag = "environment" }, `governance policy: allowedValues lists "Environment" and "environment", which are the same tag`},
		{"no values", func(p *Policy) { p.AllowedValues[0].Values = nil }, "governance policy: allowedValues for Environment is empty; give at least one value or drop the entry"},
		{"empty value", func(p *Policy) { p.AllowedValues[1].Values[2] = "" }, "governance policy: allowedValues for WorkloadType: values[2] is empty"},
		{"empty model workload", func(p *Policy) { p.ModelNameWorkloads = []string{""} }, "governance policy: modelNameWorkloads[0] is empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := DefaultPolicy()
			tc.edit(&p)
			err := p.Validate()
			if err == nil || err.Error() != tc.want {
				t.Errorf("got %v\nwant %s", err, tc.want)
			}
		})
	}
	if err := (Policy{}).Validate(); err != nil {
		t.Errorf("an empty policy is valid (nothing required): %v", err)
	}
}

func TestParseTagList(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
		err  string
	}{
		{in: "Team", want: []string{"Team"}},
		{in: "Team,Project, CostCenter ", want: []string{"Team", "Project", "CostCenter"}},
		{in: "", err: "an empty tag name; give keys separated by commas, e.g. Team,Project"},
		{in: "Team,,Project", err: "an empty tag name; give keys separated by commas, e.g. Team,Project"},
		{in: "Team,Team", err: "Team is listed twice"},
		{in: "Team,team", err: "Team and team are the same tag"},
	} {
		got, err := ParseTagList(tc.in)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("%q: err %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tc.in, err)
		}
		if d := cmp.Diff(tc.want, got); d != "" {
			t.Errorf("%q (-want +got):\n%s", tc.in, d)
		}
	}
}

func TestFoldAndLookup(t *testing.T) {
	for _, s := range []string{"WorkloadType", "workloadtype", "workload_type", "workload-type", "Workload Type"} {
		if fold(s) != "workloadtype" {
			t.Errorf("fold(%q) = %q", s, fold(s))
		}
	}
	tags := map[string]string{"team": "a", "TEAM": "b", "Project": "p"}
	if got := lookup(tags, "Project"); !got.found || !got.exact || got.value != "p" {
		t.Errorf("exact lookup: %+v", got)
	}
	// Two spellings: the first in sorted order wins, every time.
	if got := lookup(tags, "Team"); !got.found || got.exact || got.key != "TEAM" {
		t.Errorf("folded lookup: %+v", got)
	}
	if got := lookup(tags, "CostCenter"); got.found {
		t.Errorf("absent key found: %+v", got)
	}
	if got := lookup(nil, "Team"); got.found {
		t.Error("found a key in nil tags")
	}
}

func TestWorkloadClass(t *testing.T) {
	want := map[fleet.WorkloadType]string{
		fleet.Training: "Training", fleet.HPO: "Training", fleet.FineTuning: "FineTuning",
		fleet.Inference: "Inference", fleet.Batch: "Inference", fleet.Development: "Development",
	}
	for _, wt := range fleet.WorkloadTypes {
		if got := WorkloadClass(wt); got != want[wt] {
			t.Errorf("WorkloadClass(%s) = %q, want %q", wt, got, want[wt])
		}
	}
	if WorkloadClass("quantum") != "" {
		t.Error("unknown workload type mapped")
	}
	// Every class is an allowed WorkloadType value of the default policy.
	allowed := strings.Join(DefaultPolicy().allowed(TagWorkloadType), ",")
	for _, c := range want {
		if !strings.Contains(allowed, c) {
			t.Errorf("class %s is not an allowed value", c)
		}
	}
}
