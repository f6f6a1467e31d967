package catalog

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpufinops/gpufinops/pkg/cmdutil"
	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pricing"
)

// TestDiffEmbeddedToOverlay: a bare 'catalog diff' says what the updates
// changed against the embedded catalog: a price moved past the threshold, a
// new offer of a known type, a new type; a price within it is no move.
func TestDiffEmbeddedToOverlay(t *testing.T) {
	e := newEnv(t)
	code, out, errOut := e.run(t, "diff")
	if code != 0 || !strings.HasPrefix(out, "0 types added, 0 removed; 0 offers added, 0 removed; 0 prices moved") {
		t.Fatalf("no overlay yet: exit %d\n%s%s", code, out, errOut)
	}
	e.prices = []pricing.Price{
		livePrice(fleet.AWS, "us-east-1", "g5.xlarge", pricing.OnDemand, "1.05"),    // +4.4 %: no move
		livePrice(fleet.AWS, "us-east-1", "p5.48xlarge", pricing.OnDemand, "98.32"), // +78.6 %
		livePrice(fleet.AWS, "us-east-1", "g5.xlarge", pricing.Spot, "0.2"),         // −50 %
	}
	if code, _, errOut := e.run(t, "update", "--provider", "aws", "--region", "us-east-1"); code != 0 {
		t.Fatal(errOut)
	}
	code, out, errOut = e.run(t, "diff", "-o", "json")
	if code != 0 {
		t.Fatal(errOut)
	}
	var doc DiffDocument
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Kind != DiffKind || doc.Old != SideEmbedded || doc.New != SideOverlay || doc.MoveThresholdPercent != 10 {
		t.Errorf("header %+v", doc)
	}
	var moved []string
	for _, m := range doc.Moved {
		moved = append(moved, m.InstanceType+" "+string(m.Option))
	}
	if strings.Join(moved, ",") != "g5.xlarge spot,p5.48xlarge on-demand" {
		t.Errorf("moved %v, want the spot halving and the p5 rise, not the 4 %% move", moved)
	}
	if len(doc.AddedTypes)+len(doc.RemovedTypes)+len(doc.AddedOffers)+len(doc.RemovedOffers) != 0 {
		t.Errorf("an update of known offers adds or removes %+v", doc.Changes)
	}
	code, out, _ = e.run(t, "diff", "overlay", "embedded", "-o", "markdown")
	if code != 0 || !strings.Contains(out, "| aws | us-east-1 | p5.48xlarge | on-demand | 98.32 | 55.04 |") {
		t.Errorf("the reverse diff in markdown:\n%s", out)
	}
}

// TestDiffFilesAndBadArguments: two files compare against each other (each
// laid over the embedded catalog); a name that is neither side nor file,
// or a corrupt file, is bad input naming it.
func TestDiffFilesAndBadArguments(t *testing.T) {
	e := newEnv(t)
	dir := t.TempDir()
	write := func(name string, ps ...pricing.Price) string {
		e.prices = ps
		path := filepath.Join(dir, name)
		if code, _, errOut := e.run(t, "update", "--provider", "aws", "--region", "eu-west-1", "--type", "g5.xlarge,g6.xlarge", "--file", path, "--replace"); code != 0 && code != cmdutil.ExitPartial {
			t.Fatal(errOut)
		}
		return path
	}
	old := write("old.json", livePrice(fleet.AWS, "eu-west-1", "g5.xlarge", pricing.OnDemand, "1.123"))
	new := write("new.json", livePrice(fleet.AWS, "eu-west-1", "g5.xlarge", pricing.OnDemand, "1.5"))
	code, out, errOut := e.run(t, "diff", old, new)
	if code != 0 || !strings.Contains(out, "~ price aws eu-west-1 g5.xlarge on-demand: 1.123 -> 1.5") {
		t.Errorf("file to file: exit %d\n%s%s", code, out, errOut)
	}
	if code, _, errOut := e.run(t, "diff", "embeded"); code != cmdutil.ExitUsage || !strings.Contains(errOut, `OLD "embeded"`) {
		t.Errorf("a misspelt side: exit %d, %s", code, errOut)
	}
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := e.run(t, "diff", "embedded", bad); code != cmdutil.ExitUsage || !strings.Contains(errOut, "bad.json") {
		t.Errorf("a corrupt file: exit %d, %s", code, errOut)
	}
}
