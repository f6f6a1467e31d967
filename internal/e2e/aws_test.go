// Package e2e holds end-to-end tests that cross the adapters, the simulators
// and the engine.
package e2e

import (
	"bytes"
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/gpufinops/gpufinops/internal/purchasetest"
	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pkg/recommend"
	"github.com/gpufinops/gpufinops/pricing"
	"github.com/gpufinops/gpufinops/pricing/catalog"
	"github.com/gpufinops/gpufinops/providers"
	_ "github.com/gpufinops/gpufinops/providers/aws"
	"github.com/gpufinops/gpufinops/providers/aws/sim"
	"github.com/gpufinops/gpufinops/providers/aws/simcat"
	"github.com/gpufinops/gpufinops/providers/file"
)

// demoEnd is the end of the demo fleet's utilization window.
var demoEnd = time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)

// awsDemo is the demo fleet's AWS part as a file. The simulator serves its
// workload blocks as tags (fleet.WorkloadTags), which the adapter reads back.
func awsDemo(t *testing.T) []byte {
	t.Helper()
	demo, err := file.Demo()
	if err != nil {
		t.Fatal(err)
	}
	out := &fleet.Fleet{APIVersion: fleet.APIVersion, Kind: fleet.Kind, Metadata: demo.Metadata}
	for _, in := range asScanned(demo).Instances {
		if in.Provider == fleet.AWS {
			out.Instances = append(out.Instances, in)
		}
	}
	var b bytes.Buffer
	if err := fleet.Write(&b, out, fleet.FormatYAML); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

type outcome struct {
	current, savings string
	recs             []string
	instances        map[string]string
}

func summarize(p recommend.Plan) outcome {
	o := outcome{current: p.Summary.CurrentMonthly.StringFixed(2), savings: p.Summary.MonthlySavings.StringFixed(2), instances: map[string]string{}}
	for _, r := range p.Recommendations {
		o.recs = append(o.recs, fmt.Sprintf("%s %s → %s: %s → %s", r.Kind, r.ResourceID, r.Target, r.CurrentMonthly.StringFixed(2), r.ProjectedMonthly.StringFixed(2)))
	}
	sort.Strings(o.recs)
	for _, ic := range p.Instances {
		o.instances[ic.ResourceID] = ic.MonthlyCost.StringFixed(2) + " → " + ic.OptimizedCost.StringFixed(2)
	}
	return o
}

// TestAWSSimulatorMatchesFile: the same fleet analysed from its file and
// through the real AWS SDK against the simulator serving it gives the same
// recommendations and totals.
func TestAWSSimulatorMatchesFile(t *testing.T) {
	for k, v := range map[string]string{
		"AWS_EC2_METADATA_DISABLED": "true", "AWS_CONFIG_FILE": os.DevNull, "AWS_SHARED_CREDENTIALS_FILE": os.DevNull,
		"AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test", "AWS_REGION": "us-east-1", "AWS_PROFILE": "",
	} {
		t.Setenv(k, v)
	}
	cat, err := catalog.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	doc := awsDemo(t)
	policy := recommend.DefaultPolicy().WithPurchases(purchasetest.Purchases())

	// From the file.
	fromFile, err := fleet.Parse("aws-demo.yaml", doc)
	if err != nil {
		t.Fatal(err)
	}
	if err := pricing.Complete(fromFile, cat); err != nil {
		t.Fatal(err)
	}
	want := summarize(recommend.Run(fromFile, cat, policy))

	// Through the simulator and the adapter.
	served, err := fleet.Parse("aws-demo.yaml", doc)
	if err != nil {
		t.Fatal(err)
	}
	if err := pricing.Complete(served, cat); err != nil {
		t.Fatal(err)
	}
	opts := simcat.Options(served, cat)
	opts.Now = func() time.Time { return demoEnd }
	srv := httptest.NewServer(sim.New(served, opts))
	defer srv.Close()
	ri, ok := providers.Find(fleet.AWS)
	if !ok {
		t.Fatal("no aws adapter registered")
	}
	ctx := context.Background()
	p, err := ri.New(ctx, providers.Options{Endpoint: srv.URL, Regions: []string{"us-east-1"}, Now: func() time.Time { return demoEnd }})
	if err != nil {
		t.Fatal(err)
	}
	res, err := providers.Collect(ctx, p, providers.CollectOptions{Window: fleet.TimeRange{Start: demoEnd.Add(-14 * 24 * time.Hour), End: demoEnd}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Failures) > 0 {
		t.Fatalf("scan failures: %v", res.Failures)
	}
	live := pricing.Overlay(cat, res.Prices)
	if err := pricing.Complete(res.Fleet, live); err != nil {
		t.Fatal(err)
	}
	got := summarize(recommend.Run(res.Fleet, live, policy))

	if got.current != want.current || got.savings != want.savings {
		t.Errorf("totals through the simulator: current %s, savings %s; from the file: %s, %s", got.current, got.savings, want.current, want.savings)
	}
	if strings.Join(got.recs, "\n") != strings.Join(want.recs, "\n") {
		t.Errorf("recommendations differ:\nthrough the simulator:\n  %s\nfrom the file:\n  %s", strings.Join(got.recs, "\n  "), strings.Join(want.recs, "\n  "))
	}
	for id, w := range want.instances {
		if g := got.instances[id]; g != w {
			t.Errorf("%s: %s through the simulator, %s from the file", id, g, w)
		}
	}
	t.Logf("%d recommendations; current %s, savings %s a month, both ways", len(want.recs), want.current, want.savings)
	if len(want.recs) < 20 {
		t.Errorf("only %d recommendations: the comparison is too thin", len(want.recs))
	}
}
