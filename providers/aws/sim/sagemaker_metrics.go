package sim

// SageMaker's CloudWatch metrics: what an endpoint variant and a training
// job publish (docs.aws.amazon.com/sagemaker/latest/dg/monitoring-cloudwatch.html;
// FACTS.md). GPUUtilization and GPUMemoryUtilization are summed over the
// instance's GPUs (0–100 × GPU count), per variant (EndpointName,
// VariantName) or per training instance (Host <job>/algo-<n>); Invocations
// (AWS/SageMaker, Sum) spread managed.requests evenly over the
// utilization window. Notebook instances and Studio apps publish no
// metric at all.

import (
	"math"
	"strconv"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/providers/simkit"
)

const (
	smEndpointNamespace = "/aws/sagemaker/Endpoints"
	smTrainingNamespace = "/aws/sagemaker/TrainingJobs"
	smInvocationsNS     = "AWS/SageMaker"

	metricSMGPU         = "GPUUtilization"       // percent × GPUs
	metricSMGPUMemory   = "GPUMemoryUtilization" // percent × GPUs
	metricSMInvocations = "Invocations"          // count
)

// buildSageMaker makes a SageMaker item's series: none for notebooks and
// Studio apps.
func (s *Server) buildSageMaker(in fleet.Instance) *instSeries {
	is := &instSeries{id: in.ID, region: in.Region, account: in.Account, stoppedInFleet: in.State == fleet.Stopped}
	g := s.gpuInfoOf(in)
	p := simkit.Synthesize(in, g.count, seedKeys, defaultCPU)
	is.clock = p.Clock
	it := s.smItemOf(simkit.Live{Instance: &in})
	gpu, mem := sumGPUs(p.GPU, g.count), sumGPUs(p.GPUMemory, g.count)
	switch in.Managed.Kind {
	case fleet.KindEndpoint:
		dims := []dimension{{"EndpointName", it.name}, {"VariantName", it.variant}}
		is.add(smEndpointNamespace, metricSMGPU, "Percent", dims, gpu)
		is.add(smEndpointNamespace, metricSMGPUMemory, "Percent", dims, mem)
		if in.Managed.Requests != nil {
			is.add(smInvocationsNS, metricSMInvocations, "None", dims, invocations(in, p.Clock, gpu))
		}
	case fleet.KindTrainingJob, fleet.KindProcessingJob:
		ns := smTrainingNamespace
		if in.Managed.Kind == fleet.KindProcessingJob {
			ns = "/aws/sagemaker/ProcessingJobs"
		}
		for n := 1; n <= max(in.Managed.CurrentReplicas(), 1); n++ {
			dims := []dimension{{"Host", it.name + "/algo-" + strconv.Itoa(n)}}
			is.add(ns, metricSMGPU, "Percent", dims, gpu)
			is.add(ns, metricSMGPUMemory, "Percent", dims, mem)
		}
	}
	return is
}

// sumGPUs is the per-slot sum of the first count GPUs' percentages (NaN
// where none has a value); nil when there is no GPU series.
func sumGPUs(per [][]float64, count int) []float64 {
	var out []float64
	for i, v := range per {
		if i >= count || v == nil {
			continue
		}
		if out == nil {
			out = make([]float64, len(v))
			for j := range out {
				out[j] = math.NaN()
			}
		}
		for j, x := range v {
			if math.IsNaN(x) {
				continue
			}
			if math.IsNaN(out[j]) {
				out[j] = 0
			}
			out[j] += x
		}
	}
	return out
}

// invocations spreads managed.requests over the utilization window (a
// week when the file gives none): every minute with a datapoint (where
// like is not NaN, or every minute when like is nil) carries the same
// share, so the Sum over the window is the file's figure.
func invocations(in fleet.Instance, c simkit.Clock, like []float64) []float64 {
	minutes := 7 * 24 * 60.0
	if u := in.Utilization; u != nil && u.Window != nil && u.Window.End.After(u.Window.Start) {
		minutes = u.Window.End.Sub(u.Window.Start).Minutes()
	}
	perMinute := *in.Managed.Requests / minutes
	out := make([]float64, c.Size())
	for i := range out {
		out[i] = perMinute
		if like != nil && i < len(like) && math.IsNaN(like[i]) {
			out[i] = math.NaN()
		}
	}
	return out
}
