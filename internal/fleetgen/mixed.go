package fleetgen

import (
	"errors"
	"fmt"
	"iter"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pricing"
)

// MixedOptions says what Mixed generates: a fleet over several clouds,
// regions and accounts, drawn from the instance types a catalog prices.
type MixedOptions struct {
	// Instances is the fleet's size.
	Instances int
	// Seed makes the fleet reproducible.
	Seed uint64
	// Clouds are the providers drawn from (every cloud when empty).
	Clouds []fleet.Provider
	// Regions are the regions drawn from; a region serves the clouds whose
	// catalog prices it. Empty: RegionCount regions per cloud.
	Regions []string
	// RegionCount is how many regions per cloud are used when Regions is
	// empty: those with the most GPU instance types, then by name (all when 0).
	RegionCount int
	// Accounts is the number of accounts (AWS accounts, Azure subscriptions,
	// GCP projects) per cloud (1 when 0).
	Accounts int
	// Now is the end of the utilization windows (default 2026-11-30T00:00Z).
	Now time.Time
	// ManagedShare is the share (0–1) of instances drawn as managed AI
	// items where the catalog prices one (DefaultManagedShare when 0; none
	// when negative). The other instances are the same whatever the share.
	ManagedShare float64
}

// The largest fleet and the most accounts per cloud Mixed makes: past them a
// request is a mistake (a generated fleet of ten million instances is some
// 23 GB of JSON), and up to them every account keeps its cloud's ID format
// (12-digit AWS account IDs).
const (
	MaxInstances = 10_000_000
	MaxAccounts  = 100_000
)

// Patterns are the usage patterns Mixed draws, one per instance.
var Patterns = []string{"idle", "notebook", "training", "inference", "batch"}

type offerShape struct {
	typ    pricing.InstanceType
	region string
	spot   bool
}

// Mixed returns a fleet that passes fleet.Validate and pricing.Complete with
// cat: every instance has a type and region cat prices on demand. Instances
// are idle, notebook, training, inference or batch machines, multi-GPU nodes
// among them, some spot, some stopped, some without a GPU agent (no
// utilization), tagged with team, environment and owner, some owned by a
// node pool, MIG or Auto Scaling group, and a share of them (ManagedShare,
// default 3 %) items of managed AI services. The same options give the same
// fleet.
func Mixed(o MixedOptions, cat pricing.Catalog) (*fleet.Fleet, error) {
	f, all, err := MixedSeq(o, cat)
	if err != nil {
		return nil, err
	}
	f.Instances = make([]fleet.Instance, 0, o.Instances)
	for in := range all {
		f.Instances = append(f.Instances, in)
	}
	return f, nil
}

// MixedSeq is Mixed an instance at a time, for fleets too large to hold:
// the fleet without its instances, and the sequence of them, the same as
// Mixed's. Each pass over the sequence draws them anew.
func MixedSeq(o MixedOptions, cat pricing.Catalog) (*fleet.Fleet, iter.Seq[fleet.Instance], error) {
	if o.Instances < 0 || o.Instances > MaxInstances {
		return nil, nil, fmt.Errorf("instances %d is out of range: want 0 to %d", o.Instances, MaxInstances)
	}
	if o.Accounts < 0 || o.Accounts > MaxAccounts {
		return nil, nil, fmt.Errorf("accounts %d is out of range: want 0 to %d", o.Accounts, MaxAccounts)
	}
	if o.RegionCount < 0 {
		return nil, nil, errors.New("region count must not be negative")
	}
	if math.IsNaN(o.ManagedShare) || o.ManagedShare > 1 {
		return nil, nil, fmt.Errorf("managed share %v is out of range: want at most 1 (negative for none)", o.ManagedShare)
	}
	clouds := o.Clouds
	if len(clouds) == 0 {
		clouds = []fleet.Provider{fleet.AWS, fleet.Azure, fleet.GCP}
	}
	accounts := max(o.Accounts, 1)
	byCloud := map[fleet.Provider][]offerShape{}
	for _, p := range clouds {
		shapes, err := cloudShapes(cat, p, o.Regions, o.RegionCount)
		if err != nil {
			return nil, nil, err
		}
		byCloud[p] = shapes
	}
	now := o.Now
	if now.IsZero() {
		now = time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	}
	f := &fleet.Fleet{APIVersion: fleet.APIVersion, Kind: fleet.Kind, Metadata: fleet.Metadata{Name: fmt.Sprintf("generated-%d-%d", o.Seed, o.Instances)}}
	all := func(yield func(fleet.Instance) bool) {
		r := rand.New(rand.NewPCG(o.Seed, o.Seed^0x9e3779b97f4a7c15))
		runs := []string{"llm-pretrain", "vision-ft", "rl-sweep"}
		g := gen{r: r, now: now}
		md := newManagedDraw(o, cat, byCloud)
		for i := range o.Instances {
			p := clouds[g.pick(len(clouds))]
			shapes := byCloud[p]
			sh := shapes[g.pick(len(shapes))]
			in := g.mixedInstance(i, p, sh, accountName(p, g.pick(accounts)), runs)
			md.apply(&in, i, sh)
			if !yield(in) {
				return
			}
		}
	}
	return f, all, nil
}

// cloudShapes lists the (type, region) pairs cat prices on demand for p, in
// a stable order.
func cloudShapes(cat pricing.Catalog, p fleet.Provider, regions []string, count int) ([]offerShape, error) {
	offers := cat.Offers(pricing.Query{Provider: p})
	perRegion := map[string][]offerShape{}
	for _, of := range offers {
		if of.OnDemand == nil || of.Type.GPUCount < 1 || of.Type.GPUModel == "" {
			continue
		}
		perRegion[of.Region] = append(perRegion[of.Region], offerShape{typ: of.Type, region: of.Region, spot: of.Spot != nil})
	}
	var names []string
	if len(regions) > 0 {
		for _, r := range regions {
			if _, ok := perRegion[r]; ok && !slices.Contains(names, r) {
				names = append(names, r)
			}
		}
		if len(names) == 0 {
			return nil, fmt.Errorf("the catalog prices no %s GPU instance type in any of the regions %s", p, strings.Join(regions, ", "))
		}
	} else {
		for r := range perRegion {
			names = append(names, r)
		}
		slices.SortFunc(names, func(a, b string) int {
			if d := len(perRegion[b]) - len(perRegion[a]); d != 0 {
				return d
			}
			return strings.Compare(a, b)
		})
		if count > 0 && count < len(names) {
			names = names[:count]
		}
		if len(names) == 0 {
			return nil, fmt.Errorf("the catalog prices no %s GPU instance type", p)
		}
	}
	slices.Sort(names)
	var out []offerShape
	for _, r := range names {
		s := perRegion[r]
		slices.SortFunc(s, func(a, b offerShape) int { return strings.Compare(a.typ.Name, b.typ.Name) })
		out = append(out, s...)
	}
	return out, nil
}

// accountName is the k-th account of p in the cloud's own format: a 12-digit
// AWS account ID, an Azure subscription GUID, a GCP project ID.
func accountName(p fleet.Provider, k int) string {
	switch p {
	case fleet.AWS:
		return fmt.Sprintf("%012d", 111122223333+uint64(k)*1000003)
	case fleet.Azure:
		return fmt.Sprintf("0b1f6471-1bf0-4dda-aec3-%012x", 0xcb9272f09590+k)
	default:
		return fmt.Sprintf("ml-project-%03d", k)
	}
}

// instanceName is the i-th instance's ID in the cloud's own format.
func instanceName(p fleet.Provider, i int) string {
	switch p {
	case fleet.AWS:
		return fmt.Sprintf("i-%017x", 0x0a000000000000+i)
	case fleet.Azure:
		return fmt.Sprintf("gpu-vm-%07d", i)
	default:
		return fmt.Sprintf("gpu-node-%07d", i)
	}
}

func (g *gen) mixedInstance(i int, p fleet.Provider, sh offerShape, account string, runs []string) fleet.Instance {
	in := fleet.Instance{
		ID:           instanceName(p, i),
		Provider:     p,
		Region:       sh.region,
		InstanceType: sh.typ.Name,
		Lifecycle:    fleet.OnDemand,
		State:        fleet.Running,
		Account:      account,
	}
	if sh.spot && g.chance(0.15) {
		in.Lifecycle = fleet.Spot
		if p == fleet.AWS {
			// Persistent and one-time requests alternate (no draw, so
			// the rest of the fleet is the seed's as before).
			in.SpotInterruption = []fleet.SpotInterruption{fleet.SpotStop, fleet.SpotTerminate}[i%2]
		}
	}
	if g.chance(0.06) {
		in.State = fleet.Stopped
	}
	if g.chance(0.6) {
		in.Name = fmt.Sprintf("%s-%d", []string{"train", "nb", "serve", "batch", "dev"}[g.pick(5)], i)
	}
	if g.chance(0.7) {
		lt := g.now.Add(-time.Duration(24+g.pick(4000)) * time.Hour)
		in.LaunchTime = &lt
	}
	pattern := Patterns[g.pick(len(Patterns))]
	in.Tags = g.mixedTags(i, p, pattern)
	if p == fleet.GCP && g.chance(0.04) {
		in.ManagedBy = &fleet.ManagedBy{Kind: fleet.OwnerMIG, Name: fmt.Sprintf("gpu-mig-%d", i%5)}
	}
	in.Workload = g.patternWorkload(pattern, runs)
	if pattern == "notebook" && g.chance(0.5) {
		in.Usage.Schedule = g.schedule()
	}
	if !g.chance(0.06) { // the rest have no GPU agent: no utilization
		in.Utilization = g.patternUtilization(pattern, int(sh.typ.GPUCount))
	}
	return in
}

func (g *gen) mixedTags(i int, p fleet.Provider, pattern string) map[string]string {
	t := map[string]string{"workload-pattern": pattern}
	teams := []string{"ml-platform", "research", "search", "ads", "vision", "speech"}
	if g.chance(0.85) {
		t["team"] = teams[g.pick(len(teams))]
	}
	if g.chance(0.8) {
		t["env"] = []string{"prod", "dev", "staging", "research"}[g.pick(4)]
	}
	if g.chance(0.5) {
		t["cost-center"] = fmt.Sprintf("cc-%03d", g.pick(40))
	}
	if g.chance(0.5) {
		t["owner"] = fmt.Sprintf("user%d@example.com", g.pick(500))
	}
	if g.chance(0.03) {
		t["gpufinops:exempt"] = "true"
	}
	if g.chance(0.04) {
		switch p {
		case fleet.AWS:
			t["aws:autoscaling:groupName"] = fmt.Sprintf("asg-%d", i%11)
		case fleet.Azure:
			t["aks-managed-poolName"] = fmt.Sprintf("gpupool%d", i%5)
		}
	}
	return t
}

func (g *gen) patternWorkload(pattern string, runs []string) *fleet.Workload {
	if g.chance(0.1) {
		return nil
	}
	w := &fleet.Workload{}
	switch pattern {
	case "idle", "notebook":
		w.Type = fleet.Development
	case "training":
		w.Type = []fleet.WorkloadType{fleet.Training, fleet.FineTuning, fleet.HPO}[g.pick(3)]
		if g.chance(0.4) {
			w.TrainingRun = runs[g.pick(len(runs))]
			w.TrainingRunHours = float64(24 + g.pick(2000))
		}
		b := g.chance(0.8)
		w.Checkpoints = &b
	case "inference":
		w.Type = fleet.Inference
		if g.chance(0.5) {
			w.TokensPerSecond = math.Round(100 + g.r.Float64()*5000)
		}
	default:
		w.Type = fleet.Batch
		b := g.chance(0.6)
		w.Checkpoints = &b
	}
	if g.chance(0.4) {
		w.ParamsBillions = []float64{1.5, 7, 8, 13, 70}[g.pick(5)]
		w.Precision = fleet.Precisions[g.pick(len(fleet.Precisions))]
		w.Model = fmt.Sprintf("model-%gb", w.ParamsBillions)
	}
	return w
}

// patternUtilization is 14 days of summary statistics shaped by the pattern.
func (g *gen) patternUtilization(pattern string, gpus int) *fleet.Utilization {
	u := &fleet.Utilization{Window: &fleet.TimeRange{Start: g.now.Add(-14 * 24 * time.Hour), End: g.now}}
	if g.chance(0.03) && gpus > 1 { // fewer GPUs reporting than the machine has
		u.Samples = g.samples(u.Window, gpus-1)
		return u
	}
	var lo, hi float64
	switch pattern {
	case "idle":
		lo, hi = 0, 2
	case "notebook":
		lo, hi = 2, 15
	case "training":
		lo, hi = 70, 95
	case "inference":
		lo, hi = 20, 60
	default:
		lo, hi = 10, 40
	}
	u.GPU = g.stats(lo, hi)
	u.GPUMemory = g.stats(lo/2, min(hi, 80))
	u.CPU = g.stats(0, 50)
	if g.chance(0.7) {
		u.Memory = g.stats(0, 70)
	}
	return u
}
