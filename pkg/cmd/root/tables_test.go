package root

import (
	"context"
	"strings"
	"testing"

	"github.com/gpufinops/gpufinops/internal/purchasetest"
	"github.com/gpufinops/gpufinops/pkg/cmd/factory"
	"github.com/gpufinops/gpufinops/pkg/cmdutil"
	"github.com/gpufinops/gpufinops/pkg/config"
	"github.com/gpufinops/gpufinops/pkg/iostreams"
	"github.com/gpufinops/gpufinops/pkg/recommend"
	"github.com/gpufinops/gpufinops/pkg/testutil"
	"github.com/gpufinops/gpufinops/pricing/catalog"
)

// TestNoTableCutsAnIDAtTheFront walks the commands that print tables from
// data at hand (the demo fleet, the embedded catalog, sample files) at 80
// columns on a terminal: every line fits, and no word lost its start (an
// identifier is shortened in the middle, what a user acts on wraps). Each
// command's own width test names its action columns.
func TestNoTableCutsAnIDAtTheFront(t *testing.T) {
	for _, args := range [][]string{
		{"analyze", "--demo"},
		{"analyze", "--demo", "--by", "strategy"},
		{"commit-plan", "--demo"},
		{"tags", "audit", "--demo"},
		{"prices", "--gpu", "H100"},
		{"fit", "--model", "llama-3.1-70b"},
		{"inventory", "--demo"},
		{"sharing", "plan", "--demo"},
		{"iam-policy", "aws"},
		{"billing", "summary", "--billing", "../../../testdata/billing/focus-1.0-sample.csv"},
		{"diff", "../../reportdiff/testdata/old.json", "../../reportdiff/testdata/new.json"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			out, _ := runOffline(t, args, true, 80)
			if !strings.Contains(out, "  ") {
				t.Fatalf("no table in:\n%s", out)
			}
			testutil.AssertFits(t, out, 80)
			testutil.AssertNotCut(t, out)
		})
	}
}

// runOffline runs args on the embedded catalog and the demo fleet with
// stdout and stderr a terminal (tty) of width columns, or pipes, and
// returns what each got; a non-zero exit fails the test.
func runOffline(t *testing.T, args []string, tty bool, width int) (stdout, stderr string) {
	t.Helper()
	ios, _, out, errOut := iostreams.Test()
	ios.SetStdoutTTY(tty)
	ios.SetStderrTTY(tty)
	ios.SetTerminalWidth(width)
	f := &cmdutil.Factory{
		IOStreams: ios,
		Now:       testutil.Now,
		Config: func() (*config.Config, error) {
			return &config.Config{Policy: recommend.DefaultPolicy().WithPurchases(purchasetest.Purchases())}, nil
		},
		Catalog: catalog.Embedded,
		Fleet:   factory.FileFleet(ios),
	}
	if code := Run(context.Background(), f, args); code != 0 {
		t.Fatalf("%v: exit %d: %s", args, code, errOut)
	}
	return out.String(), errOut.String()
}
