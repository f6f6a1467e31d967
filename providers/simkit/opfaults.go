package simkit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"
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
}

// MaxDelay bounds a delay and the latency: past some minutes every client
// has given up, and an hour is a typo for a millisecond. A request never to
// be answered is a hang.
const MaxDelay = 10 * time.Minute

// Set replaces the faults; negative delays, delays over MaxDelay and empty
// keys are refused.
func (o *OpFaults) Set(f Faults) error {
	for k, d := range f.Delays {
		if strings.TrimSpace(k) == "" || d < 0 || d > MaxDelay {
			return fmt.Errorf("delay %q: %v: want an operation and a duration from 0 to %v (never answered: hang)", k, d, MaxDelay)
		}
	}
	for _, k := range f.Hang {
		if strings.TrimSpace(k) == "" {
			return fmt.Errorf("hang: an empty operation")
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
