package recommend

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pkg/protect"
	"github.com/gpufinops/gpufinops/pricing"
)

// Managed AI items (fleet.Instance.Managed: SageMaker, Vertex AI, Azure ML)
// are planned by managedPhase and never by the VM rules: no VM stop,
// schedule, spot move, rightsize to a VM type, GPU sharing or VM commitment
// purchase is ever advised for them (the VM phases leave them out). Each
// kind runs its own chain, in a fixed order, each step priced on what the
// steps before it left, so savings add up and are never counted twice:
//
//   - endpoint: idle (zero requests) → scale-to-zero or delete-endpoint;
//     else fewer replicas; else a smaller type of the same service; else a
//     zero-saving note that low-use deployments of one endpoint can share
//     machines (inference components, multi-model).
//   - notebook, studio-app: idle by the VM idle criteria → stop-notebook;
//     then, where the service's idle shutdown is off or unknown, a
//     zero-saving enable-idle-shutdown.
//   - compute-cluster: no jobs (or idle with full coverage) → minimum nodes 0;
//     a slow scale-down → a zero-saving note.
//   - training-job, processing-job: long on on-demand → managed spot.
//
// Every change names its fleet.ManagedChange and the cloud's command
// (Options.ManagedCommand), goes through the same protection decision as
// the VM rules (pkg/protect) and carries the confidence the VM rules give
// the same data. Missing data never means idle.
func (e *engine) managedPhase(states []*state) {
	for _, s := range states {
		if !s.inst.IsManaged() || !s.advisable() || s.stopped || s.inst.State == fleet.Stopped {
			continue
		}
		for _, step := range managedChains[s.inst.Managed.Kind] {
			if s.stopped && !step.afterStop {
				continue
			}
			if c := step.rule(e, s); c != nil {
				e.record(s, c)
			}
		}
	}
	e.managedShareNote(states)
	e.managedCommitmentNote(states)
}

// managedShareNote says, once per endpoint, that its deployments each left
// at low GPU use by the rules above (no change advised, the busiest GPU's
// p95 below policy.managed.target_gpu_percent) could share machines
// (SageMaker inference components, one Vertex AI deployment resource pool,
// one Azure ML deployment serving several models): a note with no saving,
// as how many models fit one machine is not in the data.
func (e *engine) managedShareNote(states []*state) {
	type key struct {
		provider               fleet.Provider
		account, region, space string
		service                fleet.ManagedService
		endpoint               string
	}
	groups := map[key][]*state{}
	var order []key
	for _, s := range states {
		m := s.inst.Managed
		if m == nil || m.Kind != fleet.KindEndpoint || m.Endpoint == "" || m.InferenceComponents > 1 || !s.advisable() || s.last != "" ||
			s.summary == nil || s.summary.GPU == nil || s.summary.GPU.P95 >= e.policy.Managed.TargetGPUPercent {
			continue
		}
		k := key{s.inst.Provider, s.inst.Account, s.inst.Region, m.Workspace, m.Service, m.Endpoint}
		if groups[k] == nil {
			order = append(order, k)
		}
		groups[k] = append(groups[k], s)
	}
	for _, k := range order {
		g := groups[k]
		if len(g) < 2 {
			continue
		}
		names := make([]string, len(g))
		for i, s := range g {
			names[i] = cmp.Or(s.inst.Managed.Deployment, s.inst.Name, s.inst.ID)
		}
		e.warn(g[0].inst.ID, WarnManaged, "endpoint %s: deployments %s each run below %s %% GPU (p95): host their models on shared machines (SageMaker inference components, one Vertex AI deployment resource pool, one Azure ML deployment with several models); no saving is computed",
			k.endpoint, strings.Join(names, ", "), pct(e.policy.Managed.TargetGPUPercent))
	}
}

// managedStep is one rule of a kind's chain; afterStop runs it on an item an
// earlier step stopped.
type managedStep struct {
	rule      rule
	afterStop bool
}

var managedChains = map[fleet.ManagedKind][]managedStep{
	fleet.KindEndpoint:       {{rule: endpointIdleRule}, {rule: endpointSizeRule}},
	fleet.KindNotebook:       {{rule: notebookIdleRule}, {rule: idleShutdownRule, afterStop: true}},
	fleet.KindStudioApp:      {{rule: notebookIdleRule}, {rule: idleShutdownRule, afterStop: true}},
	fleet.KindComputeCluster: {{rule: clusterMinRule}, {rule: clusterScaleDownRule, afterStop: true}, {rule: managedSpotRule}},
	fleet.KindTrainingJob:    {{rule: managedSpotRule}},
	fleet.KindProcessingJob:  {{rule: managedSpotRule}},
}

// managedRef names a managed item for the report; nil for a VM.
func managedRef(in *fleet.Instance) *ManagedRef {
	m := in.Managed
	if m == nil {
		return nil
	}
	name := in.Name
	if name == "" && m.Endpoint != "" {
		name = strings.Trim(m.Endpoint+"/"+m.Deployment, "/")
	}
	return &ManagedRef{Service: m.Service, Kind: m.Kind, Name: name, Replicas: m.CurrentReplicas()}
}

// changeWords says a managed change in a few words; from is the replica
// count before a set-replicas or set-min-replicas (0 when unknown).
func changeWords(mc fleet.ManagedChange, from int) string {
	switch mc.Action {
	case fleet.ActionDeleteEndpoint:
		return "delete endpoint"
	case fleet.ActionScaleToZero:
		return "scale to zero"
	case fleet.ActionSetReplicas:
		if from > 0 {
			return fmt.Sprintf("%d → %d replicas", from, mc.Replicas)
		}
		return fmt.Sprintf("%d replicas", mc.Replicas)
	case fleet.ActionSetMinReplicas:
		if from > 0 {
			return fmt.Sprintf("min nodes %d → %d", from, mc.Replicas)
		}
		return fmt.Sprintf("min nodes %d", mc.Replicas)
	case fleet.ActionChangeInstanceType:
		return "move to " + mc.InstanceType
	case fleet.ActionStopNotebook:
		return "stop notebook"
	case fleet.ActionIdleShutdown:
		return fmt.Sprintf("idle shutdown %s min", num(mc.IdleShutdownMinutes))
	case fleet.ActionManagedSpot:
		return "managed spot"
	}
	return string(mc.Action)
}

// perReplicaHours are the monthly hours one replica bills.
func perReplicaHours(s *state) float64 {
	n := s.inst.ReplicaCount()
	if n <= 0 {
		return 0
	}
	return s.hours / n
}

// managedGuard is guard for a managed item: the tags' protection (and,
// with evidence, the metrics'), except that an endpoint is never protected
// for being inference (zero requests are the evidence) and, with
// productionFloor, production only sets the fewest replicas (see
// endpointSizeRule).
func (e *engine) managedGuard(s *state, c *change, evidence, productionFloor bool) *change {
	if c == nil {
		return nil
	}
	f := e.finding(s, evidence)
	if f != nil && f.Reason == protect.ReasonInference && s.inst.Managed.Kind == fleet.KindEndpoint {
		f = nil
	}
	if f != nil && productionFloor && f.Reason == protect.ReasonProduction {
		f = nil
	}
	return e.holdBack(s, c, f)
}

// production reports whether the item's tags mark it production, whatever
// the policy lets idle-stop do with production machines.
func (e *engine) production(s *state) bool {
	p := e.protection().policy
	p.IncludeProduction = false
	f := protect.Tags(s.inst.Tags, p)
	return f != nil && f.Reason == protect.ReasonProduction
}

// endpointIdleRule scales an endpoint that served no request over a window
// of at least policy.managed.idle_min_hours to zero, where the service can
// (managed.scaleToZero, async), and otherwise deletes it. Requests unknown:
// idle only when the GPU data is complete (coverage 1 over at least
// idle_min_hours) and idle, at low confidence. A busy GPU, a
// short window or no data at all: not idle.
func endpointIdleRule(e *engine, s *state) *change {
	m := s.inst.Managed
	sum := s.summary
	if m.Serverless {
		return nil
	}
	thr := e.policy.Idle.GPUPercent
	gpuKnown := sum != nil && sum.GPU != nil
	if gpuKnown && sum.GPU.P95 >= thr {
		return nil
	}
	win := 0.0
	if sum != nil {
		win = sum.WindowHours
	} else if u := s.inst.Utilization; u != nil && u.Window != nil {
		win = u.Window.Hours()
	}
	conf := e.confidenceFor(s)
	metrics := map[string]float64{"windowHours": round2(win)}
	if sum != nil {
		metrics = utilMetrics(sum)
	}
	var why string
	switch {
	case m.Requests != nil && *m.Requests > 0:
		return nil
	case m.Requests != nil:
		if win < e.policy.Managed.IdleMinHours {
			e.warn(s.inst.ID, WarnManaged, "no requests over %s h, shorter than policy.managed.idle_min_hours %s h: not judged idle", num(win), num(e.policy.Managed.IdleMinHours))
			return nil
		}
		metrics["requests"] = 0
		why = fmt.Sprintf("it served no request over %s", windowText(&fleet.Summary{WindowHours: win}))
		if !gpuKnown {
			// The requests alone decide: confidence from the window only.
			conf = Medium
			if win >= e.policy.MinWindowHours {
				conf = High
			}
		}
	default:
		cov := s.inst.Utilization.EffectiveCoverage(gpuCount(s))
		if !gpuKnown || win < e.policy.Managed.IdleMinHours || cov < 1 {
			if gpuKnown {
				e.warn(s.inst.ID, WarnManaged, "request count unknown and the GPU data (%s h, coverage %s %%) too short or too sparse: not judged idle", num(win), pct(cov*100))
			} else {
				e.warn(s.inst.ID, WarnManaged, "request count and GPU use unknown: not judged idle; collect the endpoint's invocation metric")
			}
			return nil
		}
		conf = Low
		why = fmt.Sprintf("its GPUs were idle over %s (p95 %s %%; its request count is unknown)", windowText(sum), pct(sum.GPU.P95))
	}
	n := m.CurrentReplicas()
	c := &change{
		kind:       KindIdleStop,
		stop:       true,
		confidence: conf,
		risk:       Medium,
		evidence: Evidence{
			Metrics:    metrics,
			Thresholds: map[string]float64{"idleMinHours": e.policy.Managed.IdleMinHours, "idleGpuPercent": thr},
			Prices:     priceList(s.price),
			Formula:    fmt.Sprintf("saving = replica hourly price × %s h a month × %d replicas", num(perReplicaHours(s)), n),
		},
	}
	if m.ScaleToZero || m.Async {
		c.managed = &fleet.ManagedChange{Action: fleet.ActionScaleToZero}
		c.target, c.short = "scaled to zero", "scale to zero"
		c.action = fmt.Sprintf("Let it scale to zero replicas (min 0): %s", why)
		c.rationale = fmt.Sprintf("Its %d replica(s) bill %s h a month whether or not it serves; the service can scale it to zero and back.", n, num(s.hours))
		c.riskNotes = append(c.riskNotes, "cold start: the first request after a quiet spell waits for a replica to start")
	} else {
		c.managed = &fleet.ManagedChange{Action: fleet.ActionDeleteEndpoint}
		c.target, c.short = "deleted", "delete endpoint"
		c.action = fmt.Sprintf("Delete the endpoint deployment: %s", why)
		c.rationale = fmt.Sprintf("Its %d replica(s) bill %s h a month with or without traffic, and it cannot scale to zero.", n, num(s.hours))
		c.riskNotes = append(c.riskNotes, "its callers lose it: to get it back, redeploy the same model and configuration (keep them before deleting)")
	}
	if !gpuKnown {
		c.evidence.Notes = append(c.evidence.Notes, "no GPU data: judged on its request count alone")
	}
	return e.managedGuard(s, c, false, false)
}

// endpointSizeRule serves an endpoint's load on fewer replicas, else on a
// smaller type of its service, where the busiest GPU's p95 is below
// policy.managed.target_gpu_percent. Replicas: ceil(current × p95 ÷
// target), at least 1 and, tagged production, at least
// policy.managed.production_min_replicas.
func endpointSizeRule(e *engine, s *state) *change {
	m := s.inst.Managed
	sum := s.summary
	target := e.policy.Managed.TargetGPUPercent
	if m.Serverless || sum == nil || sum.GPU == nil || sum.GPU.P95 >= target || m.CurrentReplicas() < 1 {
		return nil
	}
	if s.inst.Utilization.EffectiveCoverage(gpuCount(s)) < e.policy.Idle.MinCoverage {
		return nil // too little data to size on
	}
	if c := e.fewerReplicas(s, target); c != nil {
		return c
	}
	return e.smallerManagedType(s, target)
}

func (e *engine) fewerReplicas(s *state, target float64) *change {
	m := s.inst.Managed
	sum := s.summary
	cur := m.CurrentReplicas()
	need := max(1, int(math.Ceil(float64(cur)*sum.GPU.P95/target-1e-9)))
	floor := 1
	prod := e.production(s)
	if prod {
		floor = e.policy.Managed.ProductionMinReplicas
	}
	want := max(need, floor)
	if want >= cur {
		return nil
	}
	hours := perReplicaHours(s) * float64(want)
	c := &change{
		kind:       KindRightsize,
		target:     replicasText(want),
		short:      fmt.Sprintf("%d → %d replicas", cur, want),
		price:      s.price,
		hours:      hours,
		lifecycle:  s.lifecycle,
		confidence: e.confidenceFor(s),
		risk:       Medium,
		managed:    &fleet.ManagedChange{Action: fleet.ActionSetReplicas, Replicas: want},
		action: fmt.Sprintf("Serve it on %s instead of %d: the busiest GPU's p95 was %s %% over %s (target %s %%)",
			replicasText(want), cur, pct(sum.GPU.P95), windowText(sum), pct(target)),
		rationale: fmt.Sprintf("%d replicas at p95 %s %% do the work of ceil(%d × %s ÷ %s) = %d at the target.",
			cur, pct(sum.GPU.P95), cur, pct(sum.GPU.P95), pct(target), need),
		riskNotes: []string{"traffic peaks above the window's need more replicas: keep autoscaling on (max replicas) and watch latency"},
		evidence: Evidence{
			Metrics:    mergeMetrics(utilMetrics(sum), map[string]float64{"replicas": float64(cur), "replicasNeeded": float64(need)}),
			Thresholds: map[string]float64{"targetGpuPercent": target, "minReplicas": float64(floor)},
			Prices:     priceList(s.price),
			Formula:    fmt.Sprintf("saving = %d removed replicas × replica hourly price × %s h a month", cur-want, num(perReplicaHours(s))),
		},
	}
	if prod && need < floor {
		c.evidence.Notes = append(c.evidence.Notes, fmt.Sprintf("tagged production: it keeps at least %d replicas (policy.managed.production_min_replicas; Microsoft recommends at least 3 in production)", floor))
	}
	if m.MinReplicas() != nil && *m.MinReplicas() > want {
		c.action += fmt.Sprintf("; lower its autoscaling minimum from %d to %d too, or the service scales it back", *m.MinReplicas(), want)
	}
	return e.managedGuard(s, c, false, true)
}

// smallerManagedType moves a one-replica (or floor-bound) endpoint to a
// cheaper type of the same service and GPU model with fewer GPUs that still
// holds the p95 GPU use under the target and the p95 GPU memory (plus
// policy.rightsize.headroom_percent).
func (e *engine) smallerManagedType(s *state, target float64) *change {
	m := s.inst.Managed
	sum := s.summary
	in := s.inst
	model := cmp.Or(in.GPU.Model, s.typ.GPUModel)
	count := gpuCount(s)
	perGPU := cmp.Or(in.GPU.MemoryGiB, s.typ.GPUMemoryGiB)
	if count <= 1 || perGPU <= 0 || model == "" || sum.GPUMemory == nil {
		return nil
	}
	headroom := 1 + e.policy.Rightsize.HeadroomPercent/100
	needMem := sum.GPUMemory.P95 / 100 * perGPU * count * headroom
	var best *pricing.Offer
	for _, o := range e.cat.Offers(pricing.Query{Provider: in.Provider, Region: in.Region, Service: m.Service, GPUModel: model}) {
		if o.OnDemand == nil || o.Type.GPUCount <= 0 || o.Type.GPUCount >= count || strings.EqualFold(o.Type.Name, in.PriceKey()) {
			continue
		}
		if o.Type.GPUCount*o.Type.GPUMemoryGiB < needMem || sum.GPU.P95*count/o.Type.GPUCount*headroom > target {
			continue
		}
		if best == nil || o.OnDemand.Hourly.LessThan(best.OnDemand.Hourly) {
			b := o
			best = &b
		}
	}
	if best == nil || !best.OnDemand.Hourly.LessThan(s.price.Hourly) {
		return nil
	}
	saving := s.price.Hourly.Sub(best.OnDemand.Hourly).Div(s.price.Hourly).InexactFloat64() * 100
	if saving < e.policy.Rightsize.MinSavingsPercent {
		return nil
	}
	name := serviceTypeName(best.Type.Name)
	typ := best.Type
	c := &change{
		kind:       KindRightsize,
		target:     name,
		short:      "move to " + name,
		typ:        &typ,
		price:      *best.OnDemand,
		hours:      s.hours,
		lifecycle:  s.lifecycle,
		confidence: e.confidenceFor(s),
		risk:       Medium,
		managed:    &fleet.ManagedChange{Action: fleet.ActionChangeInstanceType, InstanceType: name},
		action: fmt.Sprintf("Redeploy it on %s (%s × %s) instead of %s (%s × %s): the busiest GPU's p95 was %s %%, GPU memory p95 %s %%",
			name, num(best.Type.GPUCount), model, in.InstanceType, num(count), model, pct(sum.GPU.P95), pct(sum.GPUMemory.P95)),
		rationale: fmt.Sprintf("Its load fits %s GPU(s) under the target %s %% with %s %% headroom, and %s GiB of GPU memory are needed of %s.",
			num(best.Type.GPUCount), pct(target), pct(e.policy.Rightsize.HeadroomPercent), num(needMem), num(best.Type.GPUCount*best.Type.GPUMemoryGiB)),
		riskNotes: []string{"a redeployment: test the model on the new type (tensor parallelism, batch size) before switching traffic"},
		evidence: Evidence{
			Metrics:    mergeMetrics(utilMetrics(sum), map[string]float64{"gpuMemoryNeededGiB": round2(needMem)}),
			Thresholds: map[string]float64{"targetGpuPercent": target, "headroomPercent": e.policy.Rightsize.HeadroomPercent, "minSavingsPercent": e.policy.Rightsize.MinSavingsPercent},
			Prices:     priceList(s.price, *best.OnDemand),
			Formula:    "saving = (current − target replica hourly price) × monthly replica hours",
		},
	}
	return e.managedGuard(s, c, false, true)
}

// serviceTypeName is the machine type a price key names: vertex-ai/
// prediction/n1-standard-8+1xNVIDIA_TESLA_T4 → n1-standard-8.
func serviceTypeName(key string) string {
	if i := strings.LastIndexByte(key, '/'); i >= 0 {
		key = key[i+1:]
	}
	key, _, _ = strings.Cut(key, "+")
	return key
}

// notebookIdleRule stops a notebook (or deletes a Studio app) whose GPUs
// were idle by the VM idle rule's criteria: the busiest GPU's p95 (and every
// sample) below policy.idle.gpu_percent, coverage at least
// policy.idle.min_coverage, every GPU reporting, and the protection
// decision's evidence (GPU memory held, a busy CPU) as idle-stop applies it.
// No GPU data: no idle claim.
func notebookIdleRule(e *engine, s *state) *change {
	sum := s.summary
	if sum == nil || sum.GPU == nil {
		return nil
	}
	thr := e.policy.Idle.GPUPercent
	if sum.GPU.P95 >= thr {
		return nil
	}
	for _, smp := range s.inst.Utilization.Samples {
		if v, ok := smp.GPU.Max(); ok && v >= thr {
			return nil
		}
	}
	if cov := s.inst.Utilization.EffectiveCoverage(gpuCount(s)); cov < e.policy.Idle.MinCoverage {
		e.warn(s.inst.ID, WarnLowCoverage, "utilization covers %s %% of the window's GPU-hours: not judged idle", pct(cov*100))
		return nil
	}
	app := s.inst.Managed.Kind == fleet.KindStudioApp
	c := &change{
		kind:       KindIdleStop,
		stop:       true,
		target:     "stopped",
		short:      "stop",
		confidence: e.confidenceFor(s),
		risk:       Low,
		managed:    &fleet.ManagedChange{Action: fleet.ActionStopNotebook},
		action:     fmt.Sprintf("Stop the notebook: the busiest GPU's p95 was %s %% over %s (idle below %s %%)", pct(sum.GPU.P95), windowText(sum), pct(thr)),
		rationale: fmt.Sprintf("Its GPUs were idle for the whole window (p95 %s %%, max %s %%) while it was billed %s h a month.",
			pct(sum.GPU.P95), pct(sum.GPU.Max), num(s.hours)),
		evidence: Evidence{
			Metrics:    utilMetrics(sum),
			Thresholds: map[string]float64{"idleGpuPercent": thr, "minCoverage": e.policy.Idle.MinCoverage},
			Prices:     priceList(s.price),
			Formula:    "saving = hourly price × monthly hours; a stopped notebook bills no compute (its storage still does)",
		},
	}
	if app {
		c.short = "delete app"
		c.target = "deleted"
		c.action = fmt.Sprintf("Delete the Studio app (apps stop by deletion; the space keeps its storage): the busiest GPU's p95 was %s %% over %s (idle below %s %%)", pct(sum.GPU.P95), windowText(sum), pct(thr))
	}
	if sum.GPU.Max >= thr {
		c.risk = Medium
		c.riskNotes = append(c.riskNotes, fmt.Sprintf("the GPU peaked at %s %%: ask its user before stopping", pct(sum.GPU.Max)))
	}
	if ev := protect.Measure(s.inst.Utilization, gpuCount(s)); s.inst.Utilization.Coverage == nil && ev.HasGPU && ev.MaxGPUs < ev.WantGPUs {
		e.warn(s.inst.ID, WarnPartialGPUs, "at most %d of its %d GPUs reported: a GPU without data is not idle, so it is not judged idle", ev.MaxGPUs, ev.WantGPUs)
		return nil
	}
	return e.managedGuard(s, c, true, false)
}

// idleShutdownRule advises the service's own idle shutdown
// (policy.managed.idle_shutdown_minutes) for a notebook whose setting is
// off or unknown: with no saving of its own when it was found idle (the
// stop saves it) or cannot be judged (no GPU data); with the saving of its
// idle stretches when samples show it idle part of the time (idleStretches).
func idleShutdownRule(e *engine, s *state) *change {
	m := s.inst.Managed
	if m.IdleShutdownMinutes != nil && *m.IdleShutdownMinutes > 0 {
		return nil
	}
	noData := s.summary == nil || s.summary.GPU == nil
	if !s.stopped && !noData {
		return e.idleStretchShutdown(s)
	}
	mins := e.policy.Managed.IdleShutdownMinutes
	setting := "unknown"
	if m.IdleShutdownMinutes != nil {
		setting = "off"
	}
	c := &change{
		kind:       KindSchedule,
		keep:       true,
		target:     fmt.Sprintf("idle shutdown %s min", num(mins)),
		short:      fmt.Sprintf("idle shutdown %s min", num(mins)),
		confidence: High,
		risk:       Low,
		managed:    &fleet.ManagedChange{Action: fleet.ActionIdleShutdown, IdleShutdownMinutes: mins},
		action:     fmt.Sprintf("Turn on the service's idle shutdown after %s minutes (now %s), so that it stops itself when left idle", num(mins), setting),
		rationale:  "The service stops an idle notebook itself once its idle shutdown is on; the saving is the stop's, not counted again.",
		evidence: Evidence{
			Thresholds: map[string]float64{"idleShutdownMinutes": mins},
			Formula:    "no saving of its own: it keeps the notebook from running idle again",
		},
	}
	if noData {
		c.rationale = "gpufinops has no GPU metric for it, so it cannot judge it idle: the service's idle shutdown stops it when it is."
		c.evidence.Notes = append(c.evidence.Notes, "no GPU metric: give one (--metrics prometheus with DCGM, or --metrics-file) to let gpufinops judge it idle")
	}
	return c
}

// clusterMinRule lets a compute cluster that ran no job over the window
// (or, jobs unknown, whose GPUs were idle with full coverage) scale to zero
// nodes: minimum nodes 0, saving the minimum's nodes.
func clusterMinRule(e *engine, s *state) *change {
	m := s.inst.Managed
	sum := s.summary
	if m.MinReplicas() == nil || *m.MinReplicas() <= 0 || m.CurrentReplicas() <= 0 {
		return nil
	}
	conf := e.confidenceFor(s)
	var why string
	switch {
	case m.Jobs != nil && *m.Jobs > 0:
		return nil
	case m.Jobs != nil:
		if sum != nil && sum.GPU != nil && sum.GPU.P95 >= e.policy.Idle.GPUPercent {
			return nil
		}
		why = "it ran no job over the window"
		if sum == nil {
			conf = Medium
		} else {
			why = fmt.Sprintf("it ran no job over %s", windowText(sum))
		}
	default:
		if sum == nil || sum.GPU == nil || sum.GPU.P95 >= e.policy.Idle.GPUPercent ||
			s.inst.Utilization.EffectiveCoverage(gpuCount(s)) < 1 || sum.WindowHours < e.policy.Managed.IdleMinHours {
			return nil
		}
		conf = Low
		why = fmt.Sprintf("its nodes' GPUs were idle over %s (job count unknown)", windowText(sum))
	}
	minN := *m.MinReplicas()
	removed := min(minN, m.CurrentReplicas())
	cur := m.CurrentReplicas()
	c := &change{
		kind:       KindIdleStop,
		target:     "min nodes 0",
		short:      fmt.Sprintf("min nodes %d → 0", minN),
		price:      s.price,
		hours:      perReplicaHours(s) * float64(cur-removed),
		lifecycle:  s.lifecycle,
		confidence: conf,
		risk:       Low,
		managed:    &fleet.ManagedChange{Action: fleet.ActionSetMinReplicas, Replicas: 0},
		action:     fmt.Sprintf("Set its minimum nodes from %d to 0: %s", minN, why),
		rationale:  fmt.Sprintf("A minimum of %d keeps %d node(s) billing with no job to run; at 0 the cluster starts nodes when a job comes.", minN, minN),
		riskNotes:  []string{"the first job after a quiet spell waits for nodes to start"},
		evidence: Evidence{
			Metrics:    map[string]float64{"minNodes": float64(minN), "nodes": float64(cur)},
			Thresholds: map[string]float64{"idleGpuPercent": e.policy.Idle.GPUPercent},
			Prices:     priceList(s.price),
			Formula:    fmt.Sprintf("saving = %d minimum node(s) × node hourly price × %s h a month", removed, num(perReplicaHours(s))),
		},
	}
	if sum != nil {
		c.evidence.Metrics = mergeMetrics(utilMetrics(sum), c.evidence.Metrics)
	}
	if m.Jobs != nil {
		c.evidence.Metrics["jobs"] = *m.Jobs
	}
	return e.managedGuard(s, c, false, false)
}

// clusterScaleDownRule notes a cluster whose idle nodes wait longer than
// policy.managed.cluster_scale_down_minutes to scale down (min 0, or min
// just set to 0): no saving is computed for the wait.
func clusterScaleDownRule(e *engine, s *state) *change {
	m := s.inst.Managed
	limit := e.policy.Managed.ClusterScaleDownMinutes
	// Min 0 already, or just set to 0 by clusterMinRule (not held back).
	minZero := m.MinReplicas() == nil || *m.MinReplicas() == 0 || s.hours < s.hours0
	if !minZero || m.IdleShutdownMinutes == nil || *m.IdleShutdownMinutes <= limit {
		return nil
	}
	return &change{
		kind:       KindSchedule,
		keep:       true,
		target:     fmt.Sprintf("scale down after %s min", num(limit)),
		short:      fmt.Sprintf("scale-down %s → %s min", num(*m.IdleShutdownMinutes), num(limit)),
		confidence: Medium,
		risk:       Low,
		managed:    &fleet.ManagedChange{Action: fleet.ActionIdleShutdown, IdleShutdownMinutes: limit},
		action:     fmt.Sprintf("Scale idle nodes down after %s minutes instead of %s", num(limit), num(*m.IdleShutdownMinutes)),
		rationale:  "Each node bills for the minutes it waits idle after its last job; no saving is computed for them (the wait per job is not in the data).",
		evidence: Evidence{
			Metrics:    map[string]float64{"scaleDownMinutes": *m.IdleShutdownMinutes},
			Thresholds: map[string]float64{"clusterScaleDownMinutes": limit},
			Formula:    "no saving computed",
		},
	}
}

// managedSpotRule advises the service's managed spot (SageMaker managed spot
// training, Vertex AI SPOT scheduling, Azure ML low-priority nodes) for a
// job running on on-demand capacity for longer than
// policy.managed.job_max_hours, or a cluster that runs jobs of a workload
// policy.spot.workloads allows. Saving = cost × the catalog's spot discount
// for the type; no spot data → the advice without a saving.
func managedSpotRule(e *engine, s *state) *change {
	in := s.inst
	m := in.Managed
	if s.lifecycle != fleet.OnDemand && s.lifecycle != "" {
		return nil
	}
	if m.Service == fleet.AzureML && m.Kind != fleet.KindComputeCluster {
		return nil // Azure ML low-priority is for clusters only
	}
	ran := 0.0
	if m.Kind == fleet.KindComputeCluster {
		if m.Jobs == nil || *m.Jobs <= 0 || in.Workload == nil || !spotWorkload(e, in.Workload.Type) {
			return nil
		}
	} else {
		if in.LaunchTime == nil || e.heldNow.IsZero() {
			return nil
		}
		ran = e.heldNow.Sub(*in.LaunchTime).Hours()
		if ran < e.policy.Managed.JobMaxHours {
			return nil
		}
	}
	c := &change{
		kind:       KindSpot,
		target:     "managed spot",
		short:      "managed spot",
		confidence: Medium,
		risk:       Medium,
		managed:    &fleet.ManagedChange{Action: fleet.ActionManagedSpot},
		evidence: Evidence{
			Thresholds: map[string]float64{"jobMaxHours": e.policy.Managed.JobMaxHours},
			Prices:     priceList(s.price),
		},
	}
	if ran > 0 {
		c.evidence.Metrics = map[string]float64{"runHours": round2(ran)}
		c.action = fmt.Sprintf("Run its next runs on %s's managed spot capacity: it has run %s h on on-demand (over %s h)", m.Service, num(ran), num(e.policy.Managed.JobMaxHours))
	} else {
		c.action = fmt.Sprintf("Run its jobs on low-priority nodes: it ran %s job(s) of a %s workload on dedicated nodes", num(*m.Jobs), in.Workload.Type)
	}
	c.rationale = "Interruptible jobs that checkpoint need not pay the on-demand price; the service restarts them from the last checkpoint."
	adv, ok := e.cat.SpotAdvice(in.Provider, in.Region, in.PriceKey())
	saving := float64(adv.SavingsPercent)
	if !ok || !(saving > 0 && saving < 100) {
		c.keep = true
		c.evidence.Formula = "no saving computed: the catalog has no spot discount for " + in.PriceKey()
		c.evidence.Notes = append(c.evidence.Notes, "no spot data for "+in.PriceKey()+" in "+in.Region+": the advice carries no saving")
	} else {
		factor := decimal.NewFromFloat(1 - saving/100)
		p := s.price
		p.Hourly = s.price.Hourly.Mul(factor).Round(6)
		p.Option = pricing.Option(fleet.Spot)
		p.Source = fmt.Sprintf("on-demand × (1 − %s %% spot saving, %s)", pct(saving), adv.Source)
		p.AsOf = adv.AsOf
		c.price, c.hours, c.lifecycle = p, s.hours, fleet.Spot
		c.evidence.Metrics = mergeMetrics(c.evidence.Metrics, map[string]float64{"spotSavingsPercent": saving})
		c.evidence.Prices = priceList(s.price, p)
		c.evidence.Formula = "saving = current cost × the catalog's spot saving for the type"
	}
	var advice *pricing.SpotAdvice
	if ok {
		advice = &adv
	}
	cp := planCheckpoints(e.policy.Spot, in.Workload, advice)
	c.action += fmt.Sprintf("; checkpoint every %s min", num(math.Round(cp.intervalMinutes)))
	c.evidence.Metrics = mergeMetrics(c.evidence.Metrics, map[string]float64{
		"checkpointIntervalMinutes": round2(cp.intervalMinutes), "checkpointWriteMinutes": round2(cp.writeMinutes), "expectedOverheadPercent": round2(cp.overhead * 100)})
	c.evidence.Notes = append(c.evidence.Notes, "checkpoint interval by Young/Daly √(2 × write time × mean time between interruptions); "+cp.basis)
	switch w := in.Workload; {
	case w == nil || w.Checkpoints == nil:
		c.riskNotes = append(c.riskNotes, "spot capacity can be reclaimed at short notice: the job must checkpoint and resume (SageMaker checkpoint_s3_uri, a Cloud Storage or datastore path); the fleet does not say whether it does")
	case !*w.Checkpoints:
		c.risk = High
		c.riskNotes = append(c.riskNotes, "the job does not checkpoint: an interruption restarts it from the start; add checkpointing before moving to spot")
	default:
		c.riskNotes = append(c.riskNotes, "keep checkpointing on; an interruption costs the work since the last checkpoint; set a max wait time above the run time")
	}
	// Not a stop: protection does not hold it back, as with a VM's spot move.
	return c
}

func spotWorkload(e *engine, w fleet.WorkloadType) bool {
	for _, v := range e.policy.Spot.Workloads {
		if v == w {
			return true
		}
	}
	return false
}

// managedCommitmentNote says once that no commitment is bought for
// SageMaker items: only SageMaker Savings Plans cover them, and either the
// catalog has no rate for them (offline it has none) or the purchase advice
// is not computed for them; no rate is ever invented.
func (e *engine) managedCommitmentNote(states []*state) {
	for _, s := range states {
		in := s.inst
		if !in.IsManaged() || in.Managed.Service != fleet.SageMaker || !s.priced || in.State == fleet.Stopped {
			continue
		}
		if _, ok := pricing.LookupCommitment(e.cat, pricing.CommitmentQuery{Provider: in.Provider, Region: in.Region, InstanceType: in.PriceKey(),
			Kind: pricing.CommitmentKind(fleet.HeldSageMakerSavingsPlan), Term: e.policy.Commitment.Term}); ok {
			e.warn("", WarnNoCommitmentRate, "SageMaker Savings Plans: a rate is known, but no purchase is advised for SageMaker items yet (EC2 Reserved Instances and EC2 or Compute Savings Plans do not cover them)")
			return
		}
		e.warn("", WarnNoCommitmentRate, "no SageMaker Savings Plans rate in the catalog: no commitment is advised for SageMaker items (EC2 Reserved Instances and EC2 or Compute Savings Plans do not cover them)")
		return
	}
}

func replicasText(n int) string {
	if n == 1 {
		return "1 replica"
	}
	return fmt.Sprintf("%d replicas", n)
}

// idleStretchShutdown prices the service's idle shutdown for a notebook in
// use part of the time: over its utilization samples (full coverage, every
// GPU reporting), each run of samples whose busiest GPU is below
// policy.idle.gpu_percent bills nothing once the shutdown delay has passed.
// saving = cost × (idle-run hours beyond the delay) ÷ sampled hours. A
// sample without a GPU value ends a run: no data is never idle.
func (e *engine) idleStretchShutdown(s *state) *change {
	u := s.inst.Utilization
	if u == nil || len(u.Samples) < 2 || u.EffectiveCoverage(gpuCount(s)) < e.policy.Idle.MinCoverage {
		return nil
	}
	mins := e.policy.Managed.IdleShutdownMinutes
	saved, span := idleStretches(u.Samples, e.policy.Idle.GPUPercent, mins/60)
	if span <= 0 || saved <= 0 {
		return nil
	}
	share := saved / span
	m := s.inst.Managed
	setting := "unknown"
	if m.IdleShutdownMinutes != nil {
		setting = "off"
	}
	c := &change{
		kind:       KindSchedule,
		target:     fmt.Sprintf("idle shutdown %s min", num(mins)),
		short:      fmt.Sprintf("idle shutdown %s min", num(mins)),
		price:      s.price,
		hours:      s.hours * (1 - share),
		confidence: e.confidenceFor(s),
		risk:       Low,
		managed:    &fleet.ManagedChange{Action: fleet.ActionIdleShutdown, IdleShutdownMinutes: mins},
		action: fmt.Sprintf("Turn on the service's idle shutdown after %s minutes (now %s): its GPUs sat idle %s h of %s h sampled beyond that delay",
			num(mins), setting, num(saved), num(span)),
		rationale: fmt.Sprintf("It is used part of the time and left running idle the rest; the service's idle shutdown stops it after %s idle minutes and it is started again when needed.", num(mins)),
		evidence: Evidence{
			Metrics:    map[string]float64{"idleHoursBeyondDelay": round2(saved), "sampledHours": round2(span)},
			Thresholds: map[string]float64{"idleGpuPercent": e.policy.Idle.GPUPercent, "idleShutdownMinutes": mins},
			Prices:     priceList(s.price),
			Formula:    "saving = monthly cost × (hours of idle runs beyond the shutdown delay ÷ sampled hours)",
		},
	}
	c.riskNotes = append(c.riskNotes, "a stopped notebook loses its running kernels; its storage is kept")
	// The tags' protection only: the service judges idleness itself, so
	// the GPU memory held while it works is no evidence against it.
	return e.managedGuard(s, c, false, false)
}

// idleStretches sums the hours of samples' idle runs (busiest GPU below
// thr) beyond the first delay hours of each run, and the hours the samples
// span. Each sample stands for the time to the next one; the last for the
// median step.
func idleStretches(samples []fleet.Sample, thr, delay float64) (saved, span float64) {
	ss := slices.Clone(samples)
	slices.SortFunc(ss, func(a, b fleet.Sample) int { return a.Time.Compare(b.Time) })
	steps := make([]float64, 0, len(ss))
	for i := 1; i < len(ss); i++ {
		steps = append(steps, ss[i].Time.Sub(ss[i-1].Time).Hours())
	}
	med := slices.Clone(steps)
	slices.Sort(med)
	last := med[len(med)/2]
	run := 0.0
	flush := func() {
		if run > delay {
			saved += run - delay
		}
		run = 0
	}
	for i, smp := range ss {
		step := last
		if i < len(steps) {
			step = steps[i]
		}
		if step <= 0 || math.IsNaN(step) {
			continue
		}
		span += step
		if v, ok := smp.GPU.Max(); ok && v < thr {
			run += step
		} else {
			flush()
		}
	}
	flush()
	return saved, span
}
