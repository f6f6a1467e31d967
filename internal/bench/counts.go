package bench

import (
	"fmt"
	"sort"
	"strings"

	"github.com/gpufinops/gpufinops/pkg/fleet"
)

// cloudOf says which cloud a simulator's service and operation belong to.
// Two services' names are shared: "monitoring" is CloudWatch's endpoint
// prefix and Cloud Monitoring's service, "compute" Azure's Compute resource
// provider and Compute Engine's.
func cloudOf(service, op string) (fleet.Provider, bool) {
	switch service {
	case "ec2", "sts", "pricing", "savingsplans", "sagemaker":
		return fleet.AWS, true
	case "subscriptions", "resourcegraph", "monitor", "prices", "capacity", "billingbenefits", "authorization", "machinelearning":
		return fleet.Azure, true
	case "cloudresourcemanager", "cloudbilling", "aiplatform", "notebooks":
		return fleet.GCP, true
	case "monitoring":
		switch op {
		case "GetMetricData", "ListMetrics", "GetMetricStatistics":
			return fleet.AWS, true
		case "ListTimeSeries", "QueryTimeSeries", "projects.timeSeries.list":
			return fleet.GCP, true
		}
	case "compute":
		// Compute Engine names its methods resource.method
		// (instances.aggregatedList); Azure's Compute operations have no dot.
		if strings.Contains(op, ".") {
			return fleet.GCP, true
		}
		return fleet.Azure, true
	}
	return "", false
}

// OpCount is the requests one operation got.
type OpCount struct {
	Cloud fleet.Provider
	// Op is "service.Op" as the simulators count it.
	Op string
	N  int
}

// Counts are a run's requests per operation, by cloud then operation.
type Counts []OpCount

// countsOf flattens the simulators' counters (service → operation →
// count); an operation of no known cloud is an error, so that a new one is
// never silently left out of a cloud's figures.
func countsOf(raw map[string]map[string]int) (Counts, error) {
	var out Counts
	for svc, ops := range raw {
		for op, n := range ops {
			c, ok := cloudOf(svc, op)
			if !ok {
				return nil, fmt.Errorf("the simulators counted %s.%s, which the bench does not place in a cloud", svc, op)
			}
			out = append(out, OpCount{Cloud: c, Op: svc + "." + op, N: n})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Cloud != out[j].Cloud {
			return out[i].Cloud < out[j].Cloud
		}
		return out[i].Op < out[j].Op
	})
	return out, nil
}

// Total is every request.
func (c Counts) Total() int {
	n := 0
	for _, o := range c {
		n += o.N
	}
	return n
}

// Cloud is one cloud's requests.
func (c Counts) Cloud(p fleet.Provider) int {
	n := 0
	for _, o := range c {
		if o.Cloud == p {
			n += o.N
		}
	}
	return n
}

// Op is one operation's requests.
func (c Counts) Op(op string) int {
	for _, o := range c {
		if o.Op == op {
			return o.N
		}
	}
	return 0
}
