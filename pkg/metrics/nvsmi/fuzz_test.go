package nvsmi

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/gpufinops/gpufinops/pkg/fleet"
)

// FuzzParse: the reader never panics; every error names the file on one
// line; every value it accepts is finite and in range, and the utilization
// built from the readings passes the fleet's own validation.
func FuzzParse(f *testing.F) {
	head := "timestamp, index, utilization.gpu [%], memory.used [MiB], memory.total [MiB]\n"
	for _, s := range []string{
		head + "2026/11/30 12:00:01.123, 0, 20 %, 6144 MiB, 16384 MiB\n2026/11/30 12:01:00.000, 0, 2 %, 4096 MiB, 16384 MiB\n",
		head + "2026/11/30 12:00:01.123, 0, [N/A], [N/A], [N/A]\n",
		head + "2026/11/30 12:00:01, 1, 100 %, 16384 MiB, 16384 MiB\n",
		head + "2026-11-30T12:00:00Z, 0, 50, 1, 2\n",
		"host, timestamp, index, utilization.gpu [%]\nnb-1, 2026/11/30 12:00:00, 0, 5\nnb-2, 2026/11/30 12:00:00, 0, 7\n",
		head + "2026/11/30 12:00:01.123, 0, NaN %, 1 MiB, 2 MiB\n",
		head + "2026/11/30 12:00:01.123, 0, +Inf %, 1 MiB, 2 MiB\n",
		head + "2026/11/30 12:00:01.123, 0, 100.4 %, 1 MiB, 2 MiB\n",
		head + "2026/11/30 12:00:01.123, 0, 5 %, NaN MiB, 2 MiB\n",
		head + "2026/11/30 12:00:01.123, 0, 5 %, 1 MiB, Inf MiB\n",
		head + "2026/11/30 12:00:01.123, 0, 5 %, 3 MiB, 2 MiB\n",
		head + "0001/01/01 00:00:00, 0, 5 %, 1 MiB, 2 MiB\n9999/12/31 23:59:59, 0, 5 %, 1 MiB, 2 MiB\n",
		head + "2026/11/30 12:00:01.123, 99999999999, 5 %, 1 MiB, 2 MiB\n",
		head + "2026/11/30 12:00:01.123, -1, 5 %, 1 MiB, 2 MiB\n",
		head + "2026/11/30 12:00:01.123, 0, 5 %\n",
		head + "\"2026/11/30 12:00:01.123\n\", 0, 5, 1, 2\n",
		"\ufefftimestamp,utilization.gpu\n2026/11/30 12:00:00,1e309\n",
		"", "\n", "timestamp\n", "utilization.gpu\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		hosts, err := parse("f.csv", bytes.NewReader(data))
		if err != nil {
			if !strings.HasPrefix(err.Error(), "f.csv: ") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		if len(hosts) == 0 {
			t.Fatal("no hosts and no error")
		}
		for _, h := range hosts {
			if len(h.readings) == 0 {
				t.Fatalf("host %q without readings", h.name)
			}
			for _, r := range h.readings {
				if math.IsNaN(r.util) || r.util < 0 || r.util > 100 {
					t.Fatalf("utilization %v accepted", r.util)
				}
				if r.memPercent != nil && (math.IsNaN(*r.memPercent) || *r.memPercent < 0 || *r.memPercent > 100) {
					t.Fatalf("memory %v%% accepted", *r.memPercent)
				}
				if r.gpu < 0 || r.gpu >= fleet.MaxGPUsPerInstance {
					t.Fatalf("GPU index %d accepted", r.gpu)
				}
			}
			u, frac := h.utilization(fleet.TimeRange{})
			if u == nil {
				t.Fatalf("host %q: readings but no utilization", h.name)
			}
			if !(frac > 0 && frac <= 1) {
				t.Fatalf("coverage %v", frac)
			}
			u.Coverage = &frac
			u.Source = SourceName
			fl := &fleet.Fleet{APIVersion: fleet.APIVersion, Kind: fleet.Kind, Instances: []fleet.Instance{{
				ID: "i-1", Provider: fleet.AWS, Region: "us-east-1", InstanceType: "p4d.24xlarge",
				Lifecycle: fleet.OnDemand, State: fleet.Running, Utilization: u,
			}}}
			if err := fl.Validate(); err != nil {
				t.Fatalf("the utilization read does not validate: %v", err)
			}
		}
	})
}
