package governance

import (
	"strings"
	"testing"
	"unsafe"

	"github.com/google/go-cmp/cmp"
	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/fleet"
)

// full is a complete, valid tag set of the default policy.
func full() map[string]string {
	return map[string]string{
		"Team": "ml-serving", "Project": "chat", "Environment": "Production", "WorkloadType": "Inference",
		"ModelName": "mistral-7b", "CostCenter": "CC-1", "AutoShutdown": "false",
	}
}

// with returns full() changed: a nil value deletes the key, "+key" adds one.
func with(changes map[string]*string) map[string]string {
	tags := full()
	for k, v := range changes {
		if v == nil {
			delete(tags, k)
			continue
		}
		tags[k] = *v
	}
	return tags
}

func s(v string) *string { return &v }

func item(id string, p fleet.Provider, tags map[string]string, w *fleet.Workload, cost string) Item {
	it := Item{ID: id, Provider: p, Region: "r", InstanceType: "t", Tags: tags, Workload: w, GPUCount: 1, MonthlyHours: 730}
	if cost != "" {
		it.Priced = true
		it.MonthlyCost = decimal.RequireFromString(cost)
		it.OptimizedCost = it.MonthlyCost
	}
	return it
}

type got struct {
	Compliant                   bool
	Missing, Invalid, Case      []string
	Kinds, Suggestions, Message []string
	Action                      string
}

func summarize(iv InstanceViolations) got {
	g := got{Compliant: iv.Compliant, Missing: iv.Missing, Invalid: iv.Invalid, Case: iv.CaseMismatch, Action: iv.Action}
	for _, v := range iv.Violations {
		g.Kinds = append(g.Kinds, string(v.Kind)+" "+v.Tag)
		if v.Suggestion != "" {
			g.Suggestions = append(g.Suggestions, v.Tag+"="+v.Suggestion)
		}
		g.Message = append(g.Message, v.Message)
	}
	return g
}

func TestAuditItem(t *testing.T) {
	inference := &fleet.Workload{Type: fleet.Inference, Model: "mistral-7b-instruct"}
	dev := &fleet.Workload{Type: fleet.Development}
	hpo := &fleet.Workload{Type: fleet.HPO}
	for _, tc := range []struct {
		name string
		it   Item
		want got
	}{
		{
			name: "complete",
			it:   item("a", fleet.AWS, full(), inference, "100"),
			want: got{Compliant: true},
		},
		{
			name: "missing tags, ModelName suggested from the fleet",
			it:   item("a", fleet.AWS, with(map[string]*string{"Team": nil, "Project": nil, "ModelName": nil}), inference, "884.76"),
			want: got{
				Missing:     []string{"Team", "Project", "ModelName"},
				Kinds:       []string{"missing Team", "missing Project", "missing ModelName"},
				Suggestions: []string{"ModelName=mistral-7b-instruct"},
				Message: []string{"Team is missing", "Project is missing",
					"ModelName is missing; it is required for Inference workloads (the snapshot suggests mistral-7b-instruct)"},
				Action: "Add tags Team, Project, ModelName=mistral-7b-instruct: $884.76/month is unattributed",
			},
		},
		{
			name: "no tags at all",
			it:   item("a", fleet.Azure, nil, hpo, "71773.60"),
			want: got{
				Missing:     []string{"Team", "Project", "Environment", "WorkloadType", "ModelName", "CostCenter", "AutoShutdown"},
				Kinds:       []string{"missing Team", "missing Project", "missing Environment", "missing WorkloadType", "missing ModelName", "missing CostCenter", "missing AutoShutdown"},
				Suggestions: []string{"WorkloadType=Training"},
				Message: []string{"Team is missing", "Project is missing", "Environment is missing",
					"WorkloadType is missing (the snapshot suggests Training)", "ModelName is missing; it is required for Training workloads",
					"CostCenter is missing", "AutoShutdown is missing"},
				Action: "Add tags Team, Project, Environment, WorkloadType=Training, ModelName, CostCenter, AutoShutdown: $71,773.60/month is unattributed",
			},
		},
		{
			name: "invalid values with the allowed list and a suggestion",
			it:   item("a", fleet.AWS, with(map[string]*string{"Environment": s("prod"), "WorkloadType": s("HPO"), "ModelName": nil}), hpo, "131.14"),
			want: got{
				Missing:     []string{"ModelName"},
				Invalid:     []string{"Environment", "WorkloadType"},
				Kinds:       []string{"invalid-value Environment", "invalid-value WorkloadType", "missing ModelName"},
				Suggestions: []string{"Environment=Production", "WorkloadType=Training"},
				Message: []string{`Environment "prod" is not one of Production, Staging, Development, Experiment (did you mean Production?)`,
					`WorkloadType "HPO" is not one of Training, Inference, FineTuning, Development (did you mean Training?)`,
					"ModelName is missing; it is required for Training workloads"},
				Action: `Add tag ModelName; set Environment to Production (not "prod"); set WorkloadType to Training (not "HPO"): $131.14/month carries incomplete tags`,
			},
		},
		{
			name: "invalid value without a suggestion",
			it:   item("a", fleet.AWS, with(map[string]*string{"Environment": s("research")}), inference, "10"),
			want: got{
				Invalid: []string{"Environment"},
				Kinds:   []string{"invalid-value Environment"},
				Message: []string{`Environment "research" is not one of Production, Staging, Development, Experiment`},
				Action:  `Set Environment to one of Production, Staging, Development, Experiment (not "research"): $10.00/month carries incomplete tags`,
			},
		},
		{
			name: "case-only mismatch of a key on AWS",
			it: item("a", fleet.AWS, func() map[string]string {
				m := full()
				delete(m, "Team")
				m["team"] = "ml-serving"
				return m
			}(), inference, "100"),
			want: got{
				Compliant: true,
				Case:      []string{"Team"},
				Kinds:     []string{"case-mismatch Team"},
				Message:   []string{`key "team" is spelt differently from "Team"; cost reports list the two apart`},
				Action:    "Rename tag team to Team: AWS and Azure cost reports list each spelling apart",
			},
		},
		{
			name: "case-only mismatch of a value on Azure",
			it:   item("a", fleet.Azure, with(map[string]*string{"Environment": s("production"), "WorkloadType": s("fine-tuning")}), &fleet.Workload{Type: fleet.FineTuning, Model: "m"}, "100"),
			want: got{
				Compliant:   true,
				Case:        []string{"Environment", "WorkloadType"},
				Kinds:       []string{"case-mismatch Environment", "case-mismatch WorkloadType"},
				Suggestions: []string{"Environment=Production", "WorkloadType=FineTuning"},
				Message: []string{`Environment "production" is spelt differently from "Production"; cost reports list the two apart`,
					`WorkloadType "fine-tuning" is spelt differently from "FineTuning"; cost reports list the two apart`},
				Action: `Write Environment as Production (not "production"); write WorkloadType as FineTuning (not "fine-tuning"): AWS and Azure cost reports list each spelling apart`,
			},
		},
		{
			name: "GCP lower-case labels are the rule, not a mismatch",
			it: item("a", fleet.GCP, map[string]string{
				"team": "ml-serving", "project": "chat", "environment": "production", "workload_type": "inference",
				"model_name": "mistral-7b", "cost-center": "cc-1", "autoshutdown": "false",
			}, inference, "623.14"),
			want: got{Compliant: true},
		},
		{
			name: "GCP labels still need allowed values",
			it: item("a", fleet.GCP, map[string]string{
				"team": "ml-serving", "project": "chat", "environment": "prod", "workload_type": "inference",
				"model_name": "mistral-7b", "cost_center": "cc-1", "auto_shutdown": "false",
			}, inference, "623.14"),
			want: got{
				Invalid:     []string{"Environment"},
				Kinds:       []string{"invalid-value Environment"},
				Suggestions: []string{"Environment=Production"},
				Message:     []string{`Environment "prod" is not one of Production, Staging, Development, Experiment (did you mean Production?)`},
				Action:      `Set Environment to Production (not "prod"): $623.14/month carries incomplete tags`,
			},
		},
		{
			name: "ModelName not required for development",
			it:   item("a", fleet.AWS, with(map[string]*string{"ModelName": nil, "WorkloadType": s("Development")}), dev, "383.98"),
			want: got{Compliant: true},
		},
		{
			name: "ModelName not required when nothing says what runs",
			it:   item("a", fleet.AWS, with(map[string]*string{"ModelName": nil, "WorkloadType": nil}), nil, "5"),
			want: got{
				Missing: []string{"WorkloadType"},
				Kinds:   []string{"missing WorkloadType"},
				Message: []string{"WorkloadType is missing"},
				Action:  "Add tag WorkloadType: $5.00/month carries incomplete tags",
			},
		},
		{
			name: "the WorkloadType tag wins over the fleet for ModelName",
			it:   item("a", fleet.AWS, with(map[string]*string{"ModelName": nil, "WorkloadType": s("Training")}), dev, "5"),
			want: got{
				Missing: []string{"ModelName"},
				Kinds:   []string{"missing ModelName"},
				Message: []string{"ModelName is missing; it is required for Training workloads"},
				Action:  "Add tag ModelName: $5.00/month carries incomplete tags",
			},
		},
		{
			name: "an empty value is missing",
			it:   item("a", fleet.AWS, with(map[string]*string{"Team": s(" ")}), inference, "5"),
			want: got{
				Missing: []string{"Team"},
				Kinds:   []string{"missing Team"},
				Message: []string{"Team is set but empty"},
				Action:  "Add tag Team: $5.00/month is unattributed",
			},
		},
		{
			name: "unpriced",
			it:   item("a", fleet.AWS, with(map[string]*string{"CostCenter": nil}), inference, ""),
			want: got{
				Missing: []string{"CostCenter"},
				Kinds:   []string{"missing CostCenter"},
				Message: []string{"CostCenter is missing"},
				Action:  "Add tag CostCenter: its cost is unknown (no price)",
			},
		},
		{
			name: "stopped",
			it:   item("a", fleet.AWS, with(map[string]*string{"AutoShutdown": nil}), inference, "0"),
			want: got{
				Missing: []string{"AutoShutdown"},
				Kinds:   []string{"missing AutoShutdown"},
				Message: []string{"AutoShutdown is missing"},
				Action:  "Add tag AutoShutdown: it costs nothing this month (stopped)",
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			iv := auditItem(tc.it, DefaultPolicy())
			if d := cmp.Diff(tc.want, summarize(iv)); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
			for _, v := range iv.Violations {
				if v.Kind == KindInvalidValue && len(v.Allowed) == 0 {
					t.Errorf("%s: invalid value without the allowed list", v.Tag)
				}
			}
		})
	}
}

func TestAuditItemCustomPolicy(t *testing.T) {
	// --require Team,Project: nothing else is required, but a present
	// Environment must still be an allowed value.
	p := DefaultPolicy()
	p.RequiredTags = []string{"Team", "Project"}
	it := item("a", fleet.AWS, map[string]string{"Team": "x", "Environment": "prod"}, nil, "1")
	g := summarize(auditItem(it, p))
	want := got{
		Missing:     []string{"Project"},
		Invalid:     []string{"Environment"},
		Kinds:       []string{"missing Project", "invalid-value Environment"},
		Suggestions: []string{"Environment=Production"},
		Message: []string{"Project is missing",
			`Environment "prod" is not one of Production, Staging, Development, Experiment (did you mean Production?)`},
		Action: `Add tag Project; set Environment to Production (not "prod"): $1.00/month is unattributed`,
	}
	if d := cmp.Diff(want, g); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	// ModelName listed by the user keeps its workload condition.
	p.RequiredTags = []string{"ModelName"}
	if iv := auditItem(item("b", fleet.AWS, nil, &fleet.Workload{Type: fleet.Development}, "1"), p); !iv.Compliant {
		t.Errorf("ModelName required of a development instance: %+v", iv.Violations)
	}
	if iv := auditItem(item("c", fleet.AWS, nil, &fleet.Workload{Type: fleet.Batch}, "1"), p); iv.Compliant {
		t.Error("ModelName not required of a batch (inference) instance")
	}
}

func TestAuditTotals(t *testing.T) {
	items := []Item{
		// Seven tags missing, one instance: its cost counts once.
		item("untagged", fleet.Azure, nil, &fleet.Workload{Type: fleet.Inference}, "1000.00"),
		item("prod-typo", fleet.AWS, with(map[string]*string{"Environment": s("prod")}), &fleet.Workload{Type: fleet.Inference, Model: "m"}, "200.50"),
		item("ok", fleet.AWS, full(), &fleet.Workload{Type: fleet.Inference, Model: "m"}, "300.25"),
		item("ok-case", fleet.AWS, with(map[string]*string{"Environment": s("production")}), nil, "99.25"),
		item("unpriced", fleet.AWS, with(map[string]*string{"Team": nil}), nil, ""),
	}
	a := AuditTags(items, DefaultPolicy())
	if a.InstanceCount != 5 || a.CompliantCount != 2 || a.UnpricedCount != 1 {
		t.Errorf("counts: %d instances, %d compliant, %d unpriced", a.InstanceCount, a.CompliantCount, a.UnpricedCount)
	}
	if a.MonthlyCost.String() != "1600" || a.NonCompliantMonthlyCost.String() != "1200.5" {
		t.Errorf("spend %s, non-compliant %s; want 1600 and 1200.5 (each instance once)", a.MonthlyCost, a.NonCompliantMonthlyCost)
	}
	// 2 of 5 = 40 %; 399.50 of 1600 = 24.96875 → 25.0 %.
	if a.CompliancePercentByInstances != 40 || a.CompliancePercentBySpend != 25 {
		t.Errorf("compliance %v %% by instances, %v %% by spend", a.CompliancePercentByInstances, a.CompliancePercentBySpend)
	}
	var ids []string
	for _, v := range a.Violations {
		ids = append(ids, v.ResourceID)
	}
	if d := cmp.Diff([]string{"untagged", "prod-typo", "ok-case", "unpriced"}, ids); d != "" {
		t.Errorf("violations, costliest first (-want +got):\n%s", d)
	}
	byTag := map[string]TagSummary{}
	var order []string
	for _, s := range a.Tags {
		byTag[s.Tag] = s
		order = append(order, s.Tag)
	}
	if d := cmp.Diff(DefaultPolicy().RequiredTags, order); d != "" {
		t.Errorf("tag order (-want +got):\n%s", d)
	}
	if s := byTag["Environment"]; s.Missing != 1 || s.Invalid != 1 || s.CaseMismatch != 1 || s.MonthlyCost.String() != "1200.5" {
		t.Errorf("Environment: %+v", s)
	}
	if s := byTag["Team"]; s.Missing != 2 || s.MonthlyCost.String() != "1000" {
		t.Errorf("Team: %+v", s)
	}
	// ModelName: required of the untagged inference instance only.
	if s := byTag["ModelName"]; s.Missing != 1 {
		t.Errorf("ModelName: %+v", s)
	}
}

func TestAuditEmpty(t *testing.T) {
	a := AuditTags(nil, DefaultPolicy())
	if a.CompliancePercentByInstances != 100 || a.CompliancePercentBySpend != 100 || a.Violations == nil || len(a.Tags) != 7 {
		t.Errorf("%+v", a)
	}
}

func TestAuditNonRequiredAllowedTagIsSummarized(t *testing.T) {
	p := Policy{RequiredTags: []string{"Team"}, AllowedValues: []AllowedValues{{Tag: "Tier", Values: []string{"gold"}}}}
	a := AuditTags([]Item{item("a", fleet.AWS, map[string]string{"Team": "x", "Tier": "bronze"}, nil, "3")}, p)
	if len(a.Tags) != 2 || a.Tags[1].Tag != "Tier" || a.Tags[1].Required || a.Tags[1].Invalid != 1 {
		t.Errorf("%+v", a.Tags)
	}
	if !strings.Contains(a.Violations[0].Action, `Set Tier to one of gold (not "bronze")`) {
		t.Errorf("action %q", a.Violations[0].Action)
	}
}

func TestAuditTagsEach(t *testing.T) {
	items := []Item{
		item("a", fleet.AWS, nil, nil, "5"),
		item("b", fleet.AWS, map[string]string{"Team": "x"}, nil, "9"),
		item("c", fleet.AWS, nil, nil, "1"),
	}
	whole := AuditTags(items, DefaultPolicy())
	var seen []string
	trimmed := AuditTagsEach(items, DefaultPolicy(), func(iv *InstanceViolations) {
		if len(iv.Violations) == 0 || iv.Action == "" {
			t.Errorf("%s: handed without its detail", iv.ResourceID)
		}
		seen = append(seen, iv.ResourceID)
		iv.Violations, iv.Action = nil, ""
	})
	if d := cmp.Diff([]string{"a", "b", "c"}, seen); d != "" {
		t.Errorf("instances handed (-want +got):\n%s", d)
	}
	// The same audit but for the detail each dropped: counts, costs, order.
	for i := range whole.Violations {
		whole.Violations[i].Violations, whole.Violations[i].Action = nil, ""
	}
	if d := cmp.Diff(whole, trimmed); d != "" {
		t.Errorf("(-whole +trimmed):\n%s", d)
	}
	// Identical messages are held once (costliest first: b, a, c).
	v := AuditTags(items, DefaultPolicy()).Violations
	a, c := v[1].Violations[0].Message, v[2].Violations[0].Message
	if a != c || unsafe.StringData(a) != unsafe.StringData(c) {
		t.Errorf("%q and %q are two strings", a, c)
	}
}
