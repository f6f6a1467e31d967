package fleet

import (
	"encoding/json"
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func ptr[T any](v T) *T { return &v }

func TestPerGPUUnmarshal(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    PerGPU
		wantErr string
	}{
		{"42", PerGPU{42}, ""},
		{" [1, 2.5, 3] ", PerGPU{1, 2.5, 3}, ""},
		{"[]", PerGPU{}, ""},
		{`"x"`, nil, "want a number or a list of numbers, one per GPU"},
		{`["x"]`, nil, "json: cannot unmarshal string into Go value of type float64"},
	} {
		var p PerGPU
		err := json.Unmarshal([]byte(tc.in), &p)
		if tc.wantErr != "" {
			if err == nil || err.Error() != tc.wantErr {
				t.Errorf("%s: error %v, want %q", tc.in, err, tc.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.in, err)
			continue
		}
		if !cmp.Equal(p, tc.want) {
			t.Errorf("%s: got %v want %v", tc.in, p, tc.want)
		}
	}
}

func TestPerGPUMarshal(t *testing.T) {
	for _, tc := range []struct {
		in   PerGPU
		want string
	}{{PerGPU{42}, "42"}, {PerGPU{1, 2.5}, "[1,2.5]"}, {PerGPU{}, "[]"}} {
		b, err := json.Marshal(tc.in)
		if err != nil || string(b) != tc.want {
			t.Errorf("%v: got %s, %v; want %s", tc.in, b, err, tc.want)
		}
	}
}

func TestPerGPUMax(t *testing.T) {
	if _, ok := (PerGPU{}).Max(); ok {
		t.Error("empty PerGPU has a max")
	}
	if m, ok := (PerGPU{3, 9, 1}).Max(); !ok || m != 9 {
		t.Errorf("got %v %v want 9", m, ok)
	}
	if m, _ := (PerGPU{-1, -5}).Max(); m != -1 {
		t.Errorf("got %v want -1", m)
	}
}

func TestPercentile(t *testing.T) {
	sorted := []float64{1, 2, 3, 4}
	for _, tc := range []struct{ p, want float64 }{
		{0, 1}, {100, 4}, {50, 2.5}, {95, 3.85}, {25, 1.75},
	} {
		if got := Percentile(sorted, tc.p); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("p%v: got %v want %v", tc.p, got, tc.want)
		}
	}
	if got := Percentile(nil, 95); got != 0 {
		t.Errorf("empty: got %v", got)
	}
	if got := Percentile([]float64{7}, 95); got != 7 {
		t.Errorf("one value: got %v", got)
	}
}

func TestStatsOf(t *testing.T) {
	if StatsOf(nil) != nil {
		t.Error("StatsOf(nil) is not nil")
	}
	// 1..20: mean 10.5, p95 at rank 18.05 → 19.05, max 20; input order does not matter.
	var v []float64
	for i := 20; i >= 1; i-- {
		v = append(v, float64(i))
	}
	want := &Stats{Avg: 10.5, P95: 19.05, Max: 20}
	if got := StatsOf(v); !cmp.Equal(got, want) {
		t.Errorf("got %+v want %+v", got, want)
	}
	if v[0] != 20 {
		t.Error("StatsOf sorted its input in place")
	}
	// Rounded to two decimals.
	if got := StatsOf([]float64{0, 0, 1}); got.Avg != 0.33 {
		t.Errorf("avg %v want 0.33", got.Avg)
	}
}

func TestSummarize(t *testing.T) {
	t0 := time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)
	window := &TimeRange{Start: t0, End: t0.Add(168 * time.Hour)}
	agg := &Stats{Avg: 35, P95: 46, Max: 71}

	if (*Utilization)(nil).Summarize() != nil {
		t.Error("nil utilization has a summary")
	}
	if (&Utilization{CPU: agg}).Summarize() != nil {
		t.Error("utilization without GPU data has a summary")
	}

	got := (&Utilization{Window: window, GPU: agg, CPU: agg}).Summarize()
	want := &Summary{Source: "aggregate", WindowHours: 168, GPU: agg, CPU: agg}
	if !cmp.Equal(got, want) {
		t.Errorf("aggregate: %s", cmp.Diff(want, got))
	}
	if got := (&Utilization{GPU: agg}).Summarize(); got.WindowHours != 0 {
		t.Errorf("aggregate without window: %v hours", got.WindowHours)
	}

	// Samples out of order, two GPUs (the busiest counts), every 30 minutes,
	// one without GPU data.
	samples := []Sample{
		{Time: t0.Add(time.Hour), GPU: PerGPU{10, 90}, GPUMemory: PerGPU{50, 60}, CPU: ptr(20.0)},
		{Time: t0, GPU: PerGPU{30, 20}, GPUMemory: PerGPU{40, 10}, CPU: ptr(10.0), Memory: ptr(5.0)},
		{Time: t0.Add(30 * time.Minute), GPU: PerGPU{50, 0}},
		{Time: t0.Add(90 * time.Minute)},
	}
	got = (&Utilization{Samples: samples}).Summarize()
	want = &Summary{
		Source:      "samples",
		WindowHours: 2, // 00:00 to 01:30 plus one 30-minute step
		SampleCount: 3,
		GPU:         &Stats{Avg: 56.67, P95: 86, Max: 90},
		GPUMemory:   &Stats{Avg: 50, P95: 59, Max: 60},
		CPU:         &Stats{Avg: 15, P95: 19.5, Max: 20},
		Memory:      &Stats{Avg: 5, P95: 5, Max: 5},
	}
	if !cmp.Equal(got, want) {
		t.Errorf("samples: %s", cmp.Diff(want, got))
	}
	if samples[0].Time != t0.Add(time.Hour) {
		t.Error("Summarize reordered the caller's samples")
	}
	// A window, when given, is the window.
	if got := (&Utilization{Window: window, Samples: samples}).Summarize(); got.WindowHours != 168 {
		t.Errorf("window hours %v want 168", got.WindowHours)
	}
	// Samples without any GPU value give no summary.
	if (&Utilization{Samples: []Sample{{Time: t0, CPU: ptr(1.0)}}}).Summarize() != nil {
		t.Error("samples without GPU data have a summary")
	}
}

func TestSampleWindowAndStep(t *testing.T) {
	t0 := time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)
	if got := SampleWindow(nil); got != (TimeRange{}) {
		t.Errorf("empty: %v", got)
	}
	one := []Sample{{Time: t0}}
	if SampleStep(one) != time.Hour {
		t.Error("one sample: step is not an hour")
	}
	if got := SampleWindow(one).Hours(); got != 1 {
		t.Errorf("one sample covers %v hours", got)
	}
	// Gaps of 5, 5, 5 and 60 minutes: the median gap is 5 minutes.
	s := []Sample{{Time: t0}, {Time: t0.Add(5 * time.Minute)}, {Time: t0.Add(10 * time.Minute)},
		{Time: t0.Add(15 * time.Minute)}, {Time: t0.Add(75 * time.Minute)}}
	if got := SampleStep(s); got != 5*time.Minute {
		t.Errorf("step %v want 5m", got)
	}
	if got := SampleWindow(s); got.End != t0.Add(80*time.Minute) || got.Start != t0 {
		t.Errorf("window %v", got)
	}
}

func TestMonthlyHours(t *testing.T) {
	weekdays := &Schedule{Windows: []Window{{Days: []string{"mon", "tue", "wed", "thu", "fri"}, Start: "08:00", End: "20:00"}}}
	for _, tc := range []struct {
		name string
		in   Instance
		want float64
	}{
		{"24/7", Instance{State: Running}, 730},
		{"stopped", Instance{State: Stopped, Usage: Usage{HoursPerMonth: ptr(100.0)}}, 0},
		{"hours per month", Instance{State: Running, Usage: Usage{HoursPerMonth: ptr(200.0)}}, 200},
		{"hours per week", Instance{State: Running, Usage: Usage{HoursPerWeek: ptr(40.0)}}, 40 * 730 / 168.0},
		{"schedule", Instance{State: Running, Usage: Usage{Schedule: weekdays}}, 60 * 730 / 168.0},
		{"broken schedule is 24/7", Instance{State: Running, Usage: Usage{Schedule: &Schedule{Windows: []Window{{Start: "x"}}}}}, 730},
	} {
		if got := tc.in.MonthlyHours(); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("%s: got %v want %v", tc.name, got, tc.want)
		}
	}
}

func TestScheduleHoursPerWeek(t *testing.T) {
	for _, tc := range []struct {
		name    string
		windows []Window
		want    float64
		wantErr string
	}{
		{"none", nil, 0, ""},
		{"weekdays 08-20", []Window{{Days: []string{"mon", "tue", "wed", "thu", "fri"}, Start: "08:00", End: "20:00"}}, 60, ""},
		{"to midnight", []Window{{Days: []string{"sat", "sun"}, Start: "00:00", End: "24:00"}}, 48, ""},
		{"minutes", []Window{{Days: []string{"mon"}, Start: "09:15", End: "10:45"}}, 1.5, ""},
		{"overlap counts once", []Window{
			{Days: []string{"mon"}, Start: "08:00", End: "12:00"},
			{Days: []string{"mon", "mon"}, Start: "10:00", End: "14:00"},
		}, 6, ""},
		{"bad start", []Window{{Days: []string{"mon"}, Start: "8:00", End: "12:00"}}, 0, `windows[0].start: "8:00" is not a time of day in HH:MM form`},
		{"bad end", []Window{{Days: []string{"mon"}, Start: "08:00", End: "24:30"}}, 0, `windows[0].end: "24:30" is not a time of day between 00:00 and 24:00`},
		{"bad minutes", []Window{{Days: []string{"mon"}, Start: "08:60", End: "12:00"}}, 0, `windows[0].start: "08:60" is not a time of day between 00:00 and 24:00`},
		{"empty range", []Window{{Days: []string{"mon"}, Start: "12:00", End: "12:00"}}, 0, "windows[0]: end 12:00 is not after start 12:00"},
		{"bad day", []Window{{Days: []string{"Mon"}, Start: "08:00", End: "12:00"}}, 0, `windows[0].days[0]: "Mon" is not one of mon, tue, wed, thu, fri, sat, sun`},
	} {
		got, err := (&Schedule{Windows: tc.windows}).HoursPerWeek()
		switch {
		case tc.wantErr != "":
			if err == nil || err.Error() != tc.wantErr {
				t.Errorf("%s: error %v, want %q", tc.name, err, tc.wantErr)
			}
		case err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case got != tc.want:
			t.Errorf("%s: got %v want %v", tc.name, got, tc.want)
		}
	}
}

func TestTimeRangeHours(t *testing.T) {
	t0 := time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)
	if got := (TimeRange{Start: t0, End: t0.Add(90 * time.Minute)}).Hours(); got != 1.5 {
		t.Errorf("got %v", got)
	}
}

func TestProviderValid(t *testing.T) {
	for _, p := range Providers {
		if !p.Valid() {
			t.Errorf("%s is not valid", p)
		}
	}
	if Provider("oracle").Valid() || Provider("").Valid() {
		t.Error("unknown provider is valid")
	}
}
