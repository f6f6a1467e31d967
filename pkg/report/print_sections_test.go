package report

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestBucketRows(t *testing.T) {
	b := func(key string, cur string) CostBucket {
		return CostBucket{Key: key, Instances: 1, CurrentMonthlyCost: NewMoney(dec(cur)), OptimizedMonthlyCost: NewMoney(dec(cur)), SharePercent: 1}
	}
	keys := func(rows []bucketRow) string {
		var ks []string
		for _, r := range rows {
			ks = append(ks, r.key)
		}
		return strings.Join(ks, ",")
	}
	six := []CostBucket{b("a", "60"), b("b", "50"), b("c", "40"), b("d", "30"), b("e", "20"), b("f", "10"), b(Untagged, "90")}
	if got := keys(bucketRows(six, NewMoney(dec("300")))); got != "a,b,c,d,e,f,(untagged)" {
		t.Errorf("six tagged: %s", got)
	}
	seven := append(six[:6:6], b("g", "5"), b(Untagged, "85"))
	rows := bucketRows(seven, NewMoney(dec("300")))
	if got := keys(rows); got != "a,b,c,d,e,2 others,(untagged)" {
		t.Errorf("seven tagged: %s", got)
	}
	rest := rows[5]
	if rest.instances != 2 || rest.current.String() != "15.00" || rest.optimized.String() != "15.00" || rest.share != "5.0 %" {
		t.Errorf("rest row %+v", rest)
	}
	if got := bucketRows(seven, Money{})[5].share; got != "0.0 %" {
		t.Errorf("share of nothing: %s", got)
	}
}

func TestTagsLine(t *testing.T) {
	for _, tc := range []struct {
		audit *TagAudit
		tty   bool
		want  string
		more  bool
	}{
		{nil, true, "", false},
		{&TagAudit{}, true, "", false},
		{&TagAudit{InstanceCount: 3, CompliantCount: 3, CompliancePercentBySpend: 100}, true, "All 3 instances carry every required tag.", false},
		{&TagAudit{InstanceCount: 1, CompliantCount: 1, CompliancePercentBySpend: 100}, true, "The instance carries every required tag.", false},
		{&TagAudit{InstanceCount: 4, CompliantCount: 3, UntaggedMonthlyCost: NewMoney(dec("1234.5")), CompliancePercentBySpend: 87.3},
			true, "$1,234.50/month (12.7 %) carries incomplete tags on 1 instance", true},
		{&TagAudit{InstanceCount: 4, CompliantCount: 0, UntaggedMonthlyCost: NewMoney(dec("1234.5")), CompliancePercentBySpend: 0},
			false, "1234.50 USD/month (100.0 %) carries incomplete tags on 4 instances", true},
	} {
		got, more := tagsLine(tc.audit, tc.tty)
		if got != tc.want || more != tc.more {
			t.Errorf("tagsLine(%+v) = %q, %v; want %q, %v", tc.audit, got, more, tc.want, tc.more)
		}
	}
}

// Long team and run names are cut to fit a terminal in the table format, and
// kept whole in wide.
func TestWriteSectionsFitWidth(t *testing.T) {
	r := testReport()
	long := strings.Repeat("platform-engineering-", 5) + "team"
	r.Allocation.ByTeam[0].Key = long
	r.AIMetrics.TrainingRuns[1].ID = strings.Repeat("pretrain-", 10) + "7"
	for _, width := range []int{80, 100} {
		out := write(t, r, "table", PrintOptions{TTY: true, Width: width, ByStrategy: true})
		start := strings.Index(out, "Cost by team")
		for _, line := range strings.Split(out[start:strings.Index(out, "Tags")], "\n") {
			if n := utf8.RuneCountInString(line); n > width {
				t.Errorf("width %d: line of %d columns: %q", width, n, line)
			}
		}
	}
	if out := write(t, r, "wide", PrintOptions{TTY: true, Width: 80, ByStrategy: true}); !strings.Contains(out, long) || !strings.Contains(out, r.AIMetrics.TrainingRuns[1].ID) {
		t.Error("wide cuts names")
	}
}

// A kind that saves nothing says so instead of "saving $0.00".
func TestSectionHeadingNoSaving(t *testing.T) {
	for _, f := range []string{"table", "markdown"} {
		out := write(t, testReport(), f, PrintOptions{TTY: true, ByStrategy: true})
		if !strings.Contains(out, "tagging: 1 recommendation, no direct saving") || strings.Contains(out, "saving $0.00") {
			t.Errorf("%s: tagging heading:\n%s", f, out)
		}
	}
}
