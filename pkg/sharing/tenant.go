package sharing

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pkg/money"
)

// ErrNotCandidate is wrapped by TenantFrom when an instance is plainly not a
// tenant (not running, or no development or inference workload); such
// instances are worth no note. Every other error says why a likely candidate
// was left out.
var ErrNotCandidate = errors.New("not a sharing candidate")

// Current is an instance as earlier recommendations leave it, before sharing.
// Empty fields mean the fleet's own values.
type Current struct {
	// InstanceType and GPUModel after any rightsizing.
	InstanceType string
	GPUModel     string
	// MonthlyCost is what it still costs a month.
	MonthlyCost decimal.Decimal
	// MonthlyHours is how long it still runs; 0 means the fleet's hours.
	MonthlyHours float64
	// Schedule is the weekly schedule it runs on, if any.
	Schedule *fleet.Schedule
}

// TenantFrom makes an instance a tenant when it qualifies: running, a
// development or light inference workload (GPU p95 below the policy's
// threshold for its type), one whole GPU, and GPU utilization and memory data.
// sum is its utilization summary (in.Utilization.Summarize()).
func TenantFrom(in *fleet.Instance, sum *fleet.Summary, cur Current, p Policy) (Tenant, error) {
	if in.State != fleet.Running || in.Workload == nil {
		return Tenant{}, ErrNotCandidate
	}
	var limit float64
	switch in.Workload.Type {
	case fleet.Development:
		limit = p.DevelopmentMaxGPUPercent
	case fleet.Inference:
		limit = p.InferenceMaxGPUPercent
	default:
		return Tenant{}, ErrNotCandidate
	}
	work := in.Workload.Type
	gpu := in.GPU.Model
	if cur.GPUModel != "" && !strings.EqualFold(cur.GPUModel, gpu) {
		return Tenant{}, fmt.Errorf("moves from %s to %s by an earlier recommendation; its load was measured on %s", gpu, cur.GPUModel, gpu)
	}
	switch {
	case gpu == "":
		return Tenant{}, errors.New("GPU model unknown")
	case in.GPU.Count > 1:
		return Tenant{}, fmt.Errorf("%s GPUs: a tenant must fit one GPU, multi-GPU instances are not candidates", formatNum(in.GPU.Count))
	case in.GPU.Count < 1:
		return Tenant{}, fmt.Errorf("already a fraction (%s) of a GPU", formatNum(in.GPU.Count))
	case in.GPU.MemoryGiB <= 0:
		return Tenant{}, errors.New("GPU memory size unknown")
	case sum == nil || sum.GPU == nil:
		return Tenant{}, errors.New("no GPU utilization data")
	case sum.GPUMemory == nil:
		return Tenant{}, errors.New("no GPU memory data: time-slicing has no memory isolation, so the memory peak must be known")
	case !(sum.GPU.P95 < limit):
		return Tenant{}, fmt.Errorf("%s GPU p95 %s is not below %s", work, money.PercentFloat(sum.GPU.P95), money.PercentFloat(limit))
	}
	typ := in.InstanceType
	if cur.InstanceType != "" {
		typ = cur.InstanceType
	}
	return Tenant{
		InstanceID:    in.ID,
		Provider:      in.Provider,
		Region:        in.Region,
		Account:       in.Account,
		InstanceType:  typ,
		Workload:      work,
		GPUModel:      gpu,
		GPUCount:      1,
		GPUMemoryGiB:  in.GPU.MemoryGiB,
		GPUP95:        sum.GPU.P95,
		MemoryPeakGiB: round2(sum.GPUMemory.Max / 100 * in.GPU.MemoryGiB),
		MonthlyCost:   cur.MonthlyCost,
		MonthlyHours:  cur.MonthlyHours,
		Schedule:      cur.Schedule,
	}, nil
}

// TenantsFromFleet returns the fleet's tenants, sorted by instance ID, and a
// note for each likely candidate left out. current says how an instance stands
// before sharing; false leaves it out (stopped or unpriced by the plan).
func TenantsFromFleet(f *fleet.Fleet, current func(*fleet.Instance) (Current, bool), p Policy) ([]Tenant, []string) {
	var tenants []Tenant
	var notes []string
	if f == nil {
		return tenants, notes
	}
	for i := range f.Instances {
		in := &f.Instances[i]
		cur, ok := current(in)
		if !ok {
			continue
		}
		t, err := TenantFrom(in, in.Utilization.Summarize(), cur, p)
		switch {
		case errors.Is(err, ErrNotCandidate):
		case err != nil:
			notes = append(notes, fmt.Sprintf("%s: not shared: %s", in.ID, err))
		default:
			tenants = append(tenants, t)
		}
	}
	sort.SliceStable(tenants, func(i, j int) bool { return tenants[i].InstanceID < tenants[j].InstanceID })
	sort.Strings(notes)
	return tenants, notes
}

func round2(v float64) float64 { return math.Round(v*100) / 100 }

// formatNum writes a figure with at most two decimals.
func formatNum(v float64) string { return strconv.FormatFloat(round2(v), 'f', -1, 64) }
