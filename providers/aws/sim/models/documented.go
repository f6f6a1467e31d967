package models

import "fmt"

// Documented request limits that the models leave to documentation
// strings; Request checks them after the model (providers/aws/sim/FACTS.md
// lists each with its source).
var documented = []struct {
	service, op string
	check       func(in map[string]any) []Violation
}{
	{"monitoring", "GetMetricData", func(in map[string]any) []Violation {
		// API_GetMetricData.html: up to 500 MetricDataQuery structures.
		qs, _ := in["MetricDataQueries"].([]any)
		var vs []Violation
		if len(qs) > 500 {
			vs = append(vs, Violation{"GetMetricDataInput.MetricDataQueries", fmt.Sprintf("%d queries; GetMetricData takes at most 500", len(qs))})
		}
		for i, q := range qs {
			qm, _ := q.(map[string]any)
			stat, _ := qm["MetricStat"].(map[string]any)
			for _, p := range []any{qm["Period"], stat["Period"]} {
				// MetricStat.Period: 1, 5, 10, 20, 30 or a multiple of 60.
				if n, ok := p.(int64); ok && n > 0 && n%60 != 0 && n != 1 && n != 5 && n != 10 && n != 20 && n != 30 {
					vs = append(vs, Violation{fmt.Sprintf("GetMetricDataInput.MetricDataQueries[%d]", i), fmt.Sprintf("period %d is neither 1, 5, 10, 20, 30 nor a multiple of 60", n)})
				}
			}
		}
		return vs
	}},
	{"ec2", "DescribeInstances", func(in map[string]any) []Violation {
		// API_DescribeInstances.html: MaxResults 5 to 1000, not with InstanceIds.
		n, ok := in["MaxResults"].(int64)
		if !ok {
			return nil
		}
		var vs []Violation
		if n < 5 || n > 1000 {
			vs = append(vs, Violation{"DescribeInstancesRequest.MaxResults", fmt.Sprintf("%d is outside 5 to 1000", n)})
		}
		if _, ids := in["InstanceIds"]; ids {
			vs = append(vs, Violation{"DescribeInstancesRequest.MaxResults", "cannot be given with InstanceIds"})
		}
		return vs
	}},
}

func (m *Model) documentedLimits(op string, v any) []Violation {
	in, _ := v.(map[string]any)
	var vs []Violation
	for _, d := range documented {
		if d.service == m.Service && d.op == op {
			vs = append(vs, d.check(in)...)
		}
	}
	return vs
}
