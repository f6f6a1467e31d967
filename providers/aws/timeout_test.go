package aws

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gpufinops/gpufinops/providers"
	"github.com/gpufinops/gpufinops/providers/aws/sim"
)

// TestRequestTimeoutBoundsHungCalls: an endpoint that accepts requests and
// never answers costs one attempt of the request timeout, not retried (a
// hung call fails in seconds, not ten timeouts later); the error names the
// operation and the timeout, and a stop that hangs ends in an error, never a
// success.
func TestRequestTimeoutBoundsHungCalls(t *testing.T) {
	f := scanFleet(t, 12)
	for _, op := range []string{"DescribeInstances", "ec2:StopInstances"} {
		t.Run(op, func(t *testing.T) {
			srv, s := scanSim(t, f, sim.Options{})
			p, err := New(context.Background(), providers.Options{Endpoint: srv.URL, Regions: []string{"us-east-1"}, RequestTimeout: 150 * time.Millisecond, Now: func() time.Time { return simNow }})
			if err != nil {
				t.Fatal(err)
			}
			sc := scopeOf(t, p.(*Provider), "us-east-1")
			if err := s.SetFaults(sim.Faults{Hang: []string{op}}); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 900*time.Millisecond)
			defer cancel()
			start := time.Now()
			if op == "DescribeInstances" {
				_, err = p.ListGPUInstances(ctx, sc)
			} else {
				_, err = p.(*Provider).Stop(ctx, sc, f.Instances[0].ID, false)
			}
			el := time.Since(start)
			if err == nil {
				t.Fatal("a hung call succeeded")
			}
			if el > 1500*time.Millisecond {
				t.Fatalf("returned after %s, past the 900ms deadline", el)
			}
			name := op
			if op == "ec2:StopInstances" {
				name = "StopInstances"
			}
			if n := s.Counts()["ec2"][name]; n != 1 {
				t.Errorf("%d %s requests, want 1: a timed-out attempt is not retried", n, name)
			}
			if msg := providers.Brief(err); !strings.Contains(msg, name) || !strings.Contains(msg, "request timeout of 150ms") || strings.Contains(msg, "attempts") {
				t.Errorf("error %q: want the operation and the request timeout, without the SDK's retry text", msg)
			}
			if st := s.State()[0].State; st != "running" {
				t.Errorf("state %s after a hung stop", st)
			}
		})
	}
}
