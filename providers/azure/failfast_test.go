package azure

import (
	"context"
	"testing"

	"github.com/gpufinops/gpufinops/providers"
	"github.com/gpufinops/gpufinops/providers/providertest"
)

// TestUnreachableEndpointFailsFast: through the real SDK and the
// production HTTP client, a closed port fails at the first attempt (no
// retries, no backoff: it took 57 s) and a hung endpoint after one request
// timeout; each error names the call and the cause in one line.
func TestUnreachableEndpointFailsFast(t *testing.T) {
	providertest.FailsFast(t, "listing subscriptions", func(t *testing.T, o providers.Options) error {
		o.Regions, o.Adapter = []string{"eastus"}, providers.Values{OptTestCredential: true}
		p, err := New(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		_, err = p.Scopes(context.Background())
		return err
	}, "credentials")
}
