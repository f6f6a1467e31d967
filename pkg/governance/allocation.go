package governance

import (
	"slices"
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
	al := newAllocator()
	ps := newPass(p, nil)
	for i := range items {
		v := ps.read(&items[i])
		al.add(&items[i], ps, &v)
	}
	return al.finish()
}

// allocator allocates items one by one for Allocate.
type allocator struct {
	cur, opt sum
	// by are the splits by team, project, workload type, environment and
	// cloud.
	by [5]splitter
}

func newAllocator() *allocator {
	al := &allocator{}
	for i := range al.by {
		al.by[i] = splitter{bySpelling: map[string]*bucketSum{}, byID: map[string]*bucketSum{}}
	}
	return al
}

// add allocates the item v views.
func (al *allocator) add(it *Item, ps *pass, v *view) {
	al.cur.add(v.cur)
	al.opt.add(v.opt)
	a := ps.attribution(v)
	for i, k := range [...]string{a.Team, a.Project, a.WorkloadType, a.Environment, string(it.Provider)} {
		al.by[i].add(k, v.cur, v.opt)
	}
}

func (al *allocator) finish() Allocation {
	cur, opt := al.cur.value(), al.opt.value()
	return Allocation{
		MonthlyCost:          NewMoney(cur),
		OptimizedMonthlyCost: NewMoney(opt),
		ByTeam:               al.by[0].buckets(cur),
		ByProject:            al.by[1].buckets(cur),
		ByWorkloadType:       al.by[2].buckets(cur),
		ByEnvironment:        al.by[3].buckets(cur),
		ByProvider:           al.by[4].buckets(cur),
	}
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

// share is part / whole × 100 to one decimal; 0 when whole is 0.
func share(part, whole decimal.Decimal) float64 {
	if whole.IsZero() {
		return 0
	}
	return percent(part, whole)
}

// splitter groups items by key, case-insensitively, shown in the first
// spelling in sorted order; "" is Untagged.
type splitter struct {
	// bySpelling finds a key's group without lower-casing it each time.
	bySpelling, byID map[string]*bucketSum
	groups           []*bucketSum
}

// bucketSum is a group being summed.
type bucketSum struct {
	// first is the group's first spelling in sorted order: its key.
	first    string
	n        int
	cur, opt sum
}

func (s *splitter) add(k string, cur, opt cents) {
	g := s.bySpelling[k]
	if g == nil {
		key, id := k, strings.ToLower(k)
		if k == "" {
			key, id = Untagged, "\x00untagged"
		}
		if g = s.byID[id]; g == nil {
			g = &bucketSum{first: key}
			s.byID[id] = g
			s.groups = append(s.groups, g)
		}
		g.first = min(g.first, key)
		s.bySpelling[k] = g
	}
	g.n++
	g.cur.add(cur)
	g.opt.add(opt)
}

// buckets are the groups costliest first, Untagged last.
func (s *splitter) buckets(total decimal.Decimal) []Bucket {
	out := make([]Bucket, 0, len(s.groups))
	for _, g := range s.groups {
		cur := g.cur.value()
		out = append(out, Bucket{
			Key:                  g.first,
			Instances:            g.n,
			MonthlyCost:          NewMoney(cur),
			OptimizedMonthlyCost: NewMoney(g.opt.value()),
			SharePercent:         share(cur, total),
		})
	}
	slices.SortFunc(out, func(x, y Bucket) int {
		if ux, uy := x.Key == Untagged, y.Key == Untagged; ux != uy {
			if ux {
				return 1
			}
			return -1
		}
		if c := y.MonthlyCost.Cmp(x.MonthlyCost.Decimal); c != 0 {
			return c
		}
		return strings.Compare(x.Key, y.Key)
	})
	return out
}
