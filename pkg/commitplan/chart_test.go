package commitplan

import (
	"strings"
	"testing"

	"github.com/gpufinops/gpufinops/pkg/testutil"
)

// chartPlan is the hand-computed plan of TestBuildHandComputed.
func chartPlan(t *testing.T) GroupPlan {
	t.Helper()
	p := mustBuild(t, []Item{
		item("base", "4", 730),
		item("day", "2", 365, withSchedule("", everyDay, "00:00", "12:00")),
	}, awsTerms)
	return p.Groups[0]
}

func TestChartGolden(t *testing.T) {
	g := chartPlan(t)
	var b strings.Builder
	for _, tp := range g.Terms {
		b.WriteString(Chart(tp, 48, 10))
		b.WriteString("\n")
		b.WriteString(DurationChart(g, tp, 48, 8))
		b.WriteString("\n")
	}
	// Degenerate sizes are clamped, empty curves say so.
	b.WriteString(Chart(g.Terms[0], 1, 1))
	b.WriteString(Chart(TermPlan{}, 40, 8))
	b.WriteString(DurationChart(GroupPlan{}, TermPlan{}, 40, 8))
	testutil.AssertGolden(t, "testdata/charts.txt", []byte(b.String()))
	if Chart(g.Terms[1], 48, 10) != Chart(g.Terms[1], 48, 10) {
		t.Error("chart is not deterministic")
	}
}
