package providers

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/gpufinops/gpufinops/pkg/fleet"
)

// GPUCoverage is how many of a scope's running GPU instances publish GPU
// metrics for every GPU, for some of them only (partial), or for none: the
// doctor's metrics check of every cloud.
type GPUCoverage struct {
	Running int
	// Partial are the instances some of whose GPUs report, as
	// "id (2 of 4 GPUs)"; Without those none of whose GPUs do.
	Partial, Without []string
}

// CoverageOf sorts the running instances by reporting(i), how many of
// instance i's GPUs report (0: none). An instance reporting fewer GPUs than
// it has is partial, never publishing: the engine reads the missing GPUs as
// missing data, not as idle.
func CoverageOf(instances []fleet.Instance, reporting func(i int) int) GPUCoverage {
	var c GPUCoverage
	for i := range instances {
		in := &instances[i]
		if in.State == fleet.Stopped {
			continue
		}
		c.Running++
		n, want := reporting(i), GPUsOf(in)
		switch {
		case n <= 0:
			c.Without = append(c.Without, in.ID)
		case n < want:
			c.Partial = append(c.Partial, fmt.Sprintf("%s (%d of %d GPUs)", in.ID, n, want))
		}
	}
	return c
}

// GPUsOf is how many GPUs an instance has, a fraction of one counting as one.
func GPUsOf(in *fleet.Instance) int {
	return max(int(math.Ceil(in.GPU.Count)), 1)
}

// SamplesReporting is how many GPUs report in an instance's utilization:
// the most per-GPU values in any one sample, or, with summary statistics
// and no samples, all of them; 0 without GPU data.
func SamplesReporting(in *fleet.Instance) int {
	u := in.Utilization
	if u == nil {
		return 0
	}
	n := 0
	for _, s := range u.Samples {
		n = max(n, len(s.GPU))
	}
	if n == 0 && len(u.Samples) == 0 && u.GPU != nil {
		return GPUsOf(in)
	}
	return n
}

// OK reports whether every running instance publishes every GPU.
func (c GPUCoverage) OK() bool { return len(c.Partial) == 0 && len(c.Without) == 0 }

// Detail says it in one line; noun names the instances ("GPU VMs").
func (c GPUCoverage) Detail(noun string) string {
	full := c.Running - len(c.Partial) - len(c.Without)
	s := fmt.Sprintf("%d of %d running %s publish GPU metrics for every GPU", full, c.Running, noun)
	if len(c.Partial) > 0 {
		s += "; partial: " + strings.Join(c.Partial, ", ")
	}
	if len(c.Without) > 0 {
		s += "; without: " + strings.Join(c.Without, ", ")
	}
	return s
}

// StopCheck checks the permission idle-stop needs with a dry-run stop (s
// with dryRun: nothing changes) of one of the scope's running GPU
// instances that no controller owns, one opted in with AutoShutdown=true
// first (the policies allow stopping only those). Missing is a warning, as
// analyze works without it; with no instance to try, the check says so.
func StopCheck(ctx context.Context, s Stopper, scope Scope, instances []fleet.Instance, action, method, fix string) Check {
	c := Check{Name: "permission", Action: action, Method: method, Status: CheckOK}
	var optedIn, others []string
	for i := range instances {
		in := &instances[i]
		if in.State == fleet.Stopped || in.Owner() != nil {
			continue
		}
		if autoShutdown(in.Tags) {
			optedIn = append(optedIn, in.ID)
		} else {
			others = append(others, in.ID)
		}
	}
	tried := 0
	for _, id := range append(optedIn, others...) {
		if tried == 3 {
			break
		}
		tried++
		_, err := s.Stop(ctx, scope, id, true)
		switch {
		case err == nil:
			c.Method = method + " on " + id
			return c
		case errors.Is(err, ErrNotStoppable), errors.Is(err, ErrNotFound):
			continue
		case errors.Is(err, ErrPermission), errors.Is(err, ErrCredentials):
			c.Method = method + " on " + id
			c.Status, c.Fix = CheckWarn, fix
			c.Detail = "idle-stop --execute could not stop " + id + " (analyze is unaffected): " + Brief(err)
			return c
		default:
			c.Status, c.Detail = CheckError, Brief(err)
			return c
		}
	}
	c.Detail = "not checked: no running GPU instance here that idle-stop could stop, to dry-run on; idle-stop dry-runs it before each stop"
	return c
}

// autoShutdown reports whether tags opt an instance in to idle-stop the way
// the least-privilege policies condition the stop (AutoShutdown=true, any
// spelling of the key).
func autoShutdown(tags map[string]string) bool {
	for k, v := range tags {
		if fleet.NormTagKey(k) == "autoshutdown" && strings.EqualFold(strings.TrimSpace(v), "true") {
			return true
		}
	}
	return false
}
