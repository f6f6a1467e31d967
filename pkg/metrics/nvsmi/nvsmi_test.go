package nvsmi

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/gpufinops/gpufinops/pkg/fleet"
)

func fleetOf(ids ...string) []fleet.Instance {
	var out []fleet.Instance
	for _, id := range ids {
		out = append(out, fleet.Instance{ID: id, Name: "name-" + id, Provider: fleet.AWS, Region: "us-east-1", InstanceType: "g4dn.xlarge", Lifecycle: fleet.OnDemand, State: fleet.Running,
			Utilization: &fleet.Utilization{GPU: &fleet.Stats{Avg: 50, P95: 60, Max: 70}}})
	}
	return out
}

func TestReadByFileName(t *testing.T) {
	s, err := Open("testdata/nb-g4dn-1.csv")
	if err != nil {
		t.Fatal(err)
	}
	inst := fleetOf("i-1", "nb-g4dn-1")
	res, err := s.Read(context.Background(), inst, fleet.TimeRange{})
	if err != nil {
		t.Fatal(err)
	}
	if inst[0].Utilization.GPU == nil || inst[0].Utilization.Samples != nil {
		t.Errorf("an instance without a file was changed: %+v", inst[0].Utilization)
	}
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	// Minutes 12:00 (two readings averaged), 12:01 and 12:03 of a window
	// 12:00–12:04: 3 of 4 minutes.
	cov := 0.75
	want := &fleet.Utilization{
		Window: &fleet.TimeRange{Start: t0, End: t0.Add(4 * time.Minute)},
		Samples: []fleet.Sample{
			{Time: t0, GPU: fleet.PerGPU{20}, GPUMemory: fleet.PerGPU{37.5}},
			{Time: t0.Add(time.Minute), GPU: fleet.PerGPU{2}, GPUMemory: fleet.PerGPU{25}},
			{Time: t0.Add(3 * time.Minute), GPU: fleet.PerGPU{4}, GPUMemory: fleet.PerGPU{25}},
		},
		Source:   "nvidia-smi:nb-g4dn-1.csv",
		Coverage: &cov,
	}
	if d := cmp.Diff(want, inst[1].Utilization); d != "" {
		t.Errorf("utilization (-want +got):\n%s", d)
	}
	if c := res.Coverage["nb-g4dn-1"]; c.Fraction != 0.75 || c.Source != "nvidia-smi:nb-g4dn-1.csv" || len(res.Coverage) != 1 {
		t.Errorf("coverage = %+v", res.Coverage)
	}
	if len(res.Notes) != 0 {
		t.Errorf("notes = %v", res.Notes)
	}
	// The filled utilization is a valid fleet.
	f := &fleet.Fleet{APIVersion: fleet.APIVersion, Kind: fleet.Kind, Instances: inst[1:]}
	if err := f.Validate(); err != nil {
		t.Error(err)
	}
}

func TestReadByHostColumnAndWindow(t *testing.T) {
	s, err := Open("testdata/two-hosts.csv")
	if err != nil {
		t.Fatal(err)
	}
	inst := fleetOf("i-0abc", "i-2")
	inst[1].Name = "train-1"
	t0 := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	window := fleet.TimeRange{Start: t0, End: t0.Add(48 * time.Hour)}
	res, err := s.Read(context.Background(), inst, window)
	if err != nil {
		t.Fatal(err)
	}
	u := inst[1].Utilization
	if len(u.Samples) != 1 || !cmp.Equal(u.Samples[0].GPU, fleet.PerGPU{90, 10}) || !cmp.Equal(u.Samples[0].GPUMemory, fleet.PerGPU{50, 25}) {
		t.Errorf("train-1 samples = %+v", u.Samples)
	}
	if !u.Samples[0].Time.Equal(t0.Add(12*time.Hour)) || *u.Window != window {
		t.Errorf("hourly bucket and window: %+v %+v", u.Samples[0].Time, u.Window)
	}
	if got := res.Coverage["i-2"].Fraction; got != 0.0208 {
		t.Errorf("coverage = %v, want 1/48", got)
	}
	if inst[0].Utilization.Samples[0].GPU[0] != 0 {
		t.Errorf("i-0abc = %+v", inst[0].Utilization)
	}
	if sum := u.Summarize(); sum.GPU.Max != 90 {
		t.Errorf("busiest GPU: %+v", sum.GPU)
	}
}

func TestUnmatched(t *testing.T) {
	s, err := Open("testdata/two-hosts.csv", "testdata/nb-g4dn-1.csv")
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.Read(context.Background(), fleetOf("train-1"), fleet.TimeRange{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`nvidia-smi: two-hosts.csv: host "i-0abc" is no instance's id or name in the fleet`,
		`nvidia-smi: nb-g4dn-1.csv: host "nb-g4dn-1" is no instance's id or name in the fleet`,
	}
	if d := cmp.Diff(want, res.Notes); d != "" {
		t.Errorf("notes (-want +got):\n%s", d)
	}
	_, err = s.Read(context.Background(), fleetOf("x"), fleet.TimeRange{})
	if err == nil || err.Error() != "nvidia-smi: no host in two-hosts.csv, nb-g4dn-1.csv (train-1, i-0abc, nb-g4dn-1) is an instance's id or name in the fleet" {
		t.Errorf("err = %v", err)
	}
}

func TestMalformed(t *testing.T) {
	dir := t.TempDir()
	head := "timestamp, index, utilization.gpu [%], memory.used [MiB], memory.total [MiB]\n"
	row := "2026/11/30 12:00:01.123, 0, 10 %, 1 MiB, 4 MiB\n"
	for _, tc := range []struct{ name, body, want string }{
		{"nb-1.csv", "", `nb-1.csv: line 7: utilization.gpu: "abc" is not a number`},
		{"empty.csv", "", "empty.csv: empty; want nvidia-smi's CSV with a header line"},
		{"header.csv", "time,util\n1,2\n", "header.csv: line 1: no timestamp column; want nvidia-smi --query-gpu=timestamp,index,utilization.gpu,memory.used,memory.total --format=csv"},
		{"only-header.csv", head, "only-header.csv: no readings after the header"},
		{"time.csv", head + "yesterday, 0, 1 %, 1 MiB, 4 MiB\n", `time.csv: line 2: timestamp: "yesterday" is not a time like 2026/11/30 12:00:01.123`},
		{"fields.csv", head + row + "2026/11/30 12:00:01.123, 0, 10 %\n", "fields.csv: line 3: 3 fields, want 5 as in the header"},
		{"index.csv", head + "2026/11/30 12:00:01.123, -1, 10 %, 1 MiB, 4 MiB\n", `index.csv: line 2: index: "-1" is not a GPU index`},
		{"pct.csv", head + "2026/11/30 12:00:01.123, 0, 140 %, 1 MiB, 4 MiB\n", "pct.csv: line 2: utilization.gpu: 140 % is outside 0–100"},
		{"mem.csv", head + "2026/11/30 12:00:01.123, 0, 10 %, 5 MiB, 4 MiB\n", "mem.csv: line 2: memory.used: 5 is outside 0–4"},
		{"memnum.csv", head + "2026/11/30 12:00:01.123, 0, 10 %, lots, 4 MiB\n", `memnum.csv: line 2: memory.used: "lots" is not a number`},
		{"quote.csv", head + "2026/11/30 12:00:01.123, 0, \"10 %, 1 MiB, 4 MiB\n", "quote.csv: line 2"},
		{"missing.csv", "-", "missing.csv: no such file or directory"},
		{"util-nan.csv", head + "2026/11/30 12:00:01.123, 0, NaN %, 1 MiB, 4 MiB\n", "util-nan.csv: line 2: utilization.gpu: NaN % is outside 0–100"},
		{"util-nan2.csv", head + "2026/11/30 12:00:01.123, 0, nan %, 1 MiB, 4 MiB\n", "util-nan2.csv: line 2: utilization.gpu: nan % is outside 0–100"},
		{"util-inf.csv", head + "2026/11/30 12:00:01.123, 0, +Inf %, 1 MiB, 4 MiB\n", "util-inf.csv: line 2: utilization.gpu: +Inf % is outside 0–100"},
		{"util-ninf.csv", head + "2026/11/30 12:00:01.123, 0, -Infinity %, 1 MiB, 4 MiB\n", "util-ninf.csv: line 2: utilization.gpu: -Infinity % is outside 0–100"},
		{"util-inf2.csv", head + "2026/11/30 12:00:01.123, 0, Inf %, 1 MiB, 4 MiB\n", "util-inf2.csv: line 2: utilization.gpu: Inf % is outside 0–100"},
		{"util-neg.csv", head + "2026/11/30 12:00:01.123, 0, -1 %, 1 MiB, 4 MiB\n", "util-neg.csv: line 2: utilization.gpu: -1 % is outside 0–100"},
		{"util-above.csv", head + "2026/11/30 12:00:01.123, 0, 100.6 %, 1 MiB, 4 MiB\n", "util-above.csv: line 2: utilization.gpu: 100.6 % is outside 0–100"},
		{"util-huge.csv", head + "2026/11/30 12:00:01.123, 0, 1e300 %, 1 MiB, 4 MiB\n", "util-huge.csv: line 2: utilization.gpu: 1e300 % is outside 0–100"},
		{"util-1e309.csv", head + "2026/11/30 12:00:01.123, 0, 1e309 %, 1 MiB, 4 MiB\n", `util-1e309.csv: line 2: utilization.gpu: "1e309 %" is not a number`},
		{"used-nan.csv", head + "2026/11/30 12:00:01.123, 0, 10 %, NaN MiB, 4 MiB\n", "used-nan.csv: line 2: memory.used: NaN is outside 0–1048576 MiB"},
		{"used-inf.csv", head + "2026/11/30 12:00:01.123, 0, 10 %, +Inf MiB, 4 MiB\n", "used-inf.csv: line 2: memory.used: +Inf is outside 0–1048576 MiB"},
		{"used-neg.csv", head + "2026/11/30 12:00:01.123, 0, 10 %, -1 MiB, 4 MiB\n", "used-neg.csv: line 2: memory.used: -1 is outside 0–1048576 MiB"},
		{"total-nan.csv", head + "2026/11/30 12:00:01.123, 0, 10 %, 1 MiB, nan MiB\n", "total-nan.csv: line 2: memory.total: NaN is outside 0–1048576 MiB"},
		{"total-inf.csv", head + "2026/11/30 12:00:01.123, 0, 10 %, 1 MiB, Infinity MiB\n", "total-inf.csv: line 2: memory.total: +Inf is outside 0–1048576 MiB"},
		{"total-huge.csv", head + "2026/11/30 12:00:01.123, 0, 10 %, 1 MiB, 1e12 MiB\n", "total-huge.csv: line 2: memory.total: 1000000000000 is outside 0–1048576 MiB"},
		{"index-huge.csv", head + "2026/11/30 12:00:01.123, 99999999999, 10 %, 1 MiB, 4 MiB\n", `index-huge.csv: line 2: index: "99999999999" is not a GPU index (0–63)`},
		{"index-64.csv", head + "2026/11/30 12:00:01.123, 64, 10 %, 1 MiB, 4 MiB\n", `index-64.csv: line 2: index: "64" is not a GPU index (0–63)`},
		{"year.csv", head + "0001/01/01 00:00:00, 0, 10 %, 1 MiB, 4 MiB\n", `year.csv: line 2: timestamp: "0001/01/01 00:00:00" is outside the years 2000–2200`},
		{"span.csv", head + "2001/01/01 00:00:00, 0, 10 %, 1 MiB, 4 MiB\n2199/01/01 00:00:00, 0, 10 %, 1 MiB, 4 MiB\n", "span.csv: the readings of span span 2001-01-01T00:00:00Z to 2199-01-01T00:00:00Z, more than 10 years"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join("testdata", tc.name)
			if tc.name != "nb-1.csv" {
				path = filepath.Join(dir, tc.name)
				if tc.body != "-" {
					if err := os.WriteFile(path, []byte(tc.body), 0o644); err != nil {
						t.Fatal(err)
					}
				}
			}
			_, err := Open(path)
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("err = %v\nwant %s", err, tc.want)
			}
		})
	}
}

// Converters that round put readings a hair above 100; those read as 100.
func TestToleranceClamps(t *testing.T) {
	head := "timestamp, index, utilization.gpu [%], memory.used [MiB], memory.total [MiB]\n"
	hosts, err := parse("t.csv", strings.NewReader(head+"2026/11/30 12:00:01, 0, 100.4 %, 4.01 MiB, 4 MiB\n"))
	if err != nil {
		t.Fatal(err)
	}
	r := hosts[0].readings[0]
	if r.util != 100 || r.memPercent == nil || *r.memPercent != 100 {
		t.Errorf("got %v and %v", r.util, *r.memPercent)
	}
}
