package recommend

import (
	"fmt"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pkg/money"
	"github.com/gpufinops/gpufinops/pkg/protect"
)

// guards holds the protection decision's policy and the fleet's multi-host
// groups, made on first use.
type guards struct {
	policy protect.Policy
	peers  *protect.Peers
	index  map[*fleet.Instance]int
}

// protection is the policy the engine protects machines with: the options'
// (idle-stop's settings) with analyze's idle threshold.
func (e *engine) protection() *guards {
	if e.guards != nil {
		return e.guards
	}
	p := protect.DefaultPolicy()
	if e.opts.Protection != nil {
		p = *e.opts.Protection
	}
	p.GPUPercent = e.policy.Idle.GPUPercent
	g := &guards{policy: p, index: map[*fleet.Instance]int{}}
	insts := make([]*fleet.Instance, len(e.all))
	for i, s := range e.all {
		insts[i] = s.inst
		g.index[s.inst] = i
	}
	all := e.all
	g.peers = protect.NewPeers(insts, func(i int) bool {
		in := all[i].inst
		if in.State != fleet.Running || in.StoppedAllocated {
			return false
		}
		ev := measure(all[i])
		return !ev.HasGPU || ev.Busy(p) || protect.InUse(ev, "", p) != nil
	}, p)
	e.guards = g
	return g
}

// measure is the evidence of an instance's utilization; where the source
// set utilization.coverage (a source that writes the busiest GPU's value
// alone), that speaks for the GPUs reporting, not the samples' widths.
func measure(s *state) protect.Evidence {
	ev := protect.Measure(s.inst.Utilization, gpuCount(s))
	if u := s.inst.Utilization; u != nil && u.Coverage != nil && ev.HasGPU {
		ev.MaxGPUs = ev.WantGPUs
	}
	return ev
}

func gpuCount(s *state) float64 {
	if s.inst.GPU.Count > 0 {
		return s.inst.GPU.Count
	}
	return s.typ.GPUCount
}

// owner is the controller that owns the instance (protect.Owner).
func (e *engine) owner(s *state) *fleet.ManagedBy {
	return protect.Owner(s.inst, e.protection().policy)
}

// guard holds a stop, schedule or deallocate change back when the machine
// is protected, as idle-stop would protect it: owned machines keep their
// owner advice; otherwise the tags, spot and inference protections, and for
// an idle stop (evidence) also GPU memory held, a busy CPU and working
// multi-host peers. A protected change saves nothing unless
// IncludeProtected, and says what releasing the machine would save.
func (e *engine) guard(s *state, c *change, evidence bool) *change {
	if c == nil || e.owner(s) != nil {
		return c
	}
	return e.holdBack(s, c, e.finding(s, evidence))
}

// finding is the protection that holds a change to s back: the static one
// (tags, owner, spot, inference) and, with evidence, the metrics' and the
// multi-host peers'. Nil when none applies.
func (e *engine) finding(s *state, evidence bool) *protect.Finding {
	g := e.protection()
	f := protect.Static(s.inst, g.policy)
	if f == nil && evidence {
		f = protect.InUse(measure(s), "the utilization window", g.policy)
		if f == nil {
			if i, ok := g.index[s.inst]; ok {
				f = g.peers.Check(i)
			}
		}
	}
	return f
}

// holdBack makes c a protected change when f protects s: it saves nothing
// unless IncludeProtected, and says what releasing the machine would save.
func (e *engine) holdBack(s *state, c *change, f *protect.Finding) *change {
	if c == nil || f == nil {
		return c
	}
	tmp := *s
	tmp.apply(c)
	potential := e.difference(e.costOf(s), e.costOf(&tmp))
	c.protected = &Protected{Reason: string(f.Reason), Message: f.Message, Tag: f.Tag, PotentialMonthlySavings: potential, Counted: e.opts.IncludeProtected}
	c.risk = High
	c.riskNotes = append(c.riskNotes, "protected ("+string(f.Reason)+"): "+f.Message)
	if e.opts.IncludeProtected {
		c.evidence.Notes = append(c.evidence.Notes, "counted in the saving although protected (--include-protected)")
		return c
	}
	why := f.Message
	if f.Tag != "" {
		why = fmt.Sprintf("%s by tag %s", f.Reason, f.Tag)
	}
	c.keep = true
	c.action = fmt.Sprintf("Leave it running: it is protected (%s) — would save $%s a month if released (%s)", why, money.Group(potential, 2), c.short0())
	c.short = "protected: " + string(f.Reason)
	c.evidence.Notes = append(c.evidence.Notes, "not counted in the saving: the machine is protected (analyze --include-protected counts it)")
	return c
}

// short0 is what the change would have done, in a word.
func (c *change) short0() string {
	if c.managed != nil {
		return changeWords(*c.managed, 0)
	}
	switch c.kind {
	case KindSchedule:
		return "a schedule"
	}
	if c.target == "deallocated" {
		return "deallocation"
	}
	return "a stop"
}
