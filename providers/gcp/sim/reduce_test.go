package sim

import (
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestReduceIsReference: over random series (groups of one and of
// several, points in and out of order, repeated end times, -0 and
// negative values, every reducer and grouping), reduce gives the series,
// labels and points, newest first as computeSeries orders them, that the
// map-per-group reduce it replaced gave, value bits alike.
func TestReduceIsReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(16, 9))
	groupings := [][]string{
		{"resource.label.instance_id"},
		{"resource.label.instance_id", "metric.label.gpu_number"},
		{"resource.labels.zone"},
		{"metric.labels.state", "resource.label.instance_id"},
		nil,
	}
	for trial := 0; trial < 2000; trial++ {
		var series []outSeries
		for n := rng.IntN(8); n > 0; n-- {
			se := outSeries{
				metric:         "agent.googleapis.com/gpu/utilization",
				metricLabels:   map[string]string{"gpu_number": strconv.Itoa(rng.IntN(2)), "state": []string{"used", "free"}[rng.IntN(2)]},
				resourceLabels: map[string]string{"project_id": "p", "instance_id": strconv.Itoa(rng.IntN(4)), "zone": "z" + strconv.Itoa(rng.IntN(2))},
			}
			t0 := int64(1_800_000_000 + rng.IntN(3)*3600)
			for p := rng.IntN(12); p > 0; p-- {
				end := t0 + int64(p)*3600
				switch rng.IntN(6) {
				case 0:
					end = t0 + int64(rng.IntN(5))*3600 // repeated or out of order
				case 1:
					end = t0 - int64(p)*3600
				}
				v := rng.NormFloat64() * 40
				switch rng.IntN(8) {
				case 0:
					v = math.Copysign(0, -1)
				case 1:
					v = 0
				}
				se.points = append(se.points, point{time.Unix(end, 0).In(time.FixedZone("x", 3600)), v})
			}
			if rng.IntN(2) == 0 {
				slices.SortFunc(se.points, func(a, b point) int { return a.end.Compare(b.end) })
			}
			series = append(series, se)
		}
		for _, reducer := range []int{reduceMean, reduceMin, reduceMax, reduceSum, reduceCnt} {
			g := groupings[rng.IntN(len(groupings))]
			in := func() []outSeries {
				out := make([]outSeries, len(series))
				for i, se := range series {
					out[i] = se
					out[i].points = slices.Clone(se.points)
				}
				return out
			}
			got, want := reduce(in(), reducer, g), reduceReference(in(), reducer, g)
			for _, ss := range [][]outSeries{got, want} {
				for i := range ss {
					slices.SortFunc(ss[i].points, func(a, b point) int { return b.end.Compare(a.end) })
				}
			}
			if len(got) != len(want) {
				t.Fatalf("trial %d reducer %d by %v: %d series, want %d", trial, reducer, g, len(got), len(want))
			}
			for i := range got {
				if !reflect.DeepEqual(got[i].metricLabels, want[i].metricLabels) || !reflect.DeepEqual(got[i].resourceLabels, want[i].resourceLabels) || got[i].metric != want[i].metric {
					t.Fatalf("trial %d reducer %d by %v: series %d labels %v %v, want %v %v", trial, reducer, g, i, got[i].metricLabels, got[i].resourceLabels, want[i].metricLabels, want[i].resourceLabels)
				}
				if len(got[i].points) != len(want[i].points) {
					t.Fatalf("trial %d reducer %d by %v: series %d has %d points, want %d", trial, reducer, g, i, len(got[i].points), len(want[i].points))
				}
				for j, p := range got[i].points {
					w := want[i].points[j]
					if !p.end.Equal(w.end) || p.end.Location() != w.end.Location() || math.Float64bits(p.v) != math.Float64bits(w.v) {
						t.Fatalf("trial %d reducer %d by %v: series %d point %d is %v %v, want %v %v", trial, reducer, g, i, j, p.end, p.v, w.end, w.v)
					}
				}
			}
		}
	}
}

// reduceReference is reduce as it was, with a map of points per group.
func reduceReference(series []outSeries, reducer int, groupBy []string) []outSeries {
	type acc struct {
		sum, lo, hi float64
		n           int
	}
	type group struct {
		out  outSeries
		vals map[int64]*acc
	}
	groups := map[string]*group{}
	var order []string
	var key strings.Builder
	for _, se := range series {
		ml, rl := map[string]string{}, map[string]string{"project_id": se.resourceLabels["project_id"]}
		key.Reset()
		for _, g := range groupBy {
			switch {
			case strings.HasPrefix(g, "metric.label.") || strings.HasPrefix(g, "metric.labels."):
				k := g[strings.IndexByte(g[7:], '.')+8:]
				ml[k] = se.metricLabels[k]
				key.WriteString("m:" + k + "=" + ml[k] + "\x00")
			case strings.HasPrefix(g, "resource.label.") || strings.HasPrefix(g, "resource.labels."):
				k := g[strings.IndexByte(g[9:], '.')+10:]
				rl[k] = se.resourceLabels[k]
				key.WriteString("r:" + k + "=" + rl[k] + "\x00")
			}
		}
		k := key.String()
		gr := groups[k]
		if gr == nil {
			gr = &group{out: outSeries{metric: se.metric, metricLabels: ml, resourceLabels: rl}, vals: make(map[int64]*acc, len(se.points))}
			groups[k] = gr
			order = append(order, k)
		}
		for _, p := range se.points {
			t := p.end.Unix()
			a := gr.vals[t]
			if a == nil {
				a = &acc{lo: p.v, hi: p.v}
				gr.vals[t] = a
			}
			a.sum += p.v
			a.lo, a.hi = math.Min(a.lo, p.v), math.Max(a.hi, p.v)
			a.n++
		}
	}
	out := make([]outSeries, 0, len(order))
	for _, k := range order {
		gr := groups[k]
		gr.out.points = make([]point, 0, len(gr.vals))
		for t, a := range gr.vals {
			var v float64
			switch reducer {
			case reduceSum:
				v = a.sum
			case reduceMax:
				v = a.hi
			case reduceMin:
				v = a.lo
			case reduceCnt:
				v = float64(a.n)
			default:
				v = a.sum / float64(a.n)
			}
			gr.out.points = append(gr.out.points, point{time.Unix(t, 0).UTC(), v})
		}
		out = append(out, gr.out)
	}
	return out
}
