package providertest

import (
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
)

// backends hold one server per test case (*testing.T → *swapHandler).
var backends sync.Map

// swapHandler serves whichever handler the case's latest Backend call gave.
type swapHandler struct {
	h   atomic.Pointer[http.Handler]
	url string
}

func (s *swapHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	(*s.h.Load()).ServeHTTP(w, r)
}

// Backend serves h at the test case's one address and returns it: every
// provider a conformance case builds then shares one endpoint, the origin
// the price cache is keyed by, while each gets its own simulator. The first
// call of a case starts the server with serve, which returns its URL and
// stops it when the test ends.
func Backend(t *testing.T, h http.Handler, serve func(http.Handler) string) string {
	t.Helper()
	sw := &swapHandler{}
	sw.h.Store(&h)
	if old, loaded := backends.LoadOrStore(t, sw); loaded {
		sw = old.(*swapHandler)
		sw.h.Store(&h)
		return sw.url
	}
	sw.url = serve(sw)
	t.Cleanup(func() { backends.Delete(t) })
	return sw.url
}
