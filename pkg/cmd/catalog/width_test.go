package catalog

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pkg/iostreams"
	"github.com/gpufinops/gpufinops/pkg/testutil"
	"github.com/gpufinops/gpufinops/pricing"
	"github.com/gpufinops/gpufinops/pricing/cache"
	"github.com/gpufinops/gpufinops/pricing/catalog"
)

// On a terminal the status table of the embedded catalog and an overlay
// with new types fits 80 and 200 columns.
func TestStatusTableWidths(t *testing.T) {
	base, err := catalog.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	r := cache.Region{Provider: fleet.AWS, Region: "us-east-1"}
	ov, _ := (*cache.Overlay)(nil).Merge(map[cache.Region]cache.Fetch{r: {Provider: fleet.AWS, Region: "us-east-1", FetchedAt: now}},
		map[cache.Region][]string{r: {"g5.xlarge", "g8e.2xlarge", "g8e.4xlarge"}},
		[]pricing.Price{
			livePrice(fleet.AWS, "us-east-1", "g5.xlarge", pricing.OnDemand, "1.1"),
			livePrice(fleet.AWS, "us-east-1", "g8e.2xlarge", pricing.OnDemand, "3.3"),
			livePrice(fleet.AWS, "us-east-1", "g8e.4xlarge", pricing.OnDemand, "4.4"),
		}, now)
	for _, w := range testutil.TableWidths {
		t.Run(fmt.Sprint(w), func(t *testing.T) {
			ios, _, out, _ := iostreams.Test()
			ios.SetStdoutTTY(true)
			ios.SetStderrTTY(true)
			ios.SetTerminalWidth(w)
			doc := Status(base, ov, "/home/me/.cache/gpufinops/catalog/overlay.json", now, "")
			if err := writeStatusTable(ios, ios.Out, doc); err != nil {
				t.Fatal(err)
			}
			testutil.AssertGolden(t, fmt.Sprintf("testdata/status-tty-%d.golden", w), out.Bytes())
			testutil.AssertFits(t, out.String(), w)
			testutil.AssertNotCut(t, out.String())
			testutil.AssertFits(t, ios.ErrOut.(*bytes.Buffer).String(), w)
		})
	}
}
