package sharing

import (
	"cmp"
	"fmt"
	"math"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pkg/money"
	"github.com/gpufinops/gpufinops/pricing"
)

// MIG geometry common to every MIG-capable NVIDIA GPU: 7 compute slices and 8
// memory slices.
const (
	migComputeSlices = 7
	migMemorySlices  = 8
)

// eps absorbs float rounding in the limits (20+20+20+20 ≤ 80).
const eps = 1e-9

// Build plans sharing for the tenants. gpus returns a GPU model's spec (the
// catalog's GPU method); a model with MIG profiles is MIG-capable. Inference
// tenants on MIG-capable GPUs get MIG partitions (when p.MIG), all others
// time-slicing. Tenants are grouped by mode, provider, region, account and
// instance type, and packed first-fit decreasing onto as few GPUs as the
// policy allows; the first tenant of each GPU stays as its host (or a later
// one whose schedule covers the others') and the rest are freed.
//
// Build is pure and deterministic: the order of tenants does not matter.
func Build(tenants []Tenant, gpus func(model string) (pricing.GPUSpec, bool), p Policy) Plan {
	pol := p
	plan := Plan{Groups: []Group{}, Notes: []string{}, Policy: &pol}
	ts := slices.Clone(tenants)
	sort.SliceStable(ts, func(i, j int) bool { return ts[i].InstanceID < ts[j].InstanceID })

	groups := map[groupKey][]*item{}
	seen := map[string]bool{}
	scheduled := false
	for _, t := range ts {
		if seen[t.InstanceID] {
			plan.Notes = append(plan.Notes, fmt.Sprintf("%s: listed twice; the second is ignored", t.InstanceID))
			continue
		}
		seen[t.InstanceID] = true
		if reason := invalid(t); reason != "" {
			plan.Notes = append(plan.Notes, fmt.Sprintf("%s: not shared: %s", t.InstanceID, reason))
			continue
		}
		it := &item{t: t, avail: availabilityOf(t)}
		if !it.avail.always {
			scheduled = true
		}
		mode := TimeSlicing
		if spec, ok := migSpec(gpus, t.GPUModel); ok && p.MIG && t.Workload == fleet.Inference {
			prof, ok := chooseProfile(spec, t, p.HeadroomPercent)
			if !ok {
				plan.Notes = append(plan.Notes, fmt.Sprintf("%s: not shared: GPU p95 %s and memory peak %s GiB plus %s headroom need a whole %s (7g); left as is",
					t.InstanceID, money.PercentFloat(t.GPUP95), formatNum(t.MemoryPeakGiB), money.PercentFloat(p.HeadroomPercent), t.GPUModel))
				continue
			}
			mode, it.profile = MIG, prof
			it.memSlices = memorySlices(prof, spec)
		}
		k := groupKey{mode, t.Provider, t.Region, t.Account, t.InstanceType, t.GPUModel}
		groups[k] = append(groups[k], it)
	}
	if p.MaxReplicas < 2 {
		plan.Notes = append(plan.Notes, fmt.Sprintf("max replicas %d leaves no room to share a GPU", p.MaxReplicas))
	}

	keys := make([]groupKey, 0, len(groups))
	for k := range groups {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, groupKey.compare)
	candidates := 0
	for _, k := range keys {
		items := groups[k]
		candidates += len(items)
		var bins []*bin
		if k.mode == MIG {
			bins = packMIG(items)
		} else {
			bins = packTimeSlicing(items, p)
		}
		if g, ok := makeGroup(k, bins); ok {
			plan.Groups = append(plan.Groups, g)
			plan.FreedMonthly = plan.FreedMonthly.Add(g.FreedMonthly)
		}
	}
	assignConfigNames(plan.Groups)

	freed := 0
	var ts0, mig0 bool
	for _, g := range plan.Groups {
		freed += len(g.Freed)
		ts0 = ts0 || g.Mode == TimeSlicing
		mig0 = mig0 || g.Mode == MIG
	}
	if candidates > 0 && freed == 0 {
		plan.Notes = append(plan.Notes, fmt.Sprintf("%d candidate(s), but no two fit one GPU under the policy", candidates))
	}
	if ts0 {
		plan.Notes = append(plan.Notes, fmt.Sprintf("time-slicing isolates neither memory nor faults: the tenants' memory peaks plus %s headroom fit the GPU, but one tenant's out-of-memory error or crash can disturb the others",
			money.PercentFloat(p.HeadroomPercent)))
	}
	if mig0 {
		plan.Notes = append(plan.Notes, "MIG layouts keep to 7 compute slices, 8 memory slices and a whole GPU for a 7g profile; the MIG manager checks the GPU's real placement rules when it applies them")
	}
	if scheduled {
		plan.Notes = append(plan.Notes, "a tenant moves only to a host that runs whenever it does (same timezone); tenants whose schedules do not overlap could share further, which this plan does not count on")
	}
	return plan
}

// invalid says why a tenant cannot be planned; "" when it can.
func invalid(t Tenant) string {
	switch {
	case t.InstanceID == "":
		return "no instance ID"
	case t.GPUCount != 1:
		return fmt.Sprintf("%d GPUs: a tenant must fit one GPU, multi-GPU instances are not candidates", t.GPUCount)
	case t.GPUMemoryGiB <= 0:
		return "GPU memory size unknown"
	case t.GPUP95 < 0 || t.GPUP95 > 100 || math.IsNaN(t.GPUP95):
		return fmt.Sprintf("GPU p95 %v is outside 0–100", t.GPUP95)
	case t.MemoryPeakGiB < 0 || math.IsNaN(t.MemoryPeakGiB):
		return fmt.Sprintf("GPU memory peak %v GiB is negative", t.MemoryPeakGiB)
	case t.MemoryPeakGiB > t.GPUMemoryGiB:
		return fmt.Sprintf("GPU memory peak %s GiB is more than its GPU's %s GiB", formatNum(t.MemoryPeakGiB), formatNum(t.GPUMemoryGiB))
	}
	return ""
}

type groupKey struct {
	mode         Mode
	provider     fleet.Provider
	region       string
	account      string
	instanceType string
	gpuModel     string
}

func (a groupKey) compare(b groupKey) int {
	return cmp.Or(
		cmp.Compare(a.provider, b.provider),
		cmp.Compare(a.region, b.region),
		cmp.Compare(a.account, b.account),
		cmp.Compare(a.instanceType, b.instanceType),
		cmp.Compare(a.gpuModel, b.gpuModel),
		cmp.Compare(a.mode, b.mode),
	)
}

// item is a tenant being packed.
type item struct {
	t     Tenant
	avail availability
	// MIG only.
	profile   pricing.MIGProfile
	memSlices int
}

// bin is one physical GPU: its host and the tenants on it.
type bin struct {
	host  *item
	items []*item
	load  float64
	mem   float64
	// MIG only.
	slices, memSlices int
}

// hostFor returns the bin's host if it covers t's hours, else t if t covers
// the host's (and so everyone's); false when neither does.
func (b *bin) hostFor(t *item) (*item, bool) {
	switch {
	case b.host.avail.covers(t.avail):
		return b.host, true
	case t.avail.covers(b.host.avail):
		return t, true
	}
	return nil, false
}

func (b *bin) add(t *item, host *item) {
	b.host = host
	b.items = append(b.items, t)
	b.load += t.t.GPUP95
	b.mem += t.t.MemoryPeakGiB
	b.slices += t.profile.Slices
	b.memSlices += t.memSlices
}

// packTimeSlicing packs first-fit decreasing by GPU p95: Σ p95 within the
// target load, Σ memory peaks × (1 + headroom) within the GPU's memory, at most
// MaxReplicas tenants.
func packTimeSlicing(items []*item, p Policy) []*bin {
	slices.SortStableFunc(items, func(a, b *item) int {
		return cmp.Or(
			cmp.Compare(b.t.GPUP95, a.t.GPUP95),
			cmp.Compare(b.t.MemoryPeakGiB, a.t.MemoryPeakGiB),
			cmp.Compare(a.t.InstanceID, b.t.InstanceID),
		)
	})
	head := 1 + p.HeadroomPercent/100
	return firstFit(items, func(b *bin, it *item) bool {
		return len(b.items)+1 <= p.MaxReplicas &&
			b.load+it.t.GPUP95 <= p.TargetGPUPercent+eps &&
			(b.mem+it.t.MemoryPeakGiB)*head <= it.t.GPUMemoryGiB+eps
	})
}

// firstFit puts each item, in order, on the first bin it fits (fits) whose
// host covers its schedule, else on a new bin it hosts.
func firstFit(items []*item, fits func(*bin, *item) bool) []*bin {
	var bins []*bin
	for _, it := range items {
		placed := false
		for _, b := range bins {
			if !fits(b, it) {
				continue
			}
			if host, ok := b.hostFor(it); ok {
				b.add(it, host)
				placed = true
				break
			}
		}
		if !placed {
			b := &bin{host: it}
			b.add(it, it)
			bins = append(bins, b)
		}
	}
	return bins
}

// packMIG packs first-fit decreasing by profile size: Σ compute slices ≤ 7,
// Σ memory slices ≤ 8.
func packMIG(items []*item) []*bin {
	slices.SortStableFunc(items, func(a, b *item) int {
		return cmp.Or(
			cmp.Compare(b.profile.Slices, a.profile.Slices),
			cmp.Compare(b.memSlices, a.memSlices),
			cmp.Compare(b.t.GPUP95, a.t.GPUP95),
			cmp.Compare(a.t.InstanceID, b.t.InstanceID),
		)
	})
	return firstFit(items, func(b *bin, it *item) bool {
		return b.slices+it.profile.Slices <= migComputeSlices && b.memSlices+it.memSlices <= migMemorySlices
	})
}

// makeGroup turns the bins with two or more tenants into a group; false when
// no GPU is shared.
func makeGroup(k groupKey, bins []*bin) (Group, bool) {
	g := Group{
		Mode: k.mode, Provider: k.provider, Region: k.region, Account: k.account,
		InstanceType: k.instanceType, GPUModel: k.gpuModel,
		Hosts: []Host{}, Freed: []string{}, Moves: []Move{},
	}
	for _, b := range bins {
		if len(b.items) < 2 {
			continue
		}
		g.GPUMemoryGiB = b.host.t.GPUMemoryGiB
		others := make([]*item, 0, len(b.items)-1)
		for _, it := range b.items {
			if it != b.host {
				others = append(others, it)
			}
		}
		slices.SortFunc(others, func(a, b *item) int { return cmp.Compare(a.t.InstanceID, b.t.InstanceID) })
		h := Host{
			InstanceID:     b.host.t.InstanceID,
			Tenants:        []string{b.host.t.InstanceID},
			GPULoadPercent: round2(b.load),
			GPUMemoryGiB:   round2(b.mem),
		}
		if k.mode == MIG {
			h.Profiles = map[string]string{b.host.t.InstanceID: b.host.profile.Name}
			h.MIGDevices = map[string]int{b.host.profile.Name: 1}
		}
		for _, it := range others {
			h.Tenants = append(h.Tenants, it.t.InstanceID)
			m := Move{InstanceID: it.t.InstanceID, Host: h.InstanceID, MonthlyCost: it.t.MonthlyCost}
			if k.mode == MIG {
				h.Profiles[it.t.InstanceID] = it.profile.Name
				h.MIGDevices[it.profile.Name]++
				m.Profile = it.profile.Name
			}
			g.Moves = append(g.Moves, m)
			g.FreedMonthly = g.FreedMonthly.Add(it.t.MonthlyCost)
		}
		if k.mode == MIG {
			h.MIGConfig = MIGConfigName(h.MIGDevices)
		}
		g.Replicas = max(g.Replicas, len(h.Tenants))
		g.Hosts = append(g.Hosts, h)
	}
	if len(g.Hosts) == 0 {
		return Group{}, false
	}
	if k.mode == MIG {
		g.Replicas = 0
	}
	slices.SortFunc(g.Hosts, func(a, b Host) int { return cmp.Compare(a.InstanceID, b.InstanceID) })
	slices.SortFunc(g.Moves, func(a, b Move) int { return cmp.Compare(a.InstanceID, b.InstanceID) })
	for _, m := range g.Moves {
		g.Freed = append(g.Freed, m.InstanceID)
	}
	return g, true
}

// migSpec returns the GPU's spec when it has MIG profiles.
func migSpec(gpus func(string) (pricing.GPUSpec, bool), model string) (pricing.GPUSpec, bool) {
	if gpus == nil {
		return pricing.GPUSpec{}, false
	}
	spec, ok := gpus(model)
	if !ok || len(spec.MIGProfiles) == 0 {
		return pricing.GPUSpec{}, false
	}
	return spec, true
}

// chooseProfile picks the smallest profile (fewest compute slices, then least
// memory) that holds the tenant's memory peak and GPU p95, each plus headroom.
// Media-extension variants are never chosen, nor a profile that takes the
// whole GPU (7g), which would share nothing.
func chooseProfile(spec pricing.GPUSpec, t Tenant, headroomPercent float64) (pricing.MIGProfile, bool) {
	head := 1 + headroomPercent/100
	profiles := slices.Clone(spec.MIGProfiles)
	slices.SortStableFunc(profiles, func(a, b pricing.MIGProfile) int {
		return cmp.Or(cmp.Compare(a.Slices, b.Slices), cmp.Compare(a.MemoryGB, b.MemoryGB), cmp.Compare(a.Name, b.Name))
	})
	for _, pr := range profiles {
		if pr.MediaExtensions || pr.Slices <= 0 || pr.Slices >= migComputeSlices || memorySlices(pr, spec) >= migMemorySlices {
			continue
		}
		if pr.MemoryGB+eps >= t.MemoryPeakGiB*head &&
			float64(pr.Slices)/migComputeSlices*100+eps >= t.GPUP95*head {
			return pr, true
		}
	}
	return pricing.MIGProfile{}, false
}

// memorySlices is a profile's memory in eighths of the GPU's memory, rounded:
// 1g.10gb is 1 of 8 on an 80 GB GPU and 2 of 8 on a 40 GB one.
func memorySlices(pr pricing.MIGProfile, spec pricing.GPUSpec) int {
	if spec.MemoryGiB <= 0 {
		return migMemorySlices
	}
	n := int(math.Round(pr.MemoryGB / spec.MemoryGiB * migMemorySlices))
	return min(max(n, 1), migMemorySlices)
}

// MIGConfigName names a MIG layout for mig-parted and the nvidia.com/mig.config
// label: "gpufinops-" and the counts, largest profile first, e.g.
// gpufinops-1x3g.40gb-2x1g.10gb.
func MIGConfigName(devices map[string]int) string {
	names := make([]string, 0, len(devices))
	for n := range devices {
		names = append(names, n)
	}
	slices.SortFunc(names, func(a, b string) int {
		return cmp.Or(cmp.Compare(profileSlices(b), profileSlices(a)), cmp.Compare(a, b))
	})
	parts := []string{"gpufinops"}
	for _, n := range names {
		parts = append(parts, strconv.Itoa(devices[n])+"x"+n)
	}
	return strings.Join(parts, "-")
}

// profileSlices reads the leading compute slice count of a profile name.
func profileSlices(name string) int {
	n, _ := strconv.Atoi(strings.SplitN(name, "g", 2)[0])
	return n
}

var nonKey = regexp.MustCompile(`[^a-z0-9]+`)

// slug lower-cases s and turns every run of other characters into one dash.
func slug(s string) string {
	return strings.Trim(nonKey.ReplaceAllString(strings.ToLower(s), "-"), "-")
}

// maxLabel is the longest Kubernetes label value.
const maxLabel = 63

func clip(s string) string {
	if len(s) > maxLabel {
		s = strings.TrimRight(s[:maxLabel], "-.")
	}
	return s
}

// assignConfigNames gives each time-slicing group a device plugin config key,
// the instance type and GPU model (g4dn-xlarge-t4), with the region, then the
// account, then a number appended where two groups would share it. Groups are
// in their final order, so the names are deterministic.
func assignConfigNames(groups []Group) {
	used := map[string]bool{}
	for i := range groups {
		g := &groups[i]
		if g.Mode != TimeSlicing {
			continue
		}
		base := slug(g.InstanceType + "-" + g.GPUModel)
		if base == "" {
			base = "gpu"
		}
		cands := []string{clip(base), clip(base + "-" + slug(g.Region))}
		if g.Account != "" {
			cands = append(cands, clip(base+"-"+slug(g.Region)+"-"+slug(g.Account)))
		}
		name := ""
		for _, c := range cands {
			if c != "" && !used[c] {
				name = c
				break
			}
		}
		for n := 2; name == ""; n++ {
			suffix := "-" + strconv.Itoa(n)
			c := clip(cands[len(cands)-1])
			if len(c)+len(suffix) > maxLabel {
				c = strings.TrimRight(c[:maxLabel-len(suffix)], "-.")
			}
			if !used[c+suffix] {
				name = c + suffix
			}
		}
		used[name] = true
		g.Config = name
	}
}
