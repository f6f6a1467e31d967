package simkit

import (
	"sort"
	"sync"

	"github.com/gpufinops/gpufinops/pkg/fleet"
)

// Inventory is one cloud's instances of a fleet with their live state, and
// the per-scope views a simulator serves: a list call sees the instances of
// its scope (region, subscription, project) and account. It is safe for
// concurrent use.
type Inventory struct {
	provider  fleet.Provider
	instances []fleet.Instance // in file order

	mu    sync.Mutex
	state map[string]string // instance ID → state name
}

// Live is an instance with its live state.
type Live struct {
	*fleet.Instance
	State string
}

// NewInventory takes the instances of one provider from f, in file order.
// Instances that name no account get defaultAccount. A cloud has no
// workload block: what the file says of the workload travels as tags, the
// way adapters read it (fleet.WorkloadFromTags).
func NewInventory(f *fleet.Fleet, provider fleet.Provider, defaultAccount string) *Inventory {
	v := &Inventory{provider: provider, state: map[string]string{}}
	for _, in := range f.Instances {
		if in.Provider != provider {
			continue
		}
		if in.Account == "" {
			in.Account = defaultAccount
		}
		if extra := fleet.WorkloadTags(in.Workload, in.Tags); len(extra) > 0 {
			tags := make(map[string]string, len(in.Tags)+len(extra))
			for k, val := range in.Tags {
				tags[k] = val
			}
			for k, val := range extra {
				tags[k] = val
			}
			in.Tags = tags
		}
		v.instances = append(v.instances, in)
		v.state[in.ID] = string(in.State)
	}
	return v
}

// Instances returns the instances as the fleet gives them, in file order;
// callers must not change them.
func (v *Inventory) Instances() []fleet.Instance { return v.instances }

// Scopes returns the distinct regions of the instances, sorted.
func (v *Inventory) Scopes() []string {
	seen := map[string]bool{}
	var out []string
	for _, in := range v.instances {
		if !seen[in.Region] {
			seen[in.Region] = true
			out = append(out, in.Region)
		}
	}
	sort.Strings(out)
	return out
}

// InScope returns the instances of one scope (region) and account, in file
// order, with their live state; an empty account matches every account.
func (v *Inventory) InScope(scope, account string) []Live {
	v.mu.Lock()
	states := make([]string, len(v.instances))
	for i, in := range v.instances {
		states[i] = v.state[in.ID]
	}
	v.mu.Unlock()
	var out []Live
	for i := range v.instances {
		in := &v.instances[i]
		if in.Region != scope || (account != "" && in.Account != account) {
			continue
		}
		out = append(out, Live{Instance: in, State: states[i]})
	}
	return out
}

// State returns every instance's live state, in file order.
func (v *Inventory) State() []InstanceState {
	v.mu.Lock()
	defer v.mu.Unlock()
	out := make([]InstanceState, len(v.instances))
	for i, in := range v.instances {
		out[i] = InstanceState{Provider: string(v.provider), ID: in.ID, State: v.state[in.ID]}
	}
	return out
}

// SetState changes an instance's state; false when it does not exist.
func (v *Inventory) SetState(id, state string) (previous string, ok bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	previous, ok = v.state[id]
	if ok {
		v.state[id] = state
	}
	return previous, ok
}

// StateOf returns an instance's live state; "" when it does not exist.
func (v *Inventory) StateOf(id string) string {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.state[id]
}
