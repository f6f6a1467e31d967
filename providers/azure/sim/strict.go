package sim

import (
	"bytes"
	"net/http"
	"sync"
)

// Contract checks requests and answers against the published Azure models;
// contract.Checker (providers/azure/sim/contract) is one. With
// Options.Contract set the simulator is strict: every request it serves
// and every answer it gives is checked, and what departs from the models
// is kept for Violations (the request is served all the same, so a test
// sees both the adapter's behaviour and the violation).
type Contract interface {
	CheckRequest(r *http.Request, body []byte) error
	CheckResponse(r *http.Request, reqBody []byte, status int, h http.Header, body []byte) error
}

// violations are the strict mode's findings.
type violations struct {
	mu   sync.Mutex
	list []string
}

func (v *violations) add(err error) {
	if err == nil {
		return
	}
	v.mu.Lock()
	v.list = append(v.list, err.Error())
	v.mu.Unlock()
}

// Violations are the contract violations strict mode has seen, in order.
func (s *Server) Violations() []string {
	s.strictLog.mu.Lock()
	defer s.strictLog.mu.Unlock()
	return append([]string(nil), s.strictLog.list...)
}

// strict checks the request and wraps w; done checks the answer.
func (s *Server) strict(w http.ResponseWriter, r *http.Request, body []byte) (http.ResponseWriter, func()) {
	s.strictLog.add(s.opts.Contract.CheckRequest(r, body))
	rec := &recorder{ResponseWriter: w, status: http.StatusOK}
	return rec, func() {
		if r.Context().Err() != nil {
			return // the client left: no answer reached it
		}
		s.strictLog.add(s.opts.Contract.CheckResponse(r, body, rec.status, w.Header(), rec.body.Bytes()))
	}
}

// recorder passes an answer through and keeps its status and body.
type recorder struct {
	http.ResponseWriter
	status int
	wrote  bool
	body   bytes.Buffer
}

func (r *recorder) WriteHeader(code int) {
	if !r.wrote {
		r.status, r.wrote = code, true
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(b []byte) (int, error) {
	r.wrote = true
	r.body.Write(b)
	return r.ResponseWriter.Write(b)
}
