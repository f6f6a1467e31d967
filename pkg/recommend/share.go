package recommend

import (
	"errors"
	"fmt"
	"sort"

	"github.com/gpufinops/gpufinops/pkg/sharing"
)

// shareRule packs low-utilization development and light-inference GPUs onto
// fewer physical GPUs (time-slicing, or MIG on GPUs that have it) and stops
// the instances it frees. The plan it follows is kept in Plan.Sharing.
func shareRule(e *engine, active []*state) map[*state]*change {
	pol := e.policy.Sharing
	var tenants []sharing.Tenant
	var notes []string
	byID := map[string]*state{}
	for _, s := range active {
		if !s.typeKnown {
			continue
		}
		t, err := sharing.TenantFrom(s.inst, s.summary, sharing.Current{
			InstanceType: s.typ.Name, GPUModel: s.typ.GPUModel, MonthlyCost: s.cost(), MonthlyHours: s.hours, Schedule: s.schedule,
		}, pol)
		if errors.Is(err, sharing.ErrNotCandidate) {
			continue
		}
		if err != nil {
			notes = append(notes, fmt.Sprintf("%s: not shared: %v", s.inst.ID, err))
			continue
		}
		tenants = append(tenants, t)
		byID[s.inst.ID] = s
	}
	sort.Strings(notes)
	plan := sharing.Build(tenants, e.cat.GPU, pol)
	plan.Notes = append(notes, plan.Notes...)
	e.sharing = plan
	out := map[*state]*change{}
	for id, s := range byID {
		g, m, ok := plan.MoveOf(id)
		if !ok {
			continue
		}
		c := &change{
			kind:       KindShare,
			stop:       true,
			target:     "share " + m.Host,
			confidence: e.confidenceFor(s),
			risk:       Medium,
			evidence: Evidence{
				Metrics: mergeMetrics(utilMetrics(s.summary), map[string]float64{"replicasPerGpu": float64(g.Replicas)}),
				Thresholds: map[string]float64{
					"developmentMaxGpuPercent": pol.DevelopmentMaxGPUPercent,
					"inferenceMaxGpuPercent":   pol.InferenceMaxGPUPercent,
					"targetGpuPercent":         pol.TargetGPUPercent,
					"headroomPercent":          pol.HeadroomPercent,
					"maxReplicas":              float64(pol.MaxReplicas),
				},
				Prices:  priceList(s.price),
				Formula: "saving = this instance's monthly cost; its work moves onto the host's GPU (Σ GPU p95 ≤ target, Σ memory peaks × (1 + headroom) ≤ GPU memory)",
			},
		}
		switch g.Mode {
		case sharing.MIG:
			c.short = fmt.Sprintf("MIG %s on %s", m.Profile, m.Host)
			c.action = fmt.Sprintf("Move it onto %s as a MIG %s instance and stop this one", m.Host, m.Profile)
			c.rationale = fmt.Sprintf("Its GPU load (p95 %s %%) and memory fit a %s MIG slice of %s's %s, with memory and fault isolation.", pct(s.summary.GPU.P95), m.Profile, m.Host, g.GPUModel)
			c.riskNotes = []string{"MIG needs the GPU Operator's MIG manager (mixed strategy) and a node relabel; the pod requests the MIG resource instead of a whole GPU"}
		default:
			c.short = fmt.Sprintf("share %s (%d/GPU)", m.Host, g.Replicas)
			c.action = fmt.Sprintf("Share %s's GPU by time-slicing (%d per GPU) and stop this one", m.Host, g.Replicas)
			c.rationale = fmt.Sprintf("Its GPU is busy at most %s %% (p95) and its memory peak fits beside the others on %s's %s.", pct(s.summary.GPU.P95), m.Host, g.GPUModel)
			c.riskNotes = []string{"time-slicing isolates neither memory nor faults: a runaway notebook can starve its neighbours", "see 'gpufinops sharing plan -o yaml' for the GPU Operator configuration"}
		}
		out[s] = c
	}
	return out
}
