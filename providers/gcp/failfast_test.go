package gcp

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"cloud.google.com/go/monitoring/apiv3/v2/monitoringpb"

	"github.com/gpufinops/gpufinops/providers"
	"github.com/gpufinops/gpufinops/providers/providertest"
)

// TestUnreachableEndpointFailsFast: through the real SDK and the
// production HTTP client, a closed port fails at the first attempt and a
// hung endpoint after one request timeout, for the REST clients (project
// listing) as for the gRPC one (Cloud Monitoring); each error names the
// call and the cause in one line.
func TestUnreachableEndpointFailsFast(t *testing.T) {
	providertest.FailsFast(t, "listing projects", func(t *testing.T, o providers.Options) error {
		// New lists the projects when none is given.
		o.Regions = []string{"us-central1"}
		_, err := New(context.Background(), o)
		return err
	})
}

// TestUnreachableMonitoringFailsFast: Cloud Monitoring's gRPC client, on
// a closed port, fails at the first attempt (gRPC's UNAVAILABLE is retried
// otherwise), and on a listener that never answers after one request
// timeout.
func TestUnreachableMonitoringFailsFast(t *testing.T) {
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
				Endpoint: tc.endpoint(t), Regions: []string{"us-central1"}, Adapter: providers.Values{OptProjects: []string{"p1"}},
				RequestTimeout: 300 * time.Millisecond, OnRequest: func() { attempts.Add(1) },
			})
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			_, err = p.(*Provider).metrics.ListTimeSeries(context.Background(), &monitoringpb.ListTimeSeriesRequest{Name: "projects/p1"}).Next()
			el := time.Since(start)
			if err == nil {
				t.Fatal("an unreachable endpoint answered")
			}
			if n := attempts.Load(); n != 1 {
				t.Errorf("%d attempts, want 1: an unreachable endpoint is not retried", n)
			}
			if el > 10*time.Second {
				t.Errorf("failed after %s, want seconds", el)
			}
			if msg := providers.Brief(err); !strings.Contains(msg, tc.want) {
				t.Errorf("error %q lacks %q", msg, tc.want)
			}
		})
	}
}
