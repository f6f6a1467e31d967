package analyze

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/gpufinops/gpufinops/pkg/cmdutil/cmdtest"
	"github.com/gpufinops/gpufinops/pkg/testutil"
)

// On a terminal of 40 lines the demo's ranked view fits 80, 120 and 200
// columns with the headline, the top actions and the total on the first
// screen, ranked by saving; and no action is cut: read back from the
// terminal table, wrapped lines joined, every action is the pipe's, whole.
func TestAnalyzeTableWidths(t *testing.T) {
	pipeOpts, pipe := demoOptions(t, "table", false)
	pipeOpts.View.All = true
	if err := analyzeRun(pipeOpts); err != nil {
		t.Fatal(err)
	}
	whole := pipeActions(t, pipe.String())
	// Every one of the demo's 27 items has an action.
	if len(whole) != 27 {
		t.Fatalf("%d machines in the pipe's table, want the demo's 27:\n%s", len(whole), pipe)
	}
	for _, w := range []int{80, 120, 200} {
		t.Run(fmt.Sprint(w), func(t *testing.T) {
			opts, out := demoOptions(t, "table", true)
			opts.IO.SetTerminalWidth(w)
			opts.IO.SetTerminalHeight(40)
			if err := analyzeRun(opts); err != nil {
				t.Fatal(err)
			}
			testutil.AssertGolden(t, fmt.Sprintf("testdata/demo-table-tty-%d.txt", w), out.Bytes())
			testutil.AssertFits(t, out.String(), w)
			screen := strings.Split(out.String(), "\n")
			screen = screen[:min(40, len(screen))]
			first := strings.Join(screen, "\n")
			for _, want := range []string{"Current $135,939.22/mo → optimized $16,944.25/mo", "\nTotal: 47 recommendations on 27 machines", "\nRESOURCE "} {
				if !strings.Contains(first, want) {
					t.Errorf("%q is not on the first screen:\n%s", want, first)
				}
			}
			resources, actions := testutil.TableCells(first, "RESOURCE"), testutil.TableCells(first, "ACTION")
			if len(resources) < 10 || len(resources) != len(actions) {
				t.Fatalf("%d resources and %d actions on the first screen:\n%s", len(resources), len(actions), first)
			}
			if resources[0] != "nd-h100-eval" {
				t.Errorf("first machine %q, want the largest saving, nd-h100-eval", resources[0])
			}
			for i, res := range resources {
				if got, want := actions[i], whole[wholeName(t, whole, res)]; got != want {
					t.Errorf("%s: action %q, want %q whole", res, got, want)
				}
			}
		})
	}
}

// pipeActions reads the action of every machine from the pipe's table.
// wholeName is the pipe's name for a terminal table's resource cell, which
// elides the middle of a long name ("sagemak…/AllTraffic ×2").
func wholeName(t *testing.T, whole map[string]string, cell string) string {
	t.Helper()
	head, tail, cut := strings.Cut(cell, "…")
	if !cut {
		return cell
	}
	var found []string
	for name := range whole {
		if len(name) >= len(head)+len(tail) && strings.HasPrefix(name, head) && strings.HasSuffix(name, tail) {
			found = append(found, name)
		}
	}
	if len(found) != 1 {
		t.Errorf("elided cell %q matches %v in the pipe's table, want one name", cell, found)
		return cell
	}
	return found[0]
}

func pipeActions(t *testing.T, out string) map[string]string {
	t.Helper()
	actions := map[string]string{}
	var col = -1
	for _, l := range strings.Split(out, "\n") {
		cells := strings.Split(l, "\t")
		switch {
		case col < 0 && len(cells) > 1 && cells[0] == "resource":
			col = slices.Index(cells, "action")
		case col >= 0 && len(cells) > col:
			actions[cells[0]] = cells[col]
		case col >= 0:
			return actions
		}
	}
	return actions
}

// The sections by strategy stay, with --by strategy.
func TestAnalyzeByStrategy(t *testing.T) {
	opts, out := demoOptions(t, "table", true)
	opts.IO.SetTerminalWidth(80)
	opts.View.ByStrategy = true
	if err := analyzeRun(opts); err != nil {
		t.Fatal(err)
	}
	testutil.AssertGolden(t, "testdata/demo-by-strategy-tty-80.txt", out.Bytes())
	testutil.AssertFits(t, out.String(), 80)
	for _, kind := range []string{"idle-stop", "schedule", "rightsize", "quantize", "share", "spot", "commitment", "tagging"} {
		if !strings.Contains(out.String(), "\n"+kind+": ") {
			t.Errorf("no %s section", kind)
		}
	}
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

func TestViewFlags(t *testing.T) {
	for _, tc := range []struct {
		args    string
		want    ViewFlags
		wantErr string
	}{
		{args: "--demo", want: ViewFlags{}},
		{args: "--demo --by machine --limit 5", want: ViewFlags{Limit: 5}},
		{args: "--demo -o wide --all", want: ViewFlags{All: true}},
		{args: "--demo --by strategy", want: ViewFlags{ByStrategy: true}},
		{args: "--demo --by kind", wantErr: `--by: "kind" is not machine or strategy`},
		{args: "--demo --limit 0", wantErr: "--limit: 0 is not a positive number of machines"},
		{args: "--demo --limit -3", wantErr: "--limit: -3 is not a positive number of machines"},
		{args: "--demo --limit 5 --all", wantErr: "--limit and --all disagree: give one"},
		{args: "--demo --by strategy --all", wantErr: "--limit and --all rank machines; --by strategy lists every recommendation"},
		{args: "--demo -o json --limit 5", wantErr: "--limit shapes the table: use -o table or -o wide"},
		{args: "--demo -o markdown --by strategy", wantErr: "--by shapes the table: use -o table or -o wide"},
	} {
		t.Run(tc.args, func(t *testing.T) {
			got, err := cmdtest.Parse(t, NewCmdAnalyze, strings.Fields(tc.args))
			if cmdtest.CheckErr(t, err, tc.wantErr) {
				return
			}
			if got.View != tc.want {
				t.Errorf("got %+v want %+v", got.View, tc.want)
			}
		})
	}
}
