package file_test

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pricing"
	"github.com/gpufinops/gpufinops/pricing/catalog"
	"github.com/gpufinops/gpufinops/providers"
	"github.com/gpufinops/gpufinops/providers/file"
	"github.com/gpufinops/gpufinops/providers/providertest"
)

var now = time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)

// demoAWS is the demo fleet completed from the catalog, its AWS instances
// spread over three regions, priced, some without utilization, and its
// generation date set.
func demoAWS(t *testing.T) *fleet.Fleet {
	t.Helper()
	fl, err := file.Demo()
	if err != nil {
		t.Fatal(err)
	}
	cat, err := catalog.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	regions := []string{"eu-west-1", "us-east-1", "us-west-2"}
	n := 0
	for i := range fl.Instances {
		if in := &fl.Instances[i]; in.Provider == fleet.AWS {
			in.Region = regions[n%len(regions)]
			if n%5 == 1 {
				in.Utilization = nil // the agent is missing
			}
			price := decimal.NewFromFloat(1.25 + float64(n))
			in.HourlyPrice = &price
			n++
		}
	}
	if err := pricing.Complete(fl, cat); err != nil {
		t.Fatal(err)
	}
	fl.Metadata.GeneratedAt = &now
	return fl
}

// TestConformance: the file passes what needs no backend; faults cannot be
// injected into a file.
func TestConformance(t *testing.T) {
	fl := demoAWS(t)
	sum := providertest.Run(t, providertest.Harness{
		Provider: fleet.AWS, Fleet: fl, Regions: []string{"ap-south-1", "eu-west-1", "us-east-1", "us-west-2"}, Now: now,
		New: func(t *testing.T, s providertest.Setup) (providers.Provider, error) {
			if !reflect.DeepEqual(s.Faults, providertest.Faults{}) {
				return nil, fmt.Errorf("faults in a file: %w", providertest.ErrUnsupported)
			}
			return file.New(s.Fleet, file.Options{Cloud: fleet.AWS, Regions: s.Regions}), nil
		},
	})
	var unexpected []string
	for _, s := range sum.Skipped {
		name, _, _ := strings.Cut(s, ":")
		if !slices.Contains([]string{"faults", "credentials", "cancellation", "partial_scopes", "stop", "doctor"}, strings.Split(name, "/")[1]) &&
			!strings.HasSuffix(name, "failing_metrics_source_keeps_the_instances,_utilization_unknown") &&
			!strings.HasSuffix(name, "failing_price_APIs_leave_the_embedded_catalog") && !strings.HasSuffix(name, "the_cache_serves_when_the_price_APIs_fail") {
			unexpected = append(unexpected, s)
		}
	}
	if len(unexpected) > 0 {
		t.Errorf("skipped: %q", unexpected)
	}
}

// TestProviderServesEveryCloud: without Cloud the provider is "file" and
// its scopes are every cloud's accounts and regions of the fleet.
func TestProviderServesEveryCloud(t *testing.T) {
	fl := demoAWS(t)
	p := file.New(fl, file.Options{})
	if p.Name() != file.Name {
		t.Errorf("Name() = %q", p.Name())
	}
	res, err := providers.Collect(context.Background(), p, providers.CollectOptions{Window: fleet.TimeRange{End: now}})
	if err != nil || len(res.Failures) > 0 {
		t.Fatal(err, res.Failures)
	}
	if len(res.Fleet.Instances) != len(fl.Instances) {
		t.Fatalf("%d instances, the file has %d", len(res.Fleet.Instances), len(fl.Instances))
	}
	clouds := map[fleet.Provider]bool{}
	scopes, _ := p.Scopes(context.Background())
	for _, s := range scopes {
		clouds[s.Provider] = true
	}
	if len(clouds) != 3 {
		t.Errorf("scopes of %v, want the demo's three clouds", clouds)
	}
	for _, in := range res.Fleet.Instances {
		var src fleet.Instance
		for _, f := range fl.Instances {
			if f.ID == in.ID {
				src = f
			}
		}
		if (src.Utilization == nil) != (in.Utilization == nil) || in.State != src.State {
			t.Errorf("%s: utilization or state not as in the file", in.ID)
		}
	}
}
