package governance

import (
	"sort"
	"strings"

	"github.com/shopspring/decimal"
)

// Untagged is the bucket of instances that do not say which team, project,
// workload type or environment they belong to.
const Untagged = "(untagged)"

// Allocation splits the fleet's current and optimized monthly cost by team,
// project, workload type, environment and cloud. In every dimension the
// buckets add up to the totals exactly.
type Allocation struct {
	MonthlyCost          Money    `json:"currentMonthlyCost"`
	OptimizedMonthlyCost Money    `json:"optimizedMonthlyCost"`
	ByTeam               []Bucket `json:"byTeam"`
	ByProject            []Bucket `json:"byProject"`
	ByWorkloadType       []Bucket `json:"byWorkloadType"`
	ByEnvironment        []Bucket `json:"byEnvironment"`
	ByProvider           []Bucket `json:"byProvider"`
}

// Bucket is the cost of the instances that share one value of a dimension.
type Bucket struct {
	// Key is the value, e.g. a team's name, or Untagged.
	Key       string `json:"key"`
	Instances int    `json:"instances"`
	// MonthlyCost is their current and OptimizedMonthlyCost their optimized cost.
	MonthlyCost          Money `json:"currentMonthlyCost"`
	OptimizedMonthlyCost Money `json:"optimizedMonthlyCost"`
	// SharePercent is MonthlyCost / the fleet's, × 100, to one decimal.
	SharePercent float64 `json:"sharePercent"`
}

// Allocate splits items' costs. Team and Project are their tags' values,
// grouped case-insensitively; Environment is the tag's value in the policy's
// spelling when allowed, else as written; WorkloadType is the tag's allowed
// value, else the class of the fleet's workload type (WorkloadClass), else the
// tag as written. Unpriced instances count with zero cost.
func Allocate(items []Item, p Policy) Allocation {
	cur, opt := decimal.Zero, decimal.Zero
	for _, it := range items {
		c, o := costs(it)
		cur, opt = cur.Add(c), opt.Add(o)
	}
	a := Allocation{MonthlyCost: NewMoney(cur), OptimizedMonthlyCost: NewMoney(opt)}
	a.ByTeam = split(items, cur, func(it Item) string { return Attribute(it, p).Team })
	a.ByProject = split(items, cur, func(it Item) string { return Attribute(it, p).Project })
	a.ByWorkloadType = split(items, cur, func(it Item) string { return Attribute(it, p).WorkloadType })
	a.ByEnvironment = split(items, cur, func(it Item) string { return Attribute(it, p).Environment })
	a.ByProvider = split(items, cur, func(it Item) string { return string(it.Provider) })
	return a
}

// Attribution is what an instance's cost is allocated to; "" where nothing
// says (the Untagged bucket).
type Attribution struct {
	Team         string `json:"team,omitempty"`
	Project      string `json:"project,omitempty"`
	WorkloadType string `json:"workloadType,omitempty"`
	Environment  string `json:"environment,omitempty"`
}

// Attribute reads an item's attribution as Allocate does: tags matched like
// the audit matches them, allowed values in the policy's spelling, and the
// fleet's workload type where the WorkloadType tag is missing or not allowed.
func Attribute(it Item, p Policy) Attribution {
	tagValue := func(key string) string {
		v := strings.TrimSpace(lookup(it.Tags, key).value)
		if allowed := p.allowed(key); allowed != nil {
			if c, _, ok := canonical(v, allowed); ok {
				return c
			}
		}
		return v
	}
	a := Attribution{Team: tagValue(TagTeam), Project: tagValue(TagProject), Environment: tagValue(TagEnvironment)}
	if a.WorkloadType = p.classOf(it); a.WorkloadType == "" {
		a.WorkloadType = strings.TrimSpace(lookup(it.Tags, TagWorkloadType).value)
	}
	return a
}

// costs are an item's current and optimized monthly cost in cents, so that
// every sum of them is exact; zero when unpriced.
func costs(it Item) (decimal.Decimal, decimal.Decimal) {
	if !it.Priced {
		return decimal.Zero, decimal.Zero
	}
	return it.MonthlyCost.Round(2), it.OptimizedCost.Round(2)
}

// share is part / whole × 100 to one decimal; 0 when whole is 0.
func share(part, whole decimal.Decimal) float64 {
	if whole.IsZero() {
		return 0
	}
	return percent(part, whole)
}

// split groups items by key (case-insensitively, shown in the first spelling
// in sorted order; "" is Untagged) and sorts the buckets costliest first,
// Untagged last.
func split(items []Item, total decimal.Decimal, key func(Item) string) []Bucket {
	type acc struct {
		// first is the group's first spelling in sorted order: its key.
		first    string
		n        int
		cur, opt decimal.Decimal
	}
	groups := map[string]*acc{}
	for _, it := range items {
		k := key(it)
		id := strings.ToLower(k)
		if k == "" {
			k, id = Untagged, "\x00untagged"
		}
		g := groups[id]
		if g == nil {
			g = &acc{first: k}
			groups[id] = g
		}
		g.first = min(g.first, k)
		g.n++
		c, o := costs(it)
		g.cur, g.opt = g.cur.Add(c), g.opt.Add(o)
	}
	out := make([]Bucket, 0, len(groups))
	for _, g := range groups {
		out = append(out, Bucket{
			Key:                  g.first,
			Instances:            g.n,
			MonthlyCost:          NewMoney(g.cur),
			OptimizedMonthlyCost: NewMoney(g.opt),
			SharePercent:         share(g.cur, total),
		})
	}
	sort.Slice(out, func(i, j int) bool {
		ui, uj := out[i].Key == Untagged, out[j].Key == Untagged
		if ui != uj {
			return uj
		}
		if !out[i].MonthlyCost.Equal(out[j].MonthlyCost.Decimal) {
			return out[i].MonthlyCost.GreaterThan(out[j].MonthlyCost.Decimal)
		}
		return out[i].Key < out[j].Key
	})
	return out
}
