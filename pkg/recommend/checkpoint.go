package recommend

import (
	"fmt"
	"math"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pricing"
)

// checkpointPlan is the Young/Daly advice for a job on spot.
type checkpointPlan struct {
	// writeMinutes is the time one checkpoint takes to write.
	writeMinutes float64
	// sizeGB is the checkpoint size when the model size is known.
	sizeGB float64
	// mtbiHours is the mean time between interruptions.
	mtbiHours float64
	// intervalMinutes is the optimal time between checkpoints.
	intervalMinutes float64
	// overhead is the expected share of extra run time: checkpoint writes,
	// work lost to interruptions and restarts.
	overhead float64
	// basis says where the interruption rate came from.
	basis string
}

// planCheckpoints applies the Young/Daly rule τ = √(2·C·M): C the checkpoint
// write time, M the mean time between interruptions. The expected overhead is
// C/τ (writing) + (τ/2 + R)/M (half an interval of lost work and a restart R
// per interruption).
func planCheckpoints(p SpotPolicy, w *fleet.Workload, advice *pricing.SpotAdvice) checkpointPlan {
	cp := checkpointPlan{writeMinutes: p.CheckpointMinutes}
	if w != nil && w.ParamsBillions > 0 {
		cp.sizeGB = w.ParamsBillions * p.CheckpointBytesPerParam
		cp.writeMinutes = cp.sizeGB / p.CheckpointWriteGBps / 60
	}
	perMonth := p.InterruptionsPerMonth
	cp.basis = fmt.Sprintf("no published interruption rate: the policy's %s interruptions a month", num(perMonth))
	if advice != nil && advice.MaxInterruptPercent > 0 {
		// The band is the share of instances interrupted in a month; its upper
		// bound, as a probability per instance-month, errs towards more interruptions.
		perMonth = float64(advice.MaxInterruptPercent) / 100
		cp.basis = fmt.Sprintf("interruption band %s: at most %d %% of instances a month", spacePercent(advice.Band), advice.MaxInterruptPercent)
	}
	cp.mtbiHours = fleet.HoursPerMonth / perMonth
	c := cp.writeMinutes / 60
	tau := math.Sqrt(2 * c * cp.mtbiHours)
	cp.intervalMinutes = tau * 60
	cp.overhead = c/tau + (tau/2+p.RestartMinutes/60)/cp.mtbiHours
	return cp
}
