package aws

import (
	"context"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	cwtypes "github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/providers"
)

// readSeriesRef is readSeries as it was before its rows became the grid's
// and a datapoint's period was found without Truncate: the reference
// TestReadSeriesMatchesReference compares it with.
func (p *Provider) readSeriesRef(ctx context.Context, c cloudwatch.GetMetricDataAPIClient, all []series, window fleet.TimeRange, period time.Duration, stat string) (map[int]*grid, int, error) {
	base := window.Start.UTC().Truncate(period)
	steps := max(int((window.End.Sub(base)+period-1)/period), 1)
	batch := min(maxQueriesPerCall, max(1, maxDatapointsPerCall/steps))
	nBatches := (len(all) + batch - 1) / batch
	slab := nanRowRef(len(all) * steps)
	rowOf := func(i int) []float64 { return slab[i*steps : (i+1)*steps : (i+1)*steps] }
	err := parallel(ctx, nBatches, p.opts.Concurrency, func(ctx context.Context, b int) error {
		first := b * batch
		part := all[first:min(first+batch, len(all))]
		queries := make([]cwtypes.MetricDataQuery, len(part))
		index := make(map[string]int, len(part))
		for i, s := range part {
			m := s.metric
			queries[i] = cwtypes.MetricDataQuery{
				Id: aws.String(s.id),
				MetricStat: &cwtypes.MetricStat{
					Metric: &m,
					Period: aws.Int32(int32(period / time.Second)),
					Stat:   aws.String(stat),
				},
				ReturnData: aws.Bool(true),
			}
			index[s.id] = first + i
		}
		pg := cloudwatch.NewGetMetricDataPaginator(c, &cloudwatch.GetMetricDataInput{
			MetricDataQueries: queries,
			StartTime:         aws.Time(window.Start),
			EndTime:           aws.Time(window.End),
		})
		for pg.HasMorePages() {
			page, err := pg.NextPage(ctx)
			if err != nil {
				return callError(ctx, "GetMetricData", err)
			}
			for _, r := range page.MetricDataResults {
				si, ok := index[aws.ToString(r.Id)]
				if !ok {
					continue
				}
				row := rowOf(si)
				for k, t := range r.Timestamps {
					if k >= len(r.Values) || t.Before(window.Start) || !t.Before(window.End) || math.IsNaN(r.Values[k]) {
						continue
					}
					if at := int(t.UTC().Truncate(period).Sub(base) / period); at >= 0 && at < steps {
						row[at] = r.Values[k]
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	out := map[int]*grid{}
	for i, s := range all {
		row := rowOf(i)
		if !hasValue(row) {
			continue
		}
		g := out[s.inst]
		if g == nil {
			g = &grid{}
			out[s.inst] = g
		}
		cells := g.cells(s.kind, s.gpu, steps)
		for k, v := range row {
			if !math.IsNaN(v) {
				cells[k] = v
			}
		}
	}
	return out, steps, nil
}

func nanRowRef(n int) []float64 {
	r := make([]float64, n)
	for i := range r {
		r[i] = math.NaN()
	}
	return r
}

// randomCloudWatch answers GetMetricData with random results, the same for
// the same queries and page: datapoints on and off the periods, outside
// the window, NaN, in other zones, fewer values than timestamps, results
// of no query and results split over pages.
type randomCloudWatch struct {
	seed   uint64
	window fleet.TimeRange
	period time.Duration
	pages  int
}

func (c *randomCloudWatch) GetMetricData(_ context.Context, in *cloudwatch.GetMetricDataInput, _ ...func(*cloudwatch.Options)) (*cloudwatch.GetMetricDataOutput, error) {
	page := 0
	if in.NextToken != nil {
		page, _ = strconv.Atoi(*in.NextToken)
	}
	h := fnv.New64a()
	for _, q := range in.MetricDataQueries {
		h.Write([]byte(*q.Id + ","))
	}
	rng := rand.New(rand.NewPCG(c.seed, h.Sum64()+uint64(page)))
	zones := []*time.Location{time.UTC, time.Local, time.FixedZone("x", 5400)}
	var out cloudwatch.GetMetricDataOutput
	for _, q := range in.MetricDataQueries {
		if rng.IntN(3) == 0 {
			continue // on another page
		}
		r := cwtypes.MetricDataResult{Id: q.Id}
		if rng.IntN(20) == 0 {
			r.Id = aws.String("unknown")
		}
		length := int(c.window.End.Sub(c.window.Start) / c.period)
		for n := rng.IntN(length + 4); n > 0; n-- {
			t := c.window.Start.Truncate(c.period).Add(time.Duration(rng.IntN(length+4)-2) * c.period)
			switch rng.IntN(6) {
			case 0:
				t = t.Add(time.Duration(rng.Int64N(int64(c.period))))
			case 1:
				t = c.window.Start.Add(time.Duration(rng.IntN(3)-1) * time.Nanosecond)
			case 2:
				t = c.window.End.Add(time.Duration(rng.IntN(3)-1) * time.Nanosecond)
			}
			r.Timestamps = append(r.Timestamps, t.In(zones[rng.IntN(len(zones))]))
			v := rng.Float64() * 100
			if rng.IntN(8) == 0 {
				v = math.NaN()
			}
			r.Values = append(r.Values, v)
		}
		if rng.IntN(15) == 0 && len(r.Values) > 0 {
			r.Values = r.Values[:rng.IntN(len(r.Values))]
		}
		out.MetricDataResults = append(out.MetricDataResults, r)
	}
	if page+1 < c.pages {
		out.NextToken = aws.String(strconv.Itoa(page + 1))
	}
	return &out, nil
}

// gridBits is a grid in a form reflect.DeepEqual compares fully.
func gridBits(data map[int]*grid) map[int][5]map[int][]uint64 {
	bits := func(r []float64) []uint64 {
		if r == nil {
			return nil
		}
		b := make([]uint64, len(r))
		for i, v := range r {
			b[i] = math.Float64bits(v)
		}
		return b
	}
	rows := func(m map[int][]float64) map[int][]uint64 {
		if m == nil {
			return nil
		}
		out := map[int][]uint64{}
		for k, r := range m {
			out[k] = bits(r)
		}
		return out
	}
	out := map[int][5]map[int][]uint64{}
	for i, g := range data {
		var e [5]map[int][]uint64
		e[0], e[1], e[2] = rows(g.gpu), rows(g.used), rows(g.total)
		if g.cpu != nil {
			e[3] = map[int][]uint64{0: bits(g.cpu)}
		}
		if g.mem != nil {
			e[4] = map[int][]uint64{0: bits(g.mem)}
		}
		out[i] = e
	}
	return out
}

// TestReadSeriesMatchesReference: on random series (repeated ones among
// them) and random answers, readSeries gives the grids of the reference,
// bit for bit, and toSamples the samples of its reference.
func TestReadSeriesMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 4))
	p := unitProvider()
	periods := []time.Duration{time.Minute, 5 * time.Minute, time.Hour}
	samples := 0
	for trial := 0; trial < 300; trial++ {
		period := periods[rng.IntN(len(periods))]
		start := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC).Add(time.Duration(rng.Int64N(int64(48 * time.Hour))))
		if rng.IntN(2) == 0 {
			start = start.Truncate(period)
		}
		window := fleet.TimeRange{Start: start, End: start.Add(time.Duration(1+rng.IntN(40))*period + time.Duration(rng.IntN(2))*time.Duration(rng.Int64N(int64(period))))}
		var all []series
		for i, n := 0, rng.IntN(40); i < n; i++ {
			kind := metricKind(rng.IntN(5))
			gpu := -1
			if kind <= kindGPUMemTotal {
				gpu = rng.IntN(5) - 1
			}
			all = append(all, series{id: "s" + strconv.Itoa(i), inst: rng.IntN(6), kind: kind, gpu: gpu})
		}
		c := &randomCloudWatch{seed: uint64(trial), window: window, period: period, pages: 1 + rng.IntN(3)}
		got, gotSteps, err := p.readSeries(context.Background(), c, all, window, period, statAverage)
		if err != nil {
			t.Fatal(err)
		}
		want, wantSteps, err := p.readSeriesRef(context.Background(), c, all, window, period, statAverage)
		if err != nil {
			t.Fatal(err)
		}
		if gotSteps != wantSteps || !reflect.DeepEqual(gridBits(got), gridBits(want)) {
			t.Fatalf("trial %d (%s from %s, period %s): steps %d, want %d\n got %v\nwant %v", trial, window.End.Sub(window.Start), window.Start, period, gotSteps, wantSteps, gridBits(got), gridBits(want))
		}
		base := window.Start.UTC().Truncate(period)
		for i := -1; i < 6; i++ {
			s, n := toSamples(got[i], base, period, gotSteps)
			ws, wn := toSamplesRef(want[i], base, period, wantSteps)
			if n != wn || !reflect.DeepEqual(s, ws) {
				t.Fatalf("trial %d instance %d: %d samples %+v, want %d %+v", trial, i, n, s, wn, ws)
			}
			samples += n
		}
	}
	if samples < 1000 {
		t.Errorf("only %d samples in all", samples)
	}
}

// TestNanRow: every length, every element the NaN of math.NaN.
func TestNanRow(t *testing.T) {
	for n := range 70 {
		if got, want := providers.NaNRow(n), nanRowRef(n); !reflect.DeepEqual(gridBits(map[int]*grid{0: {cpu: got}}), gridBits(map[int]*grid{0: {cpu: want}})) || len(got) != n {
			t.Fatalf("providers.NaNRow(%d) = %v", n, got)
		}
	}
}

// toSamplesRef is toSamples as it was before it read the rows in index
// order once per period and kept its presence marks: the reference
// TestReadSeriesMatchesReference compares it with.
func toSamplesRef(g *grid, base time.Time, period time.Duration, steps int) ([]fleet.Sample, int) {
	if g == nil {
		return nil, 0
	}
	some := func(m map[int][]float64, k int) bool {
		for _, r := range m {
			if !math.IsNaN(r[k]) {
				return true
			}
		}
		return false
	}
	present := func(k int) bool {
		return some(g.gpu, k) || some(g.used, k) || some(g.total, k) ||
			g.cpu != nil && !math.IsNaN(g.cpu[k]) || g.mem != nil && !math.IsNaN(g.mem[k])
	}
	n := 0
	for k := 0; k < steps; k++ {
		if present(k) {
			n++
		}
	}
	if n == 0 {
		return nil, 0
	}
	totals := map[int]float64{}
	for i, r := range g.total {
		for _, v := range r {
			if !math.IsNaN(v) {
				totals[i] = max(totals[i], v)
			}
		}
	}
	gpuIdx, usedIdx := providers.RowIndexes(g.gpu), providers.RowIndexes(g.used)
	samples := make([]fleet.Sample, 0, n)
	gpuSlab := make([]float64, 0, n*len(gpuIdx))
	memSlab := make([]float64, 0, n*len(usedIdx))
	hostSlab := make([]float64, 0, 2*n)
	base = base.UTC()
	for k := 0; k < steps; k++ {
		if !present(k) {
			continue
		}
		s := fleet.Sample{Time: base.Add(time.Duration(k) * period)}
		if g.cpu != nil && !math.IsNaN(g.cpu[k]) {
			hostSlab = append(hostSlab, percent(g.cpu[k]))
			s.CPU = &hostSlab[len(hostSlab)-1]
		}
		if g.mem != nil && !math.IsNaN(g.mem[k]) {
			hostSlab = append(hostSlab, percent(g.mem[k]))
			s.Memory = &hostSlab[len(hostSlab)-1]
		}
		from := len(gpuSlab)
		for _, i := range indexesAtRef(g.gpu, gpuIdx, k) {
			gpuSlab = append(gpuSlab, percent(g.gpu[i][k]))
		}
		if len(gpuSlab) > from {
			s.GPU = fleet.PerGPU(gpuSlab[from:len(gpuSlab):len(gpuSlab)])
		}
		from = len(memSlab)
		for _, i := range indexesAtRef(g.used, usedIdx, k) {
			total := 0.0
			if r := g.total[i]; r != nil && !math.IsNaN(r[k]) {
				total = r[k]
			}
			if total <= 0 {
				total = totals[i]
			}
			if total > 0 {
				memSlab = append(memSlab, percent(round6(g.used[i][k]/total*100)))
			}
		}
		if len(memSlab) > from {
			s.GPUMemory = fleet.PerGPU(memSlab[from:len(memSlab):len(memSlab)])
		}
		samples = append(samples, s)
	}
	return samples, n
}

// indexesAtRef lists the indexes with a value in period k: the per-index ones,
// or the aggregate (-1) when there are none.
func indexesAtRef(m map[int][]float64, keys []int, k int) []int {
	var agg bool
	var out []int
	for _, i := range keys {
		if math.IsNaN(m[i][k]) {
			continue
		}
		if i < 0 {
			agg = true
			continue
		}
		out = append(out, i)
	}
	if len(out) == 0 && agg {
		out = append(out, -1)
	}
	return out
}

// cells returns the grid's row for a series, made (all NaN) on first use:
// how the tests (and readSeriesRef) fill grids.
func (g *grid) cells(kind metricKind, gpu, steps int) []float64 {
	row := func(m *map[int][]float64) []float64 {
		if *m == nil {
			*m = map[int][]float64{}
		}
		r := (*m)[gpu]
		if r == nil {
			r = providers.NaNRow(steps)
			(*m)[gpu] = r
		}
		return r
	}
	switch kind {
	case kindGPU:
		return row(&g.gpu)
	case kindGPUMemUsed:
		return row(&g.used)
	case kindGPUMemTotal:
		return row(&g.total)
	case kindMemory:
		if g.mem == nil {
			g.mem = providers.NaNRow(steps)
		}
		return g.mem
	default:
		if g.cpu == nil {
			g.cpu = providers.NaNRow(steps)
		}
		return g.cpu
	}
}
