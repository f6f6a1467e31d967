package simkit

import (
	"bytes"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
)

// Recorder wraps a simulator and keeps every exchange, for a test to show
// what a third-party client sent and got when it fails.
type Recorder struct {
	H http.Handler
	// Headers are the request headers an exchange shows.
	Headers []string

	mu sync.Mutex
	ex []Exchange
}

// Exchange is one request and its answer.
type Exchange struct {
	Method, Host, URI string
	Header            http.Header
	Body              []byte
	Status            int
	RespHeader        http.Header
	Resp              []byte
}

// ServeHTTP serves req through H and keeps the exchange.
func (r *Recorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	req.Body = io.NopCloser(bytes.NewReader(body))
	rec := httptest.NewRecorder()
	r.H.ServeHTTP(rec, req)
	maps.Copy(w.Header(), rec.Header())
	w.WriteHeader(rec.Code)
	_, _ = w.Write(rec.Body.Bytes())
	r.mu.Lock()
	r.ex = append(r.ex, Exchange{req.Method, req.Host, req.URL.RequestURI(), req.Header.Clone(), body, rec.Code, rec.Header().Clone(), rec.Body.Bytes()})
	r.mu.Unlock()
}

// Len is how many exchanges were kept.
func (r *Recorder) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.ex)
}

// Since prints the exchanges after the first n.
func (r *Recorder) Since(n int) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	parts := make([]string, 0, len(r.ex)-n)
	for _, e := range r.ex[n:] {
		var b strings.Builder
		fmt.Fprintf(&b, "> %s %s%s\n", e.Method, e.Host, e.URI)
		for _, h := range r.Headers {
			if v := e.Header.Get(h); v != "" {
				fmt.Fprintf(&b, "> %s: %s\n", h, v)
			}
		}
		fmt.Fprintf(&b, "> %s\n< %d %s\n< %s", clip(e.Body), e.Status, e.RespHeader.Get("Content-Type"), clip(e.Resp))
		parts = append(parts, b.String())
	}
	return strings.Join(parts, "\n")
}

func clip(b []byte) string {
	const n = 3000
	if len(b) > n {
		return fmt.Sprintf("%q… (%d bytes)", b[:n], len(b))
	}
	return fmt.Sprintf("%q", b)
}
