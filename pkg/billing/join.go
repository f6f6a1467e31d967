package billing

import (
	"slices"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pricing"
	"github.com/gpufinops/gpufinops/providers"
)

// CatalogGPUs is an Options.GPUs that asks the catalog, then, for a type
// the catalog lacks, the cloud's registered GPU families
// (providers.RegInfo.Accelerated): such a type has GPUs, their count
// unknown (zero).
func CatalogGPUs(cat pricing.Catalog) func(fleet.Provider, string) (float64, bool) {
	return func(p fleet.Provider, name string) (float64, bool) {
		if t, ok := cat.InstanceType(p, name); ok && t.GPUCount > 0 {
			return t.GPUCount, true
		}
		if ri, ok := providers.Find(p); ok && ri.Accelerated != nil && ri.Accelerated(name) {
			return 0, true
		}
		return 0, false
	}
}

// Keys are the join keys of a fleet's instances, for Options.Keep.
func Keys(instances []fleet.Instance) map[string]bool {
	m := make(map[string]bool, len(instances))
	for i := range instances {
		in := &instances[i]
		m[Key(in.Provider, in.ID)] = true
		if in.IsManaged() {
			for _, a := range ancestors(NormalizeID(in.Provider, in.ID)) {
				m[Key(in.Provider, a)] = true
			}
		}
	}
	return m
}

// Gap is GPU spend in the bill that no fleet instance matched, per
// provider, account and region: accounts or regions not scanned.
type Gap struct {
	Provider      fleet.Provider  `json:"provider"`
	Account       string          `json:"account,omitempty"`
	Region        string          `json:"region,omitempty"`
	Resources     int             `json:"resources"`
	EffectiveCost decimal.Decimal `json:"effectiveCost"`
	Hours         decimal.Decimal `json:"hours"`
}

// Joined is a bill joined to a fleet.
type Joined struct {
	// ByInstance maps a fleet instance id to its resource in the bill.
	ByInstance map[string]*Resource
	// Matched is the bill's GPU EffectiveCost of the matched resources.
	Matched decimal.Decimal
	// Unmatched is the GPU spend of resources no instance matched.
	Unmatched    []Gap
	UnmatchedSum decimal.Decimal
}

// Join matches the bill's resources to instances by normalised id; an
// instance whose id is a short name (a GCP or Azure VM name) matches a
// resource of the same provider whose id ends in it, when only one does.
func (s *Summary) Join(instances []fleet.Instance) Joined {
	j := Joined{ByInstance: map[string]*Resource{}}
	byKey := make(map[string]*Resource, len(s.Resources))
	byShort := map[string][]*Resource{}
	for i := range s.Resources {
		r := &s.Resources[i]
		byKey[r.Key] = r
		sk := string(r.Provider) + "|" + shortName(NormalizeID(r.Provider, r.ResourceID))
		byShort[sk] = append(byShort[sk], r)
	}
	// A managed replica set (a SageMaker production variant, a Vertex AI
	// deployed model, an Azure ML deployment) is billed under the endpoint
	// its id lies under; it takes that row when it is the endpoint's only
	// scanned child and no instance has the endpoint's own id.
	parents := make([]*Resource, len(instances))
	children := map[*Resource]int{}
	for i := range instances {
		in := &instances[i]
		if byKey[Key(in.Provider, in.ID)] != nil {
			continue
		}
		if r := parentResource(byKey, in.Provider, NormalizeID(in.Provider, in.ID)); r != nil {
			parents[i] = r
			children[r]++
		}
	}
	used := map[*Resource]bool{}
	for i := range instances {
		in := &instances[i]
		r := byKey[Key(in.Provider, in.ID)]
		if r == nil && !strings.Contains(in.ID, "/") {
			if c := byShort[string(in.Provider)+"|"+NormalizeID(in.Provider, in.ID)]; len(c) == 1 {
				r = c[0]
			}
		}
		if r == nil && parents[i] != nil && children[parents[i]] == 1 {
			r = parents[i]
		}
		if r == nil || used[r] {
			continue
		}
		used[r] = true
		j.ByInstance[in.ID] = r
		j.Matched = j.Matched.Add(r.EffectiveCost)
	}
	type scope struct {
		p               fleet.Provider
		account, region string
	}
	gaps := map[scope]*Gap{}
	for i := range s.Resources {
		r := &s.Resources[i]
		if used[r] {
			continue
		}
		k := scope{r.Provider, r.Account, r.Region}
		g := gaps[k]
		if g == nil {
			g = &Gap{Provider: r.Provider, Account: r.Account, Region: r.Region}
			gaps[k] = g
		}
		g.Resources++
		g.EffectiveCost = g.EffectiveCost.Add(r.EffectiveCost)
		g.Hours = g.Hours.Add(r.Hours)
		j.UnmatchedSum = j.UnmatchedSum.Add(r.EffectiveCost)
	}
	for _, g := range gaps {
		j.Unmatched = append(j.Unmatched, *g)
	}
	slices.SortFunc(j.Unmatched, func(a, b Gap) int {
		if c := b.EffectiveCost.Cmp(a.EffectiveCost); c != 0 {
			return c
		}
		return strings.Compare(string(a.Provider)+a.Account+a.Region, string(b.Provider)+b.Account+b.Region)
	})
	return j
}

// parentResource is the bill resource whose id is the nearest ancestor of
// id; nil when none is in the bill.
func parentResource(byKey map[string]*Resource, p fleet.Provider, id string) *Resource {
	for _, a := range ancestors(id) {
		if r := byKey[Key(p, a)]; r != nil {
			return r
		}
	}
	return nil
}

// ancestors are the ids above id, a path of kind/name pairs, nearest first:
// …/endpoints/E/deployedModels/D has …/endpoints/E above it.
func ancestors(id string) []string {
	var out []string
	for {
		i := strings.LastIndexByte(id, '/')
		if i <= 0 {
			return out
		}
		j := strings.LastIndexByte(id[:i], '/')
		if j <= 0 {
			return out
		}
		id = id[:j]
		out = append(out, id)
	}
}
