package fleet

import (
	"strings"
	"testing"
)

// TestValidatePaths pins the path and message of the first problem for each
// kind of check, with the problem on the second instance: the checker spells
// a path only for a problem, from the instance index and the parts it
// entered, and these are the paths it spelt when every check built its own.
func TestValidatePaths(t *testing.T) {
	first := `{"id":"a","provider":"aws","region":"us-east-1","instanceType":"p4d.24xlarge"}`
	for _, c := range []struct{ instance, want string }{
		{`{"id":"b","provider":"foo","region":"us-east-1","instanceType":"p4d.24xlarge","utilization":{"window":{"start":"2026-11-16T00:00:00Z","end":"2026-11-30T00:00:00Z"},"gpu":{"avg":1,"p95":2,"max":3}}}`, `instances[1] (id "b"): provider: "foo" is not one of aws, azure, gcp`},
		{`{"id":"b","provider":"aws","region":"","instanceType":"p4d.24xlarge","utilization":{"window":{"start":"2026-11-16T00:00:00Z","end":"2026-11-30T00:00:00Z"},"gpu":{"avg":1,"p95":2,"max":3}}}`, `instances[1] (id "b"): region: missing`},
		{`{"id":"b","provider":"aws","region":"us-east-1","instanceType":"p4d.24xlarge","utilization":{"window":{"start":"2026-11-16T00:00:00Z","end":"2026-11-30T00:00:00Z"},"gpu":{"avg":1,"p95":5,"max":3}}}`, `instances[1] (id "b"): utilization.gpu: p95 5 is above max 3`},
		{`{"id":"b","provider":"aws","region":"us-east-1","instanceType":"p4d.24xlarge","utilization":{"window":{"start":"2026-11-16T00:00:00Z","end":"2026-11-30T00:00:00Z"},"gpu":{"avg":150,"p95":2,"max":3}}}`, `instances[1] (id "b"): utilization.gpu.avg: 150 is outside 0–100`},
		{`{"id":"b","provider":"aws","region":"us-east-1","instanceType":"p4d.24xlarge","utilization":{"window":{"start":"2026-11-16T00:00:00Z","end":"2026-11-30T00:00:00Z"},"gpu":{"avg":1,"p95":2,"max":3},"cpu":{"avg":5,"p95":1,"max":9}}}`, `instances[1] (id "b"): utilization.cpu: avg 5 is above p95 1`},
		{`{"id":"b","provider":"aws","region":"us-east-1","instanceType":"p4d.24xlarge","utilization":{"window":{"start":"2026-11-16T00:00:00Z","end":"2026-11-01T00:00:00Z"},"gpu":{"avg":1,"p95":2,"max":3}}}`, `instances[1] (id "b"): utilization.window: end 2026-11-01T00:00:00Z is not after start 2026-11-16T00:00:00Z`},
		{`{"id":"b","provider":"aws","region":"us-east-1","instanceType":"p4d.24xlarge","utilization":{"window":{"start":"2026-11-16T00:00:00Z","end":"2026-11-30T00:00:00Z"},"gpu":{"avg":1,"p95":2,"max":3},"coverage":2}}`, `instances[1] (id "b"): utilization.coverage: 2 is outside 0–1`},
		{`{"id":"b","provider":"aws","region":"us-east-1","instanceType":"p4d.24xlarge","utilization":{"window":{"start":"2026-11-16T00:00:00Z","end":"2026-11-30T00:00:00Z"},"gpu":{"avg":1,"p95":2,"max":3},"source":" "}}`, `instances[1] (id "b"): utilization.source: blank; name where the figures came from or leave the field out`},
		{`{"id":"b","provider":"aws","region":"us-east-1","instanceType":"p4d.24xlarge","utilization":{"window":{"start":"2026-11-16T00:00:00Z","end":"2026-11-30T00:00:00Z"},"gpu":{"avg":1,"p95":2,"max":3},"samples":[{"time":"2026-11-17T00:00:00Z","gpu":[1]}]}}`, `instances[1] (id "b"): utilization: give either statistics (gpu, gpuMemory, cpu, memory) or samples, not both`},
		{`{"id":"b","provider":"aws","region":"us-east-1","instanceType":"p4d.24xlarge","utilization":{"window":{"start":"2026-11-16T00:00:00Z","end":"2026-11-30T00:00:00Z"},"samples":[{"time":"2026-11-17T00:00:00Z","gpu":[1,200]}]}}`, `instances[1] (id "b"): utilization.samples[0].gpu[1]: 200 is outside 0–100`},
		{`{"id":"b","provider":"aws","region":"us-east-1","instanceType":"p4d.24xlarge","utilization":{"window":{"start":"2026-11-16T00:00:00Z","end":"2026-11-30T00:00:00Z"},"samples":[{"time":"2026-12-17T00:00:00Z","gpu":[1]}]}}`, `instances[1] (id "b"): utilization.samples[0].time: 2026-12-17T00:00:00Z is outside the window 2026-11-16T00:00:00Z to 2026-11-30T00:00:00Z`},
		{`{"id":"b","provider":"aws","region":"us-east-1","instanceType":"p4d.24xlarge","utilization":{"window":{"start":"2026-11-16T00:00:00Z","end":"2026-11-30T00:00:00Z"},"samples":[{"time":"2026-11-17T00:00:00Z","gpu":1,"cpu":101}]}}`, `instances[1] (id "b"): utilization.samples[0].cpu: 101 is outside 0–100`},
		{`{"id":"b","provider":"aws","region":"us-east-1","instanceType":"p4d.24xlarge","utilization":{"window":{"start":"2026-11-16T00:00:00Z","end":"2026-11-30T00:00:00Z"},"gpu":{"avg":1,"p95":2,"max":3}},"usage":{"hoursPerMonth":800}}`, `instances[1] (id "b"): usage.hoursPerMonth: 800 is more than the 744 hours of the longest month`},
		{`{"id":"b","provider":"aws","region":"us-east-1","instanceType":"p4d.24xlarge","utilization":{"window":{"start":"2026-11-16T00:00:00Z","end":"2026-11-30T00:00:00Z"},"gpu":{"avg":1,"p95":2,"max":3}},"usage":{"hoursPerMonth":80,"hoursPerWeek":4}}`, `instances[1] (id "b"): usage: give at most one of hoursPerMonth, hoursPerWeek and schedule; found hoursPerMonth and hoursPerWeek`},
		{`{"id":"b","provider":"aws","region":"us-east-1","instanceType":"p4d.24xlarge","utilization":{"window":{"start":"2026-11-16T00:00:00Z","end":"2026-11-30T00:00:00Z"},"gpu":{"avg":1,"p95":2,"max":3}},"usage":{"schedule":{"timezone":"Mars/X","windows":[{"days":["mon"],"start":"01:00","end":"02:00"}]}}}`, `instances[1] (id "b"): usage.schedule.timezone: "Mars/X" is not a known time zone such as Europe/Berlin or UTC`},
		{`{"id":"b","provider":"aws","region":"us-east-1","instanceType":"p4d.24xlarge","utilization":{"window":{"start":"2026-11-16T00:00:00Z","end":"2026-11-30T00:00:00Z"},"gpu":{"avg":1,"p95":2,"max":3}},"usage":{"schedule":{"windows":[]}}}`, `instances[1] (id "b"): usage.schedule.windows: empty; give at least one window (an instance that never runs is state: stopped)`},
		{`{"id":"b","provider":"aws","region":"us-east-1","instanceType":"p4d.24xlarge","utilization":{"window":{"start":"2026-11-16T00:00:00Z","end":"2026-11-30T00:00:00Z"},"gpu":{"avg":1,"p95":2,"max":3}},"workload":{"type":"nope"}}`, `instances[1] (id "b"): workload.type: "nope" is not one of training, fine-tuning, hpo, inference, development, batch`},
		{`{"id":"b","provider":"aws","region":"us-east-1","instanceType":"p4d.24xlarge","utilization":{"window":{"start":"2026-11-16T00:00:00Z","end":"2026-11-30T00:00:00Z"},"gpu":{"avg":1,"p95":2,"max":3}},"workload":{"type":"training","trainingRunHours":5}}`, `instances[1] (id "b"): workload.trainingRunHours: given without trainingRun; name the run it belongs to`},
		{`{"id":"b","provider":"aws","region":"us-east-1","instanceType":"p4d.24xlarge","utilization":{"window":{"start":"2026-11-16T00:00:00Z","end":"2026-11-30T00:00:00Z"},"gpu":{"avg":1,"p95":2,"max":3}},"workload":{"type":"training","precision":"fp7"}}`, `instances[1] (id "b"): workload.precision: "fp7" is not one of fp32, fp16, bf16, int8, int4`},
		{`{"id":"b","provider":"aws","region":"us-east-1","instanceType":"p4d.24xlarge","utilization":{"window":{"start":"2026-11-16T00:00:00Z","end":"2026-11-30T00:00:00Z"},"gpu":{"avg":1,"p95":2,"max":3}},"gpu":{"count":100}}`, `instances[1] (id "b"): gpu.count: 100 is above the limit of 64`},
		{`{"id":"b","provider":"aws","region":"us-east-1","instanceType":"p4d.24xlarge","utilization":{"window":{"start":"2026-11-16T00:00:00Z","end":"2026-11-30T00:00:00Z"},"gpu":{"avg":1,"p95":2,"max":3}},"tags":{" ":"x"}}`, `instances[1] (id "b"): tags: a tag has an empty key`},
		{`{"id":"b","provider":"aws","region":"us-east-1","instanceType":"p4d.24xlarge","utilization":{"window":{"start":"2026-11-16T00:00:00Z","end":"2026-11-30T00:00:00Z"},"gpu":{"avg":1,"p95":2,"max":3}},"lifecycle":"committed","commitment":{"term":"2y"}}`, `instances[1] (id "b"): commitment.term: "2y" is not one of 1y, 3y, 5y`},
		{`{"id":"b","provider":"aws","region":"us-east-1","instanceType":"p4d.24xlarge","utilization":{"window":{"start":"2026-11-16T00:00:00Z","end":"2026-11-30T00:00:00Z"},"gpu":{"avg":1,"p95":2,"max":3}},"commitment":{"term":"1y"}}`, `instances[1] (id "b"): commitment: is set but lifecycle is "on-demand", not committed`},
		{`{"id":"b","provider":"aws","region":"us-east-1","instanceType":"p4d.24xlarge","utilization":{"window":{"start":"2026-11-16T00:00:00Z","end":"2026-11-30T00:00:00Z"},"gpu":{"avg":1,"p95":2,"max":3}},"instanceStoreGB":-1}`, `instances[1] (id "b"): instanceStoreGB: -1 is negative`},
		{`{"id":"b","provider":"aws","region":"us-east-1","instanceType":"p4d.24xlarge","utilization":{"window":{"start":"2026-11-16T00:00:00Z","end":"2026-11-30T00:00:00Z"},"gpu":{"avg":1,"p95":2,"max":3}},"hourlyPrice":"-1"}`, `instances[1] (id "b"): hourlyPrice: want a number, got the string "-1"`},
		{`{"id":"b","provider":"aws","region":"us-east-1","instanceType":"p4d.24xlarge","utilization":{"window":{"start":"2026-11-16T00:00:00Z","end":"2026-11-30T00:00:00Z"},"gpu":{"avg":1,"p95":2,"max":3}},"managedBy":{"kind":" "}}`, `instances[1] (id "b"): managedBy.kind: missing; name the kind of owner, e.g. auto-scaling-group`},
		{`{"id":"a","provider":"aws","region":"us-east-1","instanceType":"p4d.24xlarge","utilization":{"window":{"start":"2026-11-16T00:00:00Z","end":"2026-11-30T00:00:00Z"},"gpu":{"avg":1,"p95":2,"max":3}}}`, `instances[1] (id "a"): id: "a" is already the id of instances[0]`},
		{`{"id":"b","provider":"aws","region":"us-east-1","instanceType":"p4d.24xlarge","utilization":{"window":{"start":"2026-11-16T00:00:00Z","end":"2026-11-30T00:00:00Z"},"gpu":{"avg":1,"p95":2,"max":3}},"state":"stopped","stoppedAllocated":true}`, `instances[1] (id "b"): stoppedAllocated: true with state stopped; a machine still allocated is billed: its state is running`},
		{`{"id":"b","provider":"aws","region":"us-east-1","instanceType":"p4d.24xlarge","utilization":{"samples":[{"time":"2026-11-17T00:00:00Z","gpu":[1,2]}]},"gpu":{"count":1}}`, `instances[1] (id "b"): utilization.samples[0].gpu: 2 values, but the instance has 1 GPUs`},
	} {
		doc := `{"apiVersion":"gpufinops/v1","kind":"Fleet","metadata":{"name":"x"},"instances":[` + first + "," + c.instance + "]}"
		_, err := Parse("f.json", []byte(doc))
		if err == nil {
			t.Errorf("%s: no error, want %s", c.instance, c.want)
			continue
		}
		if got := err.Error(); !strings.HasSuffix(got, c.want) {
			t.Errorf("%s:\n got %s\nwant …%s", c.instance, got, c.want)
		}
	}
}
