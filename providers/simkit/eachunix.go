package simkit

import (
	"math"
	"time"
)

// EachUnix is Each in whole Unix seconds, for a simulator that aggregates
// in seconds: from and to are minute starts, the down spans and loads lie
// on whole seconds (as Timeline makes them), and fn gets the runs Each
// gives, as Unix seconds.
func EachUnix(values []float64, clock Clock, from, to int64, down []Span, loads []Load, fn func(a, z int64, v float64)) {
	var downBuf [4]unixSpan
	ds := downBuf[:0]
	for _, d := range down {
		ds = append(ds, unixSpan{d.From.Unix(), d.To.Unix()})
	}
	var loadBuf [4]unixLoad
	ls := loadBuf[:0]
	for _, l := range loads {
		ls = append(ls, unixLoad{l.From.Unix(), l.GPU})
	}
	for h := floorDiv(from, 3600) * 3600; h < to; h += 3600 {
		a, z := max(h, from), min(h+3600, to)
		pattern := values[clock.unixSlot(h)]
		for a < z {
			v, next := pattern, z
			for _, l := range ls {
				if l.from > a {
					if l.from < next {
						next = l.from
					}
					break
				}
				v = l.gpu
			}
			if !math.IsNaN(v) {
				unixUpRuns(a, next, ds, v, fn)
			}
			a = next
		}
	}
}

type unixSpan struct{ from, to int64 }

type unixLoad struct {
	from int64
	gpu  float64
}

// unixSlot is Slot of the hour starting at secs, Unix seconds.
func (c Clock) unixSlot(secs int64) int {
	if c.Loc == time.UTC {
		return utcSlot(secs)
	}
	return c.Slot(time.Unix(secs, 0))
}

// unixUpRuns calls fn for the parts of [a, z) outside the down spans.
func unixUpRuns(a, z int64, down []unixSpan, v float64, fn func(a, z int64, v float64)) {
	for _, d := range down {
		if d.to <= a {
			continue
		}
		if d.from >= z {
			break
		}
		if d.from > a {
			fn(a, d.from, v)
		}
		a = d.to
		if a >= z {
			return
		}
	}
	fn(a, z, v)
}
