package version

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gpufinops/gpufinops/pkg/iostreams"
	"github.com/gpufinops/gpufinops/pkg/testutil"
	"github.com/gpufinops/gpufinops/pricing/catalog"
)

// On a terminal the catalog table fits 80 and 200 columns and names every
// data set with its date; in a pipe it is tab-separated and whole.
func TestVersionWidths(t *testing.T) {
	cat, err := catalog.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range testutil.TableWidths {
		t.Run(fmt.Sprint(w), func(t *testing.T) {
			ios, _, out, _ := iostreams.Test()
			ios.SetStdoutTTY(true)
			ios.SetTerminalWidth(w)
			if err := versionRun(&VersionOptions{IO: ios, Catalog: catalog.Embedded}); err != nil {
				t.Fatal(err)
			}
			testutil.AssertFits(t, out.String(), w)
			for _, s := range cat.Sources() {
				if !strings.Contains(out.String(), s.AsOf) {
					t.Errorf("%s's date %s is missing:\n%s", s.Name, s.AsOf, out)
				}
			}
		})
	}
	ios, _, out, _ := iostreams.Test()
	if err := versionRun(&VersionOptions{IO: ios, Catalog: catalog.Embedded}); err != nil {
		t.Fatal(err)
	}
	for _, s := range cat.Sources() {
		if !strings.Contains(out.String(), s.Name+"\t"+s.AsOf+"\t"+s.Origin+"\n") {
			t.Errorf("the pipe output lacks %s whole:\n%s", s.Name, out)
		}
	}
}
