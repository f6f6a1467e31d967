package cmdutil

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/gpufinops/gpufinops/pkg/config"
	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pricing/catalog"
	"github.com/gpufinops/gpufinops/providers"
)

var (
	east = providers.Scope{Provider: fleet.AWS, Account: "111122223333", Region: "us-east-1"}
	west = providers.Scope{Provider: fleet.AWS, Account: "111122223333", Region: "eu-west-1"}
)

func TestScanWarningOf(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want fleet.ScanWarning
	}{
		{"region", &providers.ScopeError{Scope: west, Err: errors.New("DescribeInstances: 500")},
			fleet.ScanWarning{Code: fleet.ScanScopeFailed, Provider: fleet.AWS, Account: "111122223333", Region: "eu-west-1", Reason: "DescribeInstances: 500"}},
		{"permission, wrapped with a hint", fmt.Errorf("%w (see docs/iam/)", &providers.ScopeError{Scope: west, Err: providers.ErrPermission}),
			fleet.ScanWarning{Code: fleet.ScanScopeFailed, Provider: fleet.AWS, Account: "111122223333", Region: "eu-west-1", Reason: "permission denied (see docs/iam/)"}},
		{"cloudwatch", &providers.ScopeError{Scope: east, Metrics: true, Source: "cloudwatch", Instances: []string{"i-1", "i-2"}, Err: fmt.Errorf("GetMetricData: %w", providers.ErrThrottled)},
			fleet.ScanWarning{Code: fleet.ScanMetricsFailed, Provider: fleet.AWS, Account: "111122223333", Region: "us-east-1", Source: "cloudwatch", Reason: "GetMetricData: throttled by the cloud", Instances: []string{"i-1", "i-2"}}},
		{"account without region", &providers.ScopeError{Scope: providers.Scope{Provider: fleet.Azure, Account: "sub-1"}, Err: errors.New("denied")},
			fleet.ScanWarning{Code: fleet.ScanScopeFailed, Provider: fleet.Azure, Account: "sub-1", Reason: "denied"}},
		{"plain error on lines", errors.New("listing regions:\n  boom"), fleet.ScanWarning{Code: fleet.ScanScopeFailed, Reason: "listing regions: boom"}},
		{"already a warning", &ScanFailure{Warning: fleet.ScanWarning{Code: "metrics-failed", Source: "prometheus", Reason: "x"}}, fleet.ScanWarning{Code: "metrics-failed", Source: "prometheus", Reason: "x"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := ScanWarningOf(tc.err)
			if fmt.Sprint(got) != fmt.Sprint(tc.want) || strings.Join(got.Instances, ",") != strings.Join(tc.want.Instances, ",") || got.Reason != tc.want.Reason {
				t.Errorf("got %#v\nwant %#v", got, tc.want)
			}
		})
	}
}

func scanFleet() *fleet.Fleet {
	return &fleet.Fleet{APIVersion: fleet.APIVersion, Kind: fleet.Kind, Metadata: fleet.Metadata{Name: "scan"}, Instances: []fleet.Instance{
		{ID: "i-1", Provider: fleet.AWS, Account: "111122223333", Region: "us-east-1", InstanceType: "g5.xlarge", Lifecycle: fleet.OnDemand, State: fleet.Running},
	}}
}

// TestReadFleetRecordsScanFailures: a scan's failures become the fleet's
// metadata.warnings and a PartialError; a snapshot's recorded warnings stay
// (not doubled) and make the run partial too.
func TestReadFleetRecordsScanFailures(t *testing.T) {
	cfg := func() (*config.Config, error) { return &config.Config{}, nil }
	fails := []error{
		&providers.ScopeError{Scope: west, Err: errors.New("500")},
		&providers.ScopeError{Scope: east, Metrics: true, Source: "cloudwatch", Instances: []string{"i-1"}, Err: providers.ErrPermission},
	}
	scan := func(context.Context, FleetFlags, *config.Config) (*Scan, error) {
		return &Scan{Fleet: scanFleet(), Failures: fails}, nil
	}
	in, err := ReadFleet(context.Background(), cfg, catalog.Embedded, nil, scan, FleetFlags{Providers: []string{"aws"}, LookbackDays: 14})
	if err != nil {
		t.Fatal(err)
	}
	ws := in.Fleet.Metadata.Warnings
	if len(ws) != 2 || ws[0].Code != fleet.ScanScopeFailed || ws[1].Code != fleet.ScanMetricsFailed || ws[1].Instances[0] != "i-1" {
		t.Fatalf("metadata.warnings %+v", ws)
	}
	var b strings.Builder
	var runErr error
	in.Finish(&b, &runErr)
	if ExitCodeFor(runErr) != ExitPartial {
		t.Fatalf("exit %d", ExitCodeFor(runErr))
	}
	if !errors.Is(runErr.(*PartialError).Failures[1], providers.ErrPermission) {
		t.Errorf("the cause is lost: %v", runErr)
	}
	for _, want := range []string{"warning: aws:111122223333/eu-west-1 was not scanned: 500", "warning: cloudwatch could not be read for aws:111122223333/us-east-1: permission denied; 1 instance kept"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("stderr %q lacks %q", b.String(), want)
		}
	}

	// The snapshot, read back with --fleet.
	snap := in.Fleet
	read := func(string, bool) (*fleet.Fleet, error) { return snap, nil }
	again, err := ReadFleet(context.Background(), cfg, catalog.Embedded, read, nil, FleetFlags{Path: "snap.json", LookbackDays: 14})
	if err != nil {
		t.Fatal(err)
	}
	if len(again.Fleet.Metadata.Warnings) != 2 || len(again.Failures) != 2 {
		t.Fatalf("warnings %d, failures %d", len(again.Fleet.Metadata.Warnings), len(again.Failures))
	}
	b.Reset()
	runErr = nil
	again.Finish(&b, &runErr)
	if ExitCodeFor(runErr) != ExitPartial || !strings.Contains(b.String(), "(recorded in the snapshot scan)") {
		t.Errorf("exit %d, stderr %q", ExitCodeFor(runErr), b.String())
	}

	// A clean snapshot is not partial.
	clean := func(string, bool) (*fleet.Fleet, error) { return scanFleet(), nil }
	ok, err := ReadFleet(context.Background(), cfg, catalog.Embedded, clean, nil, FleetFlags{Path: "f.json", LookbackDays: 14})
	if err != nil || ok.Partial() != nil || len(ok.Fleet.Metadata.Warnings) != 0 {
		t.Errorf("clean snapshot: %v %v", err, ok.Partial())
	}
}
