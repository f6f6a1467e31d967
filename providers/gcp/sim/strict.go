package sim

import (
	"bytes"
	"fmt"
	"io"
	"net/http"

	"github.com/gpufinops/gpufinops/providers/gcp/sim/models"
)

// Strict mode: each request is checked against the vendored discovery
// documents (REST) or the monitoringpb descriptors (gRPC) before it is
// served and each answer after (Options.Strict).

// OpOf names the operation of a request as Ops does ("compute:instances.get",
// "monitoring:ListTimeSeries"); "" when the simulator serves no such call.
func OpOf(r *http.Request) (service, op string) {
	if isGRPC(r) {
		return "monitoring", path(r.URL.Path)
	}
	for _, rt := range routes {
		if rt.re.MatchString(r.URL.Path) {
			return rt.service, rt.op
		}
	}
	return "", ""
}

// CheckRequest checks a request against its model.
func CheckRequest(r *http.Request, body []byte) error {
	if isGRPC(r) {
		return models.Join(models.GRPCRequest(r.URL.Path, body))
	}
	service, op := OpOf(r)
	if service == "" {
		return fmt.Errorf("no simulated method %s %s", r.Method, r.URL.Path)
	}
	d, err := models.Load(service)
	if err != nil {
		return err
	}
	return models.Join(d.Request(service+"."+op, r, body))
}

// CheckAnswer checks the answer to a request against its model: its body
// when the call succeeded, else its error.
func CheckAnswer(r *http.Request, status int, h http.Header, answer []byte) error {
	if isGRPC(r) {
		return models.Join(models.GRPCAnswer(r.URL.Path, status, h, answer))
	}
	if status >= 300 {
		return models.Join(models.ErrorAnswer(status, h, answer))
	}
	service, op := OpOf(r)
	d, err := models.Load(service)
	if err != nil {
		return err
	}
	return models.Join(d.Answer(service+"."+op, answer))
}

func (s *Server) serveStrict(w http.ResponseWriter, r *http.Request) {
	service, op := OpOf(r)
	if service == "" {
		s.serve(w, r)
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	if err := CheckRequest(r, body); err != nil {
		s.opts.Strict(service, op, fmt.Errorf("request: %w", err))
		if isGRPC(r) {
			writeGRPC(w, nil, grpcInvalidArgument, err.Error())
		} else {
			writeError(w, http.StatusBadRequest, "invalid", err.Error())
		}
		return
	}
	cw := &captureWriter{ResponseWriter: w}
	s.serve(cw, r)
	if r.Context().Err() != nil || cw.status == 0 {
		return
	}
	if err := CheckAnswer(r, cw.status, cw.Header(), cw.body.Bytes()); err != nil {
		s.opts.Strict(service, op, fmt.Errorf("answer (HTTP %d): %w", cw.status, err))
	}
}

// captureWriter keeps a copy of the answer it passes on.
type captureWriter struct {
	http.ResponseWriter
	status int
	body   bytes.Buffer
}

func (c *captureWriter) WriteHeader(status int) {
	if c.status == 0 {
		c.status = status
	}
	c.ResponseWriter.WriteHeader(status)
}

func (c *captureWriter) Write(b []byte) (int, error) {
	if c.status == 0 {
		c.status = http.StatusOK
	}
	c.body.Write(b)
	return c.ResponseWriter.Write(b)
}

func (c *captureWriter) Flush() {
	if f, ok := c.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}
