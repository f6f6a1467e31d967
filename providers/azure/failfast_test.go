package azure

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gpufinops/gpufinops/providers"
	"github.com/gpufinops/gpufinops/providers/providertest"
)

// TestUnreachableEndpointFailsFast: through the real SDK and the
// production HTTP client, a closed port fails at the first attempt (no
// retries, no backoff: it took 57 s) and a hung endpoint after one request
// timeout; each error names the call and the cause in one line.
func TestUnreachableEndpointFailsFast(t *testing.T) {
	for _, tc := range []struct {
		name     string
		endpoint func(testing.TB) string
		want     string
	}{
		{"closed port", providertest.ClosedEndpoint, "connection refused"},
		{"hung", providertest.HungEndpoint, "request timeout of 300ms"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var attempts atomic.Int32
			p, err := New(context.Background(), providers.Options{
				Endpoint: tc.endpoint(t), Regions: []string{"eastus"},
				RequestTimeout: 300 * time.Millisecond, OnRequest: func() { attempts.Add(1) },
				Adapter: providers.Values{OptTestCredential: true},
			})
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			_, err = p.Scopes(context.Background())
			el := time.Since(start)
			if err == nil {
				t.Fatal("an unreachable endpoint listed scopes")
			}
			if n := attempts.Load(); n != 1 {
				t.Errorf("%d attempts, want 1: an unreachable endpoint is not retried", n)
			}
			if el > 10*time.Second {
				t.Errorf("failed after %s, want seconds", el)
			}
			msg := providers.Brief(err)
			for _, w := range []string{"listing subscriptions", tc.want} {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q lacks %q", msg, w)
				}
			}
			if strings.Contains(msg, "credentials") || strings.Contains(msg, "\n") {
				t.Errorf("error %q: want one line, not a credentials error", msg)
			}
		})
	}
}
