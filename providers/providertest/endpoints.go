package providertest

import (
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gpufinops/gpufinops/providers"
)

// ClosedEndpoint is the URL of a port nothing listens on any more: a
// client's connection is refused.
func ClosedEndpoint(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr
}

// HungEndpoint is the URL of a listener that accepts connections and never
// answers; it closes them when the test ends.
func HungEndpoint(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		l.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return "http://" + l.Addr().String()
}

// FailsFast is the fail-fast check every adapter passes: call makes the
// adapter's first request with o (Endpoint a closed port, then a hung
// listener; a 300 ms request timeout; OnRequest counting attempts; the
// adapter adds its region and own options) and returns its error. Each
// must fail at the first attempt within seconds, and providers.Brief of
// the error must be one line naming op and the cause and holding none of
// bad (an SDK's retry text, a credentials error).
func FailsFast(t *testing.T, op string, call func(t *testing.T, o providers.Options) error, bad ...string) {
	t.Helper()
	for _, tc := range []struct {
		name     string
		endpoint func(testing.TB) string
		want     string
	}{
		{"closed port", ClosedEndpoint, "connection refused"},
		{"hung", HungEndpoint, "request timeout of 300ms"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var attempts atomic.Int32
			start := time.Now()
			err := call(t, providers.Options{Endpoint: tc.endpoint(t), RequestTimeout: 300 * time.Millisecond,
				OnRequest: func() { attempts.Add(1) }})
			el := time.Since(start)
			if err == nil {
				t.Fatal("an unreachable endpoint gave no error")
			}
			if n := attempts.Load(); n != 1 {
				t.Errorf("%d attempts, want 1: an unreachable endpoint is not retried", n)
			}
			if el > 10*time.Second {
				t.Errorf("failed after %s, want seconds", el)
			}
			msg := providers.Brief(err)
			for _, w := range []string{op, tc.want} {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q lacks %q", msg, w)
				}
			}
			if strings.Contains(msg, "\n") {
				t.Errorf("error %q: want one line", msg)
			}
			for _, b := range bad {
				if strings.Contains(msg, b) {
					t.Errorf("error %q holds %q", msg, b)
				}
			}
		})
	}
}
