package aws

import (
	"context"
	"testing"

	"github.com/gpufinops/gpufinops/providers"
	"github.com/gpufinops/gpufinops/providers/providertest"
)

// TestUnreachableEndpointFailsFast: through the real SDK and the
// production HTTP client, a closed port fails at the first attempt (no
// retries, no backoff) and a hung endpoint after one request timeout; each
// error names the operation and the cause in one line, without the SDK's
// retry text.
func TestUnreachableEndpointFailsFast(t *testing.T) {
	providertest.FailsFast(t, "GetCallerIdentity", func(t *testing.T, o providers.Options) error {
		o.Regions = []string{"us-east-1"}
		_, err := New(context.Background(), o)
		return err
	}, "attempts", "StatusCode")
}
