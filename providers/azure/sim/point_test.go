package sim

import (
	"encoding/json"
	"testing"
)

// TestMetricPointEncodesAsItsMap: a point encodes to the bytes of the map of
// its set fields (the answer's form before points were structs), whichever
// aggregations it has.
func TestMetricPointEncodesAsItsMap(t *testing.T) {
	for _, aggs := range [][]string{nil, {"average"}, {"maximum"}, {"average", "maximum", "minimum", "total", "count"}, {"count", "total"}} {
		pt := metricPoint{TimeStamp: "2026-03-10T11:00:00Z"}
		m := map[string]any{"timeStamp": pt.TimeStamp}
		for i, a := range aggs {
			v := round(12.345678 + float64(i))
			switch a {
			case "average":
				pt.Average = v
			case "maximum":
				pt.Maximum = v
			case "minimum":
				pt.Minimum = v
			case "total":
				pt.Total = v
			case "count":
				pt.Count = 60
				m[a] = 60.0
				continue
			}
			m[a] = v
		}
		got, err := json.Marshal(pt)
		if err != nil {
			t.Fatal(err)
		}
		want, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Errorf("%v: %s, want %s", aggs, got, want)
		}
	}
}
