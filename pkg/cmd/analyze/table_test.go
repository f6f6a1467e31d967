package analyze

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/gpufinops/gpufinops/pkg/cmdutil/cmdtest"
	"github.com/gpufinops/gpufinops/pkg/testutil"
)

// On a terminal the demo's table fits 80 and 200 columns, and at 80 every
// spot and commitment recommendation still shows the price or amount to act
// on.
func TestAnalyzeTableWidths(t *testing.T) {
	for _, w := range testutil.TableWidths {
		t.Run(fmt.Sprint(w), func(t *testing.T) {
			opts, out := demoOptions(t, "table", true)
			opts.IO.SetTerminalWidth(w)
			if err := analyzeRun(opts); err != nil {
				t.Fatal(err)
			}
			testutil.AssertGolden(t, fmt.Sprintf("testdata/demo-table-tty-%d.txt", w), out.Bytes())
			testutil.AssertFits(t, out.String(), w)
			spot, commit := actionCells(out.String(), "spot"), actionCells(out.String(), "commitment")
			if len(spot) == 0 || len(commit) == 0 {
				t.Fatalf("no spot or commitment section:\n%s", out)
			}
			price := regexp.MustCompile(`\$[0-9]+\.[0-9]+/h`)
			for _, l := range append(spot, commit...) {
				if !price.MatchString(l) {
					t.Errorf("no price on %q", l)
				}
			}
		})
	}
}

// actionCells are the rows of one section of the table.
func actionCells(out, kind string) []string {
	var rows []string
	in := false
	for _, l := range strings.Split(out, "\n") {
		switch {
		case strings.HasPrefix(l, kind+":"):
			in = true
		case l == "":
			in = false
		case in && !strings.HasPrefix(l, "RESOURCE"):
			rows = append(rows, l)
		}
	}
	return rows
}

func TestAnalyzeMarkdownSummary(t *testing.T) {
	opts, out := demoOptions(t, "markdown", false)
	opts.Markdown = MarkdownFlags{Summary: true, FullReport: "gpufinops-report.html", Top: 5}
	if err := analyzeRun(opts); err != nil {
		t.Fatal(err)
	}
	testutil.AssertGolden(t, "testdata/demo-markdown-summary.md", out.Bytes())
}

func TestMarkdownFlags(t *testing.T) {
	for _, tc := range []struct {
		args    string
		want    MarkdownFlags
		wantErr string
	}{
		{args: "--demo -o markdown", want: MarkdownFlags{Top: 10}},
		{args: "--demo -o markdown --markdown-summary --full-report https://ci/run/1 --markdown-top 3", want: MarkdownFlags{Summary: true, FullReport: "https://ci/run/1", Top: 3}},
		{args: "--demo --markdown-summary", wantErr: "--markdown-summary shapes the markdown report: add -o markdown"},
		{args: "--demo -o json --full-report x", wantErr: "--full-report shapes the markdown report: add -o markdown"},
		{args: "--demo -o markdown --markdown-top 0", wantErr: "--markdown-top: 0 is not a positive number of recommendations"},
	} {
		t.Run(tc.args, func(t *testing.T) {
			got, err := cmdtest.Parse(t, NewCmdAnalyze, strings.Fields(tc.args))
			if cmdtest.CheckErr(t, err, tc.wantErr) {
				return
			}
			if got.Markdown != tc.want {
				t.Errorf("got %+v want %+v", got.Markdown, tc.want)
			}
		})
	}
}
