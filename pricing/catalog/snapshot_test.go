package catalog

import (
	"strings"
	"testing"
	"testing/fstest"

	"github.com/gpufinops/gpufinops/pkg/fleet"
)

// The price snapshot `make catalog` writes is laid over the source
// extracts and named in the sources; a broken one fails the catalog with
// its path; none leaves the catalog as loaded.
func TestWithSnapshot(t *testing.T) {
	base, err := Embedded()
	if err != nil {
		t.Fatal(err)
	}
	if got, err := withSnapshot(base, fstest.MapFS{}); err != nil || got != base {
		t.Fatalf("no snapshot: %v", err)
	}
	snap := `{"schemaVersion":"1.0","kind":"CatalogOverlay","updatedAt":"2026-12-06T10:00:00Z","fetches":[],"prices":[
	  {"provider":"aws","region":"us-east-1","instanceType":"g5.xlarge","option":"on-demand","hourly":"0.999","currency":"USD","unit":"hour","source":"AWS Price List API GetProducts","asOf":"2026-12-06"}]}`
	got, err := withSnapshot(base, fstest.MapFS{"snapshot/prices.json": {Data: []byte(snap)}})
	if err != nil {
		t.Fatal(err)
	}
	o, ok := got.Offer(fleet.AWS, "us-east-1", "g5.xlarge")
	if !ok || o.OnDemand.Hourly.String() != "0.999" || o.OnDemand.Source != "AWS Price List API GetProducts (price snapshot 2026-12-06)" {
		t.Fatalf("offer %+v", o.OnDemand)
	}
	srcs := got.Sources()
	if last := srcs[len(srcs)-1]; last.Name != "AWS price snapshot" || last.AsOf != "2026-12-06" || !strings.Contains(last.Origin, SnapshotPath) {
		t.Fatalf("source %+v", last)
	}
	_, err = withSnapshot(base, fstest.MapFS{"snapshot/prices.json": {Data: []byte(`{"kind":"x"}`)}})
	if err == nil || !strings.HasPrefix(err.Error(), "catalog overlay "+SnapshotPath+": ") {
		t.Fatalf("a broken snapshot: %v", err)
	}
}
