package analyze

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpufinops/gpufinops/pkg/cmdutil"
)

// An instance of a type the catalog lacks is unpriced and warned of, unless
// the bill joined to it gives its rate: then it is priced from the bill and
// the price is no longer missing.
func TestAnalyzeUnknownTypePricedByBill(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fleet.yaml")
	body := "apiVersion: gpufinops/v1\nkind: Fleet\ninstances:\n" +
		"  - {id: i-0b3b3095474a3772a, provider: aws, region: us-east-1, instanceType: g9z.4xlarge, gpu: {model: Z9, count: 1}, lifecycle: on-demand, state: running}\n"
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	opts, out := demoOptions(t, "json", false)
	opts.Input = cmdutil.FleetFlags{Path: path}
	err := analyzeRun(opts)
	if code := cmdutil.ExitCodeFor(err); code != cmdutil.ExitPartial || !strings.Contains(out.String(), `"priced": false`) {
		t.Fatalf("without the bill: exit %d (%v), want %d and the instance unpriced:\n%s", code, err, cmdutil.ExitPartial, out)
	}
	opts, out = demoOptions(t, "json", false)
	opts.Input = cmdutil.FleetFlags{Path: path}
	opts.Billing = "../../../testdata/billing/focus-1.0-sample.csv"
	if err := analyzeRun(opts); err != nil {
		t.Fatalf("with the bill: %v", err)
	}
	if !strings.Contains(out.String(), `"priced": true`) || !strings.Contains(out.String(), `"priceBasis": "bill"`) || strings.Contains(out.String(), "unknown-type") {
		t.Errorf("with the bill, want the instance priced from it and no unknown-type warning:\n%s", out)
	}
}
