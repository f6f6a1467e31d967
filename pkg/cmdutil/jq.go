package cmdutil

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime/metrics"
	"strings"
	"time"

	"github.com/itchyny/gojq"
)

// Limits of a --jq program: a program that loops (def f: f; f) or builds
// something huge ([range(1e12)]) is stopped with a usage error instead of
// hanging or exhausting memory.
const (
	// DefaultJQTimeout is how long a --jq program may run (--jq-timeout).
	DefaultJQTimeout = 5 * time.Second
	// MaxJQTimeout bounds --jq-timeout.
	MaxJQTimeout = 10 * time.Minute
	// DefaultJQMaxOutput bounds what a --jq program prints, in bytes.
	DefaultJQMaxOutput = 256 << 20
	// DefaultJQMaxMemory bounds how much the heap may grow while a --jq
	// program runs, in bytes.
	DefaultJQMaxMemory = 1 << 30
)

// JQ is a compiled --jq filter, run in-process on a command's JSON output.
type JQ struct {
	expr string
	code *gojq.Code
	// Timeout, MaxOutput and MaxMemory bound a run; zero takes the default.
	Timeout   time.Duration
	MaxOutput int
	MaxMemory uint64
}

// CheckJQTimeout refuses a --jq-timeout that is not positive or is above
// MaxJQTimeout.
func CheckJQTimeout(d time.Duration) error {
	if d <= 0 || d > MaxJQTimeout {
		return FlagErrorf("--jq-timeout: %s is outside 1ms–%s", d, MaxJQTimeout)
	}
	return nil
}

// CompileJQ parses and compiles a jq expression; errors are one-line FlagErrors.
func CompileJQ(expr string) (*JQ, error) {
	q, err := gojq.Parse(expr)
	if err != nil {
		return nil, FlagErrorf("--jq %q: %s", expr, oneLine(err.Error()))
	}
	code, err := gojq.Compile(q, gojq.WithEnvironLoader(func() []string { return nil }))
	if err != nil {
		return nil, FlagErrorf("--jq %q: %s", expr, oneLine(err.Error()))
	}
	return &JQ{expr: expr, code: code}, nil
}

// errJQMemory and errJQOutput cancel a run that outgrew its bounds.
var (
	errJQMemory = errors.New("memory")
	errJQOutput = errors.New("output")
)

// Run filters the JSON document in data and writes each result on its own
// line: strings raw (as jq -r does, and gh --jq), other values as JSON
// indented by two spaces, object keys sorted. A runtime error stops it with a
// one-line error (exit code 1). A program that runs past its time limit,
// grows the heap past its memory bound or prints more than its output bound
// is stopped with a one-line FlagError (exit code 2) and prints nothing.
func (q *JQ) Run(ctx context.Context, w io.Writer, data []byte) error {
	if ctx == nil {
		ctx = context.Background()
	}
	timeout, maxOut, maxMem := q.Timeout, q.MaxOutput, q.MaxMemory
	if timeout <= 0 {
		timeout = DefaultJQTimeout
	}
	if maxOut <= 0 {
		maxOut = DefaultJQMaxOutput
	}
	if maxMem == 0 {
		maxMem = DefaultJQMaxMemory
	}
	var doc any
	if err := json.Unmarshal(data, &doc); err != nil {
		return fmt.Errorf("--jq: the output is not JSON: %s", oneLine(err.Error()))
	}
	parent := ctx
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	ctx, stop := context.WithTimeout(ctx, timeout)
	defer stop()
	go watchHeap(ctx, cancel, maxMem)

	var out bytes.Buffer
	iter := q.code.RunWithContext(ctx, doc)
	for {
		v, ok := iter.Next()
		if !ok {
			break
		}
		if err, isErr := v.(error); isErr {
			if h, halt := err.(*gojq.HaltError); halt && h.Value() == nil {
				break
			}
			return q.runError(parent, ctx, err, timeout, maxMem, maxOut)
		}
		if s, isStr := v.(string); isStr {
			out.WriteString(s + "\n")
		} else {
			enc := json.NewEncoder(&out)
			enc.SetIndent("", "  ")
			enc.SetEscapeHTML(false)
			if err := enc.Encode(v); err != nil {
				return fmt.Errorf("--jq %q: %s", q.expr, oneLine(err.Error()))
			}
		}
		if out.Len() > maxOut {
			cancel(errJQOutput)
			return q.runError(parent, ctx, ctx.Err(), timeout, maxMem, maxOut)
		}
	}
	if ctx.Err() != nil {
		return q.runError(parent, ctx, ctx.Err(), timeout, maxMem, maxOut)
	}
	_, err := w.Write(out.Bytes())
	return err
}

// runError explains why a run stopped: the caller's cancellation, a bound it
// crossed (a FlagError), or the program's own runtime error.
func (q *JQ) runError(parent, ctx context.Context, err error, timeout time.Duration, maxMem uint64, maxOut int) error {
	if parent.Err() != nil {
		return fmt.Errorf("--jq %q: %w", q.expr, context.Cause(parent))
	}
	switch cause := context.Cause(ctx); {
	case errors.Is(cause, errJQMemory):
		return FlagErrorf("--jq %q: stopped: it needed more than %s of memory; simplify the program", q.expr, mib(maxMem))
	case errors.Is(cause, errJQOutput):
		return FlagErrorf("--jq %q: stopped: it printed more than %s; simplify the program", q.expr, mib(uint64(maxOut)))
	case errors.Is(cause, context.DeadlineExceeded):
		return FlagErrorf("--jq %q: stopped after %s (--jq-timeout); the program may not end, or needs a longer limit", q.expr, timeout)
	case cause != nil:
		return fmt.Errorf("--jq %q: %w", q.expr, cause)
	}
	return fmt.Errorf("--jq %q: %s", q.expr, oneLine(err.Error()))
}

// watchHeap cancels the run with errJQMemory when the live heap grows more
// than limit bytes above what it was at the start, until ctx ends.
func watchHeap(ctx context.Context, cancel context.CancelCauseFunc, limit uint64) {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() uint64 {
		metrics.Read(sample)
		if sample[0].Value.Kind() != metrics.KindUint64 {
			return 0
		}
		return sample[0].Value.Uint64()
	}
	base := read()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			if now := read(); now > base && now-base > limit {
				cancel(errJQMemory)
				return
			}
		}
	}
}

// mib prints a byte count in MiB.
func mib(n uint64) string { return fmt.Sprintf("%g MiB", float64(n)/(1<<20)) }

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
