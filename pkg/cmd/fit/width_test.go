package fit

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/gpufinops/gpufinops/pkg/iostreams"
	"github.com/gpufinops/gpufinops/pkg/llm"
	"github.com/gpufinops/gpufinops/pkg/testutil"
	"github.com/gpufinops/gpufinops/pricing/catalog"
)

// On a terminal the plan and the model list fit 80 and 200 columns.
func TestFitTableWidths(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts FitOptions
	}{
		{"llama-3.1-70b", FitOptions{Model: "llama-3.1-70b", AllRegions: true}},
		{"list-models", FitOptions{ListModels: true}},
	} {
		for _, w := range testutil.TableWidths {
			t.Run(fmt.Sprint(tc.name, w), func(t *testing.T) {
				ios, _, out, _ := iostreams.Test()
				ios.SetStdoutTTY(true)
				ios.SetTerminalWidth(w)
				ios.SetStderrTTY(true)
				opts := tc.opts
				opts.IO, opts.Catalog, opts.Output = ios, catalog.Embedded, "table"
				opts.Precision, opts.Context, opts.Batch = llm.FP16, 4096, 1
				if err := fitRun(&opts); err != nil {
					t.Fatal(err)
				}
				testutil.AssertGolden(t, fmt.Sprintf("testdata/%s-tty-%d.golden", tc.name, w), out.Bytes())
				testutil.AssertFits(t, out.String(), w)
				testutil.AssertNotCut(t, out.String())
				testutil.AssertFits(t, ios.ErrOut.(*bytes.Buffer).String(), w)
			})
		}
	}
}
