package simkit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gpufinops/gpufinops/pkg/suggest"
)

// Faults are the per-operation faults: slow answers and hung requests.
type Faults struct {
	// Delays holds back the answer of an operation: the operation takes
	// effect at once (a stop is visible in /_sim/state), and its answer is
	// written only after the delay, as when a cloud acts but its answer is
	// slow or lost. Keys are an operation ("StopInstances") or a service and
	// operation ("ec2:StopInstances").
	Delays map[string]time.Duration `json:"delays,omitempty"`
	// Hang lists operations (same keys) that are never answered and never
	// take effect: the request is held until the client hangs up.
	Hang []string `json:"hang,omitempty"`
}

// faultsBody is Faults on the wire: delays as Go durations ("1.5s").
type faultsBody struct {
	Delays map[string]string `json:"delays"`
	Hang   []string          `json:"hang"`
}

// OpFaults holds the per-operation faults in effect; the zero value has
// none. It is safe for concurrent use.
type OpFaults struct {
	mu sync.Mutex
	f  Faults
	// known maps every accepted key ("Op" and "service:Op") to true; nil
	// accepts any key.
	known map[string]bool
	names []string
	ops   int
}

// Known limits the keys Set accepts to ops ("service:Op") and their
// operation names alone; no ops accepts any key.
func (o *OpFaults) Known(ops []string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.known, o.names, o.ops = nil, nil, 0
	if len(ops) == 0 {
		return
	}
	o.known = map[string]bool{}
	for _, op := range ops {
		if !o.known[op] {
			o.ops++
		}
		_, name, _ := strings.Cut(op, ":")
		for _, k := range []string{op, name} {
			if !o.known[k] {
				o.known[k] = true
				o.names = append(o.names, k)
			}
		}
	}
	sort.Strings(o.names)
}

// checkKey refuses a key no simulator answers, with the nearest names.
func (o *OpFaults) checkKey(what, k string) error {
	o.mu.Lock()
	known, names, ops := o.known, o.names, o.ops
	o.mu.Unlock()
	if known == nil || known[k] {
		return nil
	}
	msg := fmt.Sprintf("%s %q: no simulator answers that operation", what, k)
	if s := suggest.Phrase(k, names, strconv.Quote); s != "" {
		msg += s
	} else {
		msg += fmt.Sprintf(" (%d operations, e.g. StopInstances or ec2:StopInstances; see docs/simulators.md)", ops)
	}
	return errors.New(msg)
}

// MaxDelay bounds a delay and the latency: past some minutes every client
// has given up, and an hour is a typo for a millisecond. A request never to
// be answered is a hang.
const MaxDelay = 10 * time.Minute

// Set replaces the faults; negative delays, delays over MaxDelay, empty keys
// and, after Known, keys no simulator answers are refused.
func (o *OpFaults) Set(f Faults) error {
	for _, k := range sortedKeys(f.Delays) {
		d := f.Delays[k]
		if strings.TrimSpace(k) == "" || d < 0 || d > MaxDelay {
			return fmt.Errorf("delay %q: %v: want an operation and a duration from 0 to %v (never answered: hang)", k, d, MaxDelay)
		}
		if err := o.checkKey("delay", k); err != nil {
			return err
		}
	}
	for _, k := range f.Hang {
		if strings.TrimSpace(k) == "" {
			return fmt.Errorf("hang: an empty operation")
		}
		if err := o.checkKey("hang", k); err != nil {
			return err
		}
	}
	c := Faults{Delays: map[string]time.Duration{}, Hang: append([]string(nil), f.Hang...)}
	for k, d := range f.Delays {
		c.Delays[k] = d
	}
	o.mu.Lock()
	o.f = c
	o.mu.Unlock()
	return nil
}

func sortedKeys(m map[string]time.Duration) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Current returns a copy of the faults in effect, hangs sorted.
func (o *OpFaults) Current() Faults {
	o.mu.Lock()
	defer o.mu.Unlock()
	c := Faults{Delays: map[string]time.Duration{}, Hang: append([]string(nil), o.f.Hang...)}
	for k, d := range o.f.Delays {
		c.Delays[k] = d
	}
	sort.Strings(c.Hang)
	return c
}

// For says whether an operation hangs and how long its answer is held (the
// longest delay of its two keys).
func (o *OpFaults) For(service, op string) (hang bool, delay time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	keys := []string{op, service + ":" + op}
	for _, h := range o.f.Hang {
		for _, k := range keys {
			if h == k {
				hang = true
			}
		}
	}
	for _, k := range keys {
		if d, ok := o.f.Delays[k]; ok && d > delay {
			delay = d
		}
	}
	return hang, delay
}

// heldWriter buffers an answer so that it can be written after a delay.
type heldWriter struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (h *heldWriter) Header() http.Header { return h.header }

func (h *heldWriter) Write(b []byte) (int, error) {
	if h.status == 0 {
		h.status = http.StatusOK
	}
	return h.body.Write(b)
}

func (h *heldWriter) WriteHeader(status int) {
	if h.status == 0 {
		h.status = status
	}
}

// serveHeld serves the request into a buffer, waits delay (or until the
// client hangs up) and only then writes the answer.
func serveHeld(w http.ResponseWriter, r *http.Request, delay time.Duration, serve func(http.ResponseWriter)) {
	h := &heldWriter{header: http.Header{}}
	serve(h)
	t := time.NewTimer(delay)
	defer t.Stop()
	select {
	case <-t.C:
	case <-r.Context().Done():
		return
	}
	for k, v := range h.header {
		w.Header()[k] = v
	}
	if h.status == 0 {
		h.status = http.StatusOK
	}
	w.WriteHeader(h.status)
	_, _ = w.Write(h.body.Bytes())
}

// serveFaults answers GET /_sim/faults with the faults in effect and POST
// /_sim/faults {"delays": {"StopInstances": "2s"}, "hang": ["DescribeInstances"]}
// by replacing them.
func (k *Kit) serveFaults(w http.ResponseWriter, r *http.Request) {
	enc := json.NewEncoder(w)
	if r.Method == http.MethodPost {
		var body faultsBody
		dec := json.NewDecoder(io.LimitReader(r.Body, 1<<16))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&body); err != nil {
			w.WriteHeader(http.StatusBadRequest)
			_ = enc.Encode(map[string]string{"error": `the body is not {"delays": {"OP": "2s"}, "hang": ["OP"]}: ` + err.Error()})
			return
		}
		f := Faults{Delays: map[string]time.Duration{}, Hang: body.Hang}
		for key, v := range body.Delays {
			d, err := time.ParseDuration(v)
			if err != nil {
				w.WriteHeader(http.StatusBadRequest)
				_ = enc.Encode(map[string]string{"error": fmt.Sprintf("delay %q: %v", key, err)})
				return
			}
			f.Delays[key] = d
		}
		if err := k.SetFaults(f); err != nil {
			w.WriteHeader(http.StatusBadRequest)
			_ = enc.Encode(map[string]string{"error": err.Error()})
			return
		}
	}
	cur := k.CurrentFaults()
	out := faultsBody{Delays: map[string]string{}, Hang: cur.Hang}
	if out.Hang == nil {
		out.Hang = []string{}
	}
	for key, d := range cur.Delays {
		out.Delays[key] = d.String()
	}
	_ = enc.Encode(out)
}
