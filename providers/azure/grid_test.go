package azure

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/gpufinops/gpufinops/pkg/fleet"
)

// TestCollectReadsTheBatchAnswer: null averages fall back to the maximum,
// a datapoint with neither is absent (never 0), points outside the window
// are left out, values are kept within 0–100, GPUs are in index order and
// the index-less aggregate counts only where no index has a value.
func TestCollectReadsTheBatchAnswer(t *testing.T) {
	start := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	answer := `{"values":[{"resourceid":"/vm/1","value":[
	 {"name":{"value":"` + DefaultGPUMetric + `"},"timeseries":[
	  {"metadatavalues":[{"name":{"value":"Index"},"value":"1"}],"data":[
	   {"timeStamp":"2026-11-29T23:00:00Z","average":50},
	   {"timeStamp":"2026-11-30T00:00:00Z","average":120},
	   {"timeStamp":"2026-11-30T01:00:00Z","average":null,"maximum":30},
	   {"timeStamp":"2026-11-30T02:00:00Z","average":null},
	   {"timeStamp":"2026-11-30T03:00:00Z","average":10}]},
	  {"metadatavalues":[{"name":{"value":"index"},"value":"0"}],"data":[
	   {"timeStamp":"2026-11-30T00:00:00Z","average":-4},
	   {"timeStamp":"2026-11-30T01:00:00Z","average":7.5}]},
	  {"metadatavalues":[],"data":[
	   {"timeStamp":"2026-11-30T00:00:00Z","average":99},
	   {"timeStamp":"2026-11-30T02:00:00Z","average":66}]}]},
	 {"name":{"value":"` + MetricCPU + `"},"timeseries":[{"data":[
	   {"timeStamp":"2026-11-30T02:00:00Z","average":12.5}]}]}]}]}`
	var res batchResponse
	if err := json.Unmarshal([]byte(answer), &res); err != nil {
		t.Fatal(err)
	}
	p := &Provider{az: optionsFrom(nil)}
	g := &grid{}
	p.collect(g, res.Values[0], start, time.Hour, 3)
	cpu := 12.5
	want := []fleet.Sample{
		{Time: start, GPU: fleet.PerGPU{0, 100}},
		{Time: start.Add(time.Hour), GPU: fleet.PerGPU{7.5, 30}},
		{Time: start.Add(2 * time.Hour), GPU: fleet.PerGPU{66}, CPU: &cpu},
	}
	if got := toSamples(g, start, time.Hour); !reflect.DeepEqual(got, want) {
		t.Errorf("samples\n got %+v\nwant %+v", got, want)
	}
	if err := json.Unmarshal([]byte(`{"values":[{"value":[{"timeseries":[{"data":[{"average":"x"}]}]}]}]}`), &res); err == nil {
		t.Error("a non-number average was accepted")
	}
}
