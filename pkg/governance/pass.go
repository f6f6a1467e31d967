package governance

import (
	"strings"

	"github.com/gpufinops/gpufinops/pkg/fleet"
)

// keySet is the tag keys a report reads, looked up on an item all at once:
// each as lookup finds it, in one walk over the item's tags.
type keySet struct {
	// keys are the spellings looked up, folds their distinct folded forms,
	// and of[i] the index in folds of keys[i].
	keys, folds []string
	of          []int
	// best and bestValue are lookupAll's buffers: the least key of each
	// folded form found on the item and its value, "" where none is.
	best, bestValue []string
	found           []bool
}

// add adds key, once per spelling, and returns its index.
func (ks *keySet) add(key string) int {
	for i, k := range ks.keys {
		if k == key {
			return i
		}
	}
	f := fold(key)
	j := len(ks.folds)
	for i, g := range ks.folds {
		if g == f {
			j = i
			break
		}
	}
	if j == len(ks.folds) {
		ks.folds = append(ks.folds, f)
		ks.best, ks.bestValue, ks.found = append(ks.best, ""), append(ks.bestValue, ""), append(ks.found, false)
	}
	ks.keys, ks.of = append(ks.keys, key), append(ks.of, j)
	return len(ks.keys) - 1
}

// lookupAll sets out[i] to lookup(tags, ks.keys[i]) for every key.
func (ks *keySet) lookupAll(tags map[string]string, out []tag) {
	clear(ks.found)
	for i := range out {
		out[i] = tag{}
	}
	for k, v := range tags {
		f := fold(k)
		for j, g := range ks.folds {
			if g != f {
				continue
			}
			if !ks.found[j] || k < ks.best[j] {
				ks.best[j], ks.bestValue[j], ks.found[j] = k, v, true
			}
			for i, key := range ks.keys {
				if ks.of[i] == j && k == key {
					out[i] = tag{key: key, value: v, found: true, exact: true}
				}
			}
			break
		}
	}
	for i := range out {
		if j := ks.of[i]; !out[i].found && ks.found[j] {
			out[i] = tag{key: ks.best[j], value: ks.bestValue[j], found: true}
		}
	}
}

// allowedSet is a tag's allowed values with their folded forms.
type allowedSet struct {
	values, folded []string
}

func newAllowedSet(values []string) allowedSet {
	a := allowedSet{values: values}
	if values != nil {
		a.folded = make([]string, len(values))
		for i, v := range values {
			a.folded[i] = fold(v)
		}
	}
	return a
}

// pass reads what every part of the report needs of an item once: its
// costs in cents, the tags the audit, the allocation and the metrics look
// up, and its workload class.
type pass struct {
	p    Policy
	keys keySet
	// nAudit is the number of the audit's keys (auditMemo.keys), first in
	// keys; team … run are the indices of the other keys read.
	nAudit                                   int
	team, project, env, workload, model, run int
	// allowed holds the allowed values of the keys at team, project, env
	// and workload.
	teamAllowed, projectAllowed, envAllowed, workloadAllowed allowedSet
	tags                                                     []tag
}

// view is one item as the parts of the report read it. Its tags are the
// pass's buffer, valid until the next item.
type view struct {
	cur, opt cents
	tags     []tag
	class    string
}

func newPass(p Policy, auditKeys []string) *pass {
	ps := &pass{p: p}
	for _, k := range auditKeys {
		ps.keys.add(k)
	}
	ps.nAudit = len(auditKeys)
	ps.team, ps.project, ps.env = ps.keys.add(TagTeam), ps.keys.add(TagProject), ps.keys.add(TagEnvironment)
	ps.workload, ps.model, ps.run = ps.keys.add(TagWorkloadType), ps.keys.add(TagModelName), ps.keys.add(TagTrainingRun)
	ps.teamAllowed, ps.projectAllowed = newAllowedSet(p.allowed(TagTeam)), newAllowedSet(p.allowed(TagProject))
	ps.envAllowed, ps.workloadAllowed = newAllowedSet(p.allowed(TagEnvironment)), newAllowedSet(p.allowed(TagWorkloadType))
	ps.tags = make([]tag, len(ps.keys.keys))
	return ps
}

// read views one item.
func (ps *pass) read(it *Item) view {
	v := view{cur: noCents, opt: noCents, tags: ps.tags}
	if it.Priced {
		v.cur, v.opt = centsOf(it.MonthlyCost), centsOf(it.OptimizedCost)
	}
	ps.keys.lookupAll(it.Tags, ps.tags)
	v.class = classFrom(ps.tags[ps.workload].value, it.Workload, ps.workloadAllowed)
	return v
}

// attribution is Attribute of the item v views.
func (ps *pass) attribution(v *view) Attribution {
	value := func(i int, allowed allowedSet) string {
		s := strings.TrimSpace(v.tags[i].value)
		if allowed.values != nil {
			if c, _, ok := allowed.canonical(s); ok {
				return c
			}
		}
		return s
	}
	a := Attribution{Team: value(ps.team, ps.teamAllowed), Project: value(ps.project, ps.projectAllowed), Environment: value(ps.env, ps.envAllowed)}
	if a.WorkloadType = v.class; a.WorkloadType == "" {
		a.WorkloadType = strings.TrimSpace(v.tags[ps.workload].value)
	}
	return a
}

// modelRun are modelOf and runOf of the item v views.
func (ps *pass) modelRun(it *Item, v *view) (model, run string) {
	model, run = strings.TrimSpace(v.tags[ps.model].value), strings.TrimSpace(v.tags[ps.run].value)
	if w := it.Workload; w != nil {
		if m := strings.TrimSpace(w.Model); m != "" {
			model = m
		}
		if r := strings.TrimSpace(w.TrainingRun); r != "" {
			run = r
		}
	}
	return model, run
}

// workloadClasses are the WorkloadType values a tag is matched against when
// the policy does not restrict it.
var workloadClasses = newAllowedSet([]string{WorkloadTraining, WorkloadInference, WorkloadFineTuning, WorkloadDevelopment})

// classFrom is classOf of an item with workload w whose WorkloadType tag
// has value tagValue, under the WorkloadType values allowed.
func classFrom(tagValue string, w *fleet.Workload, allowed allowedSet) string {
	value := strings.TrimSpace(tagValue)
	if value != "" && allowed.values != nil {
		if c, _, ok := allowed.canonical(value); ok {
			return c
		}
	}
	if w != nil {
		if c := WorkloadClass(w.Type); c != "" {
			return c
		}
	}
	if value != "" && allowed.values == nil {
		if c, _, ok := workloadClasses.canonical(value); ok {
			return c
		}
		return value
	}
	return ""
}
