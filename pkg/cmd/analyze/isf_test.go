package analyze

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpufinops/gpufinops/internal/purchasetest"
	"github.com/gpufinops/gpufinops/pkg/cmdutil"
	"github.com/gpufinops/gpufinops/pkg/config"
	"github.com/gpufinops/gpufinops/pkg/recommend"
)

// TestAnalyzeISFRatios: analyze.isf_ratios names Microsoft's instance size
// flexibility table; a good one is read, a bad or missing one is bad input
// (exit 2) naming the key, the file and the line, with no report written.
func TestAnalyzeISFRatios(t *testing.T) {
	dir := t.TempDir()
	good, bad := filepath.Join(dir, "isf.csv"), filepath.Join(dir, "bad.csv")
	for p, body := range map[string]string{
		good: "InstanceSizeFlexibilityGroup,ArmSkuName,Ratio\nNCadsA100v4 Series,Standard_NC24ads_A100_v4,1\nNCadsA100v4 Series,Standard_NC48ads_A100_v4,2\n",
		bad:  "InstanceSizeFlexibilityGroup,ArmSkuName,Ratio\nNCadsA100v4 Series,Standard_NC24ads_A100_v4,1\nNCadsA100v4 Series,Standard_NC48ads_A100_v4,2x\n",
	} {
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct{ path, want string }{
		{good, ""},
		{bad, "analyze.isf_ratios: " + bad + ":3: ratio \"2x\""},
		{filepath.Join(dir, "none.csv"), "analyze.isf_ratios: " + filepath.Join(dir, "none.csv") + ": no such file"},
	} {
		opts, out := demoOptions(t, "json", false)
		opts.Config = func() (*config.Config, error) {
			c := &config.Config{Policy: recommend.DefaultPolicy().WithPurchases(purchasetest.Purchases())}
			c.Analyze.ISFRatios = tc.path
			return c, nil
		}
		err := analyzeRun(opts)
		if tc.want == "" {
			if cmdutil.ExitCodeFor(err) != cmdutil.ExitOK && cmdutil.ExitCodeFor(err) != cmdutil.ExitPartial || out.Len() == 0 {
				t.Errorf("%s: %v", tc.path, err)
			}
			continue
		}
		var inputErr *cmdutil.InputError
		if !errors.As(err, &inputErr) || cmdutil.ExitCodeFor(err) != cmdutil.ExitUsage || !strings.Contains(err.Error(), tc.want) || out.Len() != 0 {
			t.Errorf("%s: %v (exit %d), want exit 2 with %q", tc.path, err, cmdutil.ExitCodeFor(err), tc.want)
		}
	}
}
