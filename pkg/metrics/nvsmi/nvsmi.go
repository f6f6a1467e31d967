// Package nvsmi reads GPU utilization from the CSV files nvidia-smi writes:
//
//	nvidia-smi --query-gpu=timestamp,index,utilization.gpu,memory.used,memory.total --format=csv
//
// collected on each machine, as a metrics.Source. A file is matched to an
// instance by a host or hostname column, else by its file name
// (i-0abc.csv, nb-g4dn-1.csv), against the instance's ID or name.
package nvsmi

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pkg/metrics"
)

// SourceName prefixes the Coverage.Source of every instance this source fills.
const SourceName = "nvidia-smi"

// Column names as nvidia-smi writes them, without units.
const (
	colTimestamp   = "timestamp"
	colIndex       = "index"
	colUtilization = "utilization.gpu"
	colMemoryUsed  = "memory.used"
	colMemoryTotal = "memory.total"
)

// Bounds of a reading. nvidia-smi prints whole percentages; a value up to
// percentTolerance above 100 (rounding by a converter) reads as 100, one
// further out is an error, as are NaN and Inf (which ParseFloat accepts).
const (
	percentTolerance = 0.5
	// maxMemoryMiB bounds memory.used and memory.total (fleet.MaxGPUMemoryGiB).
	maxMemoryMiB = fleet.MaxGPUMemoryGiB * 1024
	// minYear and maxYear bound timestamps, so that a typo cannot stretch a
	// window over centuries.
	minYear, maxYear = 2000, 2200
)

// timeLayouts are the timestamps accepted: nvidia-smi's own (read as UTC)
// and RFC 3339.
var timeLayouts = []string{"2006/01/02 15:04:05.000", "2006/01/02 15:04:05", time.RFC3339Nano}

// reading is one row: one GPU at one instant.
type reading struct {
	t          time.Time
	gpu        int
	util       float64
	memPercent *float64
}

// host is what one file said about one machine.
type host struct {
	name     string
	file     string
	readings []reading
}

// Source is a set of parsed nvidia-smi CSV files.
type Source struct {
	hosts []*host
	files []string
}

var _ metrics.Source = (*Source)(nil)

// Open parses the files. A malformed file is an error naming the file, the
// line and the column, e.g.
// `nb-1.csv: line 7: utilization.gpu: "abc" is not a number`.
func Open(paths ...string) (*Source, error) {
	s := &Source{}
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", filepath.Base(p), unwrapPath(err))
		}
		hosts, err := parse(filepath.Base(p), f)
		f.Close()
		if err != nil {
			return nil, err
		}
		s.hosts = append(s.hosts, hosts...)
		s.files = append(s.files, filepath.Base(p))
	}
	return s, nil
}

func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// parse reads one CSV named name (used in messages and, without its
// extension, as the host when there is no host column). It returns one host
// per distinct host column value.
func parse(name string, r io.Reader) ([]*host, error) {
	cr := csv.NewReader(r)
	cr.TrimLeadingSpace = true
	cr.FieldsPerRecord = -1
	header, err := cr.Read()
	if err == io.EOF {
		return nil, fmt.Errorf("%s: empty; want nvidia-smi's CSV with a header line", name)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %s", name, csvError(err))
	}
	cols := map[string]int{}
	for i, h := range header {
		h = strings.ToLower(strings.TrimSpace(strings.TrimPrefix(h, "\ufeff")))
		if j := strings.Index(h, " ["); j >= 0 {
			h = h[:j] // "utilization.gpu [%]"
		}
		if h == "hostname" {
			h = "host"
		}
		cols[h] = i
	}
	for _, c := range []string{colTimestamp, colUtilization} {
		if _, ok := cols[c]; !ok {
			return nil, fmt.Errorf("%s: line 1: no %s column; want nvidia-smi --query-gpu=timestamp,index,utilization.gpu,memory.used,memory.total --format=csv", name, c)
		}
	}
	byHost := map[string]*host{}
	var order []*host
	fileHost := strings.TrimSuffix(name, filepath.Ext(name))
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %s", name, csvError(err))
		}
		line, _ := cr.FieldPos(0)
		field := func(col string) (string, bool) {
			i, ok := cols[col]
			if !ok || i >= len(rec) {
				return "", false
			}
			return strings.TrimSpace(rec[i]), true
		}
		if len(rec) == 1 && strings.TrimSpace(rec[0]) == "" {
			continue
		}
		if len(rec) != len(header) {
			return nil, fmt.Errorf("%s: line %d: %d fields, want %d as in the header", name, line, len(rec), len(header))
		}
		ts, _ := field(colTimestamp)
		t, ok := parseTime(ts)
		if !ok {
			return nil, fmt.Errorf("%s: line %d: timestamp: %q is not a time like 2026/11/30 12:00:01.123", name, line, ts)
		}
		rd := reading{t: t}
		if t.Year() < minYear || t.Year() > maxYear {
			return nil, fmt.Errorf("%s: line %d: timestamp: %q is outside the years %d–%d", name, line, ts, minYear, maxYear)
		}
		if v, ok := field(colIndex); ok {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 || n >= fleet.MaxGPUsPerInstance {
				return nil, fmt.Errorf("%s: line %d: index: %q is not a GPU index (0–%d)", name, line, v, fleet.MaxGPUsPerInstance-1)
			}
			rd.gpu = n
		}
		v, _ := field(colUtilization)
		util, ok, err := number(v, "%")
		if err != nil {
			return nil, fmt.Errorf("%s: line %d: %s: %v", name, line, colUtilization, err)
		}
		if !ok {
			continue // [N/A]: no reading
		}
		if !(util >= 0 && util <= 100+percentTolerance) {
			return nil, fmt.Errorf("%s: line %d: %s: %s is outside 0–100", name, line, colUtilization, v)
		}
		rd.util = min(util, 100)
		used, okU, err := optNumber(field, colMemoryUsed)
		if err != nil {
			return nil, fmt.Errorf("%s: line %d: %s: %v", name, line, colMemoryUsed, err)
		}
		total, okT, err := optNumber(field, colMemoryTotal)
		if err != nil {
			return nil, fmt.Errorf("%s: line %d: %s: %v", name, line, colMemoryTotal, err)
		}
		if okT && !(total >= 0 && total <= maxMemoryMiB) {
			return nil, fmt.Errorf("%s: line %d: %s: %s is outside 0–%s MiB", name, line, colMemoryTotal, num(total), num(maxMemoryMiB))
		}
		if okU && !(used >= 0 && used <= maxMemoryMiB) {
			return nil, fmt.Errorf("%s: line %d: %s: %s is outside 0–%s MiB", name, line, colMemoryUsed, num(used), num(maxMemoryMiB))
		}
		if okU && okT && total > 0 {
			if used > total*(1+percentTolerance/100) {
				return nil, fmt.Errorf("%s: line %d: %s: %s is outside 0–%s", name, line, colMemoryUsed, num(used), num(total))
			}
			p := min(used/total*100, 100)
			rd.memPercent = &p
		}
		h := fileHost
		if v, ok := field("host"); ok && v != "" {
			h = v
		}
		if byHost[h] == nil {
			byHost[h] = &host{name: h, file: name}
			order = append(order, byHost[h])
		}
		byHost[h].readings = append(byHost[h].readings, rd)
	}
	if len(order) == 0 {
		return nil, fmt.Errorf("%s: no readings after the header", name)
	}
	for _, h := range order {
		first, last := h.span()
		if last.Sub(first) > fleet.MaxWindow {
			return nil, fmt.Errorf("%s: the readings of %s span %s to %s, more than 10 years", name, h.name, first.Format(time.RFC3339), last.Format(time.RFC3339))
		}
	}
	return order, nil
}

func csvError(err error) string {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return fmt.Sprintf("line %d: %v", pe.Line, pe.Err)
	}
	return err.Error()
}

func parseTime(s string) (time.Time, bool) {
	for _, l := range timeLayouts {
		if t, err := time.ParseInLocation(l, s, time.UTC); err == nil {
			return t.UTC(), true
		}
	}
	return time.Time{}, false
}

// number parses "45", "45 %" or "1024 MiB"; ok is false for nvidia-smi's
// "[N/A]" and "[Not Supported]".
func number(v, unit string) (float64, bool, error) {
	if strings.HasPrefix(v, "[") {
		return 0, false, nil
	}
	s := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), unit))
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, false, fmt.Errorf("%q is not a number", v)
	}
	return f, true, nil
}

func optNumber(field func(string) (string, bool), col string) (float64, bool, error) {
	v, ok := field(col)
	if !ok {
		return 0, false, nil
	}
	return number(v, "MiB")
}

func num(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// Name implements metrics.Source.
func (s *Source) Name() string { return SourceName }

// Read fills the utilization of the instances whose ID or name is a host of
// the files: one sample per period (a minute for windows up to a day, else
// an hour) with per-GPU means, for GPU utilization and memory used as a
// percentage of the GPU's memory; the engine takes the busiest GPU. A zero
// window is the span of each host's readings. Readings outside the window
// are dropped; coverage is the share of the window's periods with a reading.
// The instance's usage is left as it is. A host that matches no instance is
// a note; when none matches, Read fails.
func (s *Source) Read(ctx context.Context, instances []fleet.Instance, window fleet.TimeRange) (metrics.Result, error) {
	res := metrics.Result{Coverage: map[string]metrics.Coverage{}}
	if err := ctx.Err(); err != nil {
		return res, err
	}
	byKey := map[string]int{}
	for i := len(instances) - 1; i >= 0; i-- {
		if n := instances[i].Name; n != "" {
			byKey[n] = i
		}
	}
	for i := len(instances) - 1; i >= 0; i-- {
		byKey[instances[i].ID] = i
	}
	var unmatched []string
	for _, h := range s.hosts {
		i, ok := byKey[h.name]
		if !ok {
			unmatched = append(unmatched, h.name)
			res.Notes = append(res.Notes, fmt.Sprintf("%s: %s: host %q is no instance's id or name in the fleet", SourceName, h.file, h.name))
			continue
		}
		in := &instances[i]
		u, frac := h.utilization(window)
		if u == nil {
			res.Notes = append(res.Notes, fmt.Sprintf("%s: %s: no readings of %s inside the window", SourceName, h.file, in.ID))
			continue
		}
		src := SourceName + ":" + h.file
		u.Source = src
		u.Coverage = &frac
		in.Utilization = u
		res.Coverage[in.ID] = metrics.Coverage{Source: src, Fraction: frac}
	}
	if len(s.hosts) > 0 && len(unmatched) == len(s.hosts) {
		return res, fmt.Errorf("%s: no host in %s (%s) is an instance's id or name in the fleet", SourceName, strings.Join(s.files, ", "), strings.Join(unmatched, ", "))
	}
	return res, nil
}

// utilization buckets the host's readings over the window.
func (h *host) utilization(window fleet.TimeRange) (*fleet.Utilization, float64) {
	rs := h.readings
	if window.Start.IsZero() || window.End.IsZero() {
		first, last := h.span()
		p := period(last.Sub(first))
		window = fleet.TimeRange{Start: first.Truncate(p), End: last.Truncate(p).Add(p)}
	}
	p := period(window.End.Sub(window.Start))
	type acc struct{ util, mem, n, nm float64 }
	buckets := map[time.Time]map[int]*acc{}
	for _, r := range rs {
		if r.t.Before(window.Start) || !r.t.Before(window.End) {
			continue
		}
		b := window.Start.Add(r.t.Sub(window.Start) / p * p)
		if buckets[b] == nil {
			buckets[b] = map[int]*acc{}
		}
		a := buckets[b][r.gpu]
		if a == nil {
			a = &acc{}
			buckets[b][r.gpu] = a
		}
		a.util += r.util
		a.n++
		if r.memPercent != nil {
			a.mem += *r.memPercent
			a.nm++
		}
	}
	if len(buckets) == 0 {
		return nil, 0
	}
	times := make([]time.Time, 0, len(buckets))
	for t := range buckets {
		times = append(times, t)
	}
	sort.Slice(times, func(i, j int) bool { return times[i].Before(times[j]) })
	u := &fleet.Utilization{Window: &fleet.TimeRange{Start: window.Start, End: window.End}}
	for _, t := range times {
		gpus := make([]int, 0, len(buckets[t]))
		for g := range buckets[t] {
			gpus = append(gpus, g)
		}
		sort.Ints(gpus)
		smp := fleet.Sample{Time: t}
		for _, g := range gpus {
			a := buckets[t][g]
			smp.GPU = append(smp.GPU, round2(a.util/a.n))
			if a.nm > 0 {
				smp.GPUMemory = append(smp.GPUMemory, round2(a.mem/a.nm))
			}
		}
		u.Samples = append(u.Samples, smp)
	}
	total := float64((window.End.Sub(window.Start) + p - 1) / p)
	frac := float64(len(times)) / total
	if frac > 1 {
		frac = 1
	}
	// Four decimals, but never zero for a host that did report: a few
	// readings over years are a coverage too small to round, not none.
	if r := float64(int64(frac*10000+0.5)) / 10000; r > 0 {
		return u, r
	}
	return u, frac
}

// span is the time of the host's first and last reading.
func (h *host) span() (first, last time.Time) {
	first, last = h.readings[0].t, h.readings[0].t
	for _, r := range h.readings {
		if r.t.Before(first) {
			first = r.t
		}
		if r.t.After(last) {
			last = r.t
		}
	}
	return first, last
}

// period is the sample interval for a window: a minute up to a day, else an hour.
func period(d time.Duration) time.Duration {
	if d <= 24*time.Hour {
		return time.Minute
	}
	return time.Hour
}

func round2(v float64) float64 {
	return float64(int64(v*100+0.5)) / 100
}
