package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/iostreams"
	"github.com/gpufinops/gpufinops/pkg/recommend"
	"github.com/gpufinops/gpufinops/pkg/tableprinter"
	"github.com/gpufinops/gpufinops/pkg/testutil"
)

func write(t *testing.T, r *Report, format string, opts PrintOptions) string {
	t.Helper()
	var b bytes.Buffer
	if err := Write(&b, r, format, opts); err != nil {
		t.Fatalf("Write(%s): %v", format, err)
	}
	return b.String()
}

func TestWriteGolden(t *testing.T) {
	r := testReport()
	if err := r.Verify(); err != nil {
		t.Fatalf("fixture does not add up: %v", err)
	}
	for _, tc := range []struct {
		golden string
		format string
		opts   PrintOptions
	}{
		{"table_tty.golden", "table", PrintOptions{TTY: true, Width: 120, ByStrategy: true}},
		{"table_tty_100.golden", "table", PrintOptions{TTY: true, Width: 100, ByStrategy: true}},
		{"table_tty_80.golden", "table", PrintOptions{TTY: true, Width: 80, ByStrategy: true}},
		{"table_tty_200.golden", "table", PrintOptions{TTY: true, Width: 200, ByStrategy: true}},
		{"table_pipe.golden", "table", PrintOptions{ByStrategy: true}},
		{"wide_tty.golden", "wide", PrintOptions{TTY: true, Width: 120, ByStrategy: true}},
		{"wide_pipe.golden", "wide", PrintOptions{ByStrategy: true}},
		{"actions_tty_80.golden", "table", PrintOptions{TTY: true, Width: 80}},
		{"actions_tty_120.golden", "table", PrintOptions{TTY: true, Width: 120}},
		{"actions_tty_200.golden", "table", PrintOptions{TTY: true, Width: 200}},
		{"actions_pipe.golden", "table", PrintOptions{}},
		{"actions_limit_pipe.golden", "table", PrintOptions{Limit: 2}},
		{"actions_wide_tty_80.golden", "wide", PrintOptions{TTY: true, Width: 80}},
		{"actions_wide_tty_200.golden", "wide", PrintOptions{TTY: true, Width: 200}},
		{"actions_wide_pipe.golden", "wide", PrintOptions{}},
		{"report.json", "json", PrintOptions{}},
		{"report.csv", "csv", PrintOptions{}},
		{"report.md", "markdown", PrintOptions{}},
	} {
		t.Run(tc.golden, func(t *testing.T) {
			testutil.AssertGolden(t, "testdata/"+tc.golden, []byte(write(t, r, tc.format, tc.opts)))
		})
	}
}

func TestWriteEmptyPlan(t *testing.T) {
	plan := recommend.Plan{Policy: recommend.DefaultPolicy()}
	r := New(plan, Meta{GeneratedAt: testutil.FixedNow, ToolVersion: "1.2.3", FleetName: "empty", FleetSource: SourceDemo})
	if err := r.Verify(); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"table", "markdown"} {
		if out := write(t, r, f, PrintOptions{TTY: true}); !strings.Contains(out, "No savings found.") {
			t.Errorf("%s: no 'No savings found.' in\n%s", f, out)
		}
	}
	out := write(t, r, "json", PrintOptions{})
	for _, want := range []string{`"recommendations": []`, `"instances": []`, `"warnings": []`, `"idle-stop": 0.00`} {
		if !strings.Contains(out, want) {
			t.Errorf("json lacks %s:\n%s", want, out)
		}
	}
}

var ansi = regexp.MustCompile("\x1b\\[[0-9;]*m")

// Colour changes no character and no alignment: stripped of its escapes the
// output is the colourless one.
func TestWriteTableColor(t *testing.T) {
	r := testReport()
	ios, _, _, _ := iostreams.Test()
	ios.SetColorEnabled(true)
	for _, tc := range []struct {
		format     string
		byStrategy bool
		want       []string
	}{
		{"table", true, []string{"\x1b[32m$6,418.30\x1b[0m", "\x1b[31mhigh\x1b[0m", "\x1b[33m! i-0ffff0000aaaa0002"}},
		{"wide", true, []string{"\x1b[32m$6,418.30\x1b[0m", "\x1b[31mhigh\x1b[0m", "\x1b[33m! i-0ffff0000aaaa0002"}},
		{"table", false, []string{"\x1b[32m$18,702.45\x1b[0m", "\x1b[31mhigh\x1b[0m", "\x1b[33m! i-0ffff0000aaaa0002"}},
		// The records of a terminal too narrow for the wide table.
		{"wide", false, []string{"\x1b[32m$18,702.45/mo\x1b[0m", "\x1b[33m! i-0ffff0000aaaa0002"}},
	} {
		format := tc.format
		plain := write(t, r, format, PrintOptions{TTY: true, Width: 120, ByStrategy: tc.byStrategy})
		colored := write(t, r, format, PrintOptions{TTY: true, Width: 120, Color: ios.ColorScheme(), ByStrategy: tc.byStrategy})
		if plain == colored {
			t.Fatalf("%s: colour scheme not applied", format)
		}
		for _, want := range tc.want {
			if !strings.Contains(colored, want) {
				t.Errorf("%s: missing %q", format, want)
			}
		}
		if got := ansi.ReplaceAllString(colored, ""); got != plain {
			t.Errorf("%s: stripped of colour the output differs:\n%s", format, cmp.Diff(plain, got))
		}
		// Colour is for terminals only.
		if pipe := write(t, r, format, PrintOptions{Color: ios.ColorScheme()}); ansi.MatchString(pipe) {
			t.Errorf("%s: colour in a pipe", format)
		}
	}
}

func TestWriteTableFitsWidth(t *testing.T) {
	r := testReport()
	for _, width := range []int{100, 120} {
		out := write(t, r, "table", PrintOptions{TTY: true, Width: width})
		for _, line := range strings.Split(out, "\n") {
			if strings.HasPrefix(line, "! ") || strings.HasPrefix(line, "Amounts are") {
				continue // free text, one line each
			}
			if n := utf8.RuneCountInString(line); n > width {
				t.Errorf("width %d: line of %d columns: %q", width, n, line)
			}
		}
	}
}

// A terminal wide enough for the sentences gets them whole; a narrow one gets
// the targets.
// The table shows the short action, else (reports before 1.5) the target,
// else the sentence; wide shows the sentence.
func TestWriteTableShortAction(t *testing.T) {
	r := testReport()
	for _, w := range []int{80, 200} {
		out := write(t, r, "table", PrintOptions{TTY: true, Width: w, ByStrategy: true})
		for _, want := range []string{"schedule Mon–Fri 07–19", "spot $1.234/h, ckpt 20 min", "1y CUD $0.445/h", "Stop the instance", "→ g2-standard-8"} {
			if !strings.Contains(out, want) {
				t.Errorf("width %d: no %q in\n%s", w, want, out)
			}
		}
		for _, l := range strings.Split(out, "\n") {
			if n := tableprinter.Width(l); n > w {
				t.Errorf("width %d: line of %d: %q", w, n, l)
			}
		}
	}
	if out := write(t, r, "wide", PrintOptions{TTY: true, Width: 80, ByStrategy: true}); !strings.Contains(out, "Run on a schedule → Mon–Fri 07:00–19:00 UTC") {
		t.Errorf("wide: no whole action:\n%s", out)
	}
}

// Every section's columns line up with every other's.
func TestWriteTableSectionsAligned(t *testing.T) {
	out := write(t, testReport(), "table", PrintOptions{TTY: true, Width: 120, ByStrategy: true})
	var starts []int
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "RESOURCE") {
			starts = append(starts, strings.Index(line, "SAVINGS"))
		}
	}
	if len(starts) != len(recommend.Kinds) {
		t.Fatalf("want %d sections, got %d:\n%s", len(recommend.Kinds), len(starts), out)
	}
	for _, s := range starts[1:] {
		if s != starts[0] {
			t.Errorf("SAVINGS columns at %v", starts)
		}
	}
	// The cost tables line up with each other too.
	var ends []int
	for _, line := range strings.Split(out, "\n") {
		for _, h := range []string{"TEAM ", "PROJECT ", "WORKLOAD TYPE "} {
			if strings.HasPrefix(line, h) {
				ends = append(ends, strings.Index(line, "CURRENT"))
			}
		}
	}
	if len(ends) != 3 || ends[1] != ends[0] || ends[2] != ends[0] {
		t.Errorf("CURRENT columns of the cost tables at %v", ends)
	}
}

func TestWriteUnknownFormat(t *testing.T) {
	err := Write(&bytes.Buffer{}, testReport(), "yaml", PrintOptions{})
	if err == nil || err.Error() != `unknown output format "yaml": use one of table, wide, json, csv, markdown, html` {
		t.Errorf("got %v", err)
	}
}

func TestWriteCSVParses(t *testing.T) {
	rows, err := csv.NewReader(strings.NewReader(write(t, testReport(), "csv", PrintOptions{}))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 10 || !cmp.Equal(rows[0], CSVHeader) {
		t.Fatalf("got %d rows, header %v", len(rows), rows[0])
	}
	if got := rows[4][14]; got != `GPU p95 18 % | memory p95 14 %; "a T4 holds the model", with 20 % headroom.` {
		t.Errorf("rationale round trip: %q", got)
	}
	if got := rows[2][11]; got != "6418.30" {
		t.Errorf("monthlySavings = %q, want 6418.30", got)
	}
}

func TestMarkdownEscapes(t *testing.T) {
	out := write(t, testReport(), "markdown", PrintOptions{})
	// Unescaped pipes delimit cells: every row of a table has as many as its
	// header.
	delimiter := regexp.MustCompile(`(^|[^\\])\|`)
	header := 0
	for _, line := range strings.Split(out, "\n") {
		if !strings.HasPrefix(line, "|") {
			header = 0
			continue
		}
		cells := len(delimiter.FindAllString(line, -1))
		if header == 0 {
			header = cells
		} else if cells != header {
			t.Errorf("row with %d delimiters in a table of %d: %s", cells, header, line)
		}
	}
	if !strings.Contains(out, `GPU p95 18 % \| memory p95 14 %`) {
		t.Error("pipe in rationale not escaped")
	}
}

func TestNewKeepsPlanOrder(t *testing.T) {
	r := testReport()
	plan := testPlan()
	for i, rec := range r.Recommendations {
		if rec.ID != plan.Recommendations[i].ID {
			t.Errorf("recommendation %d is %s, want %s", i, rec.ID, plan.Recommendations[i].ID)
		}
	}
	if got := r.Instances[3]; got.Priced || got.CurrentMonthlyCost != nil || got.HourlyPrice != nil {
		t.Errorf("unpriced instance has costs: %+v", got)
	}
}

func TestVerify(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mutate func(*Report)
		want   string
	}{
		{"current", func(r *Report) { r.Summary.CurrentMonthlyCost = NewMoney(dec("31184.88")) },
			"summary.currentMonthlyCost is 31184.88, want 31184.87"},
		{"savings", func(r *Report) { r.Recommendations[0].MonthlySavings = NewMoney(dec("12284.16")) },
			"summary.monthlySavings is 27570.61, want 27570.62"},
		{"optimized", func(r *Report) { r.Summary.OptimizedMonthlyCost = NewMoney(dec("3614.00")) },
			"summary.optimizedMonthlyCost is 3614.00, want 3614.26"},
		{"by kind", func(r *Report) { r.Summary.SavingsByKind["spot"] = NewMoney(dec("6000")) },
			"summary.savingsByKind.spot is 6000.00, want 6418.30"},
		{"projected", func(r *Report) { r.Recommendations[2].ProjectedMonthlyCost = NewMoney(dec("1")) },
			"recommendation idle-stop-i-0a1b2c3d4e5f60001 projectedMonthlyCost is 1.00, want 0.00"},
		{"instance savings", func(r *Report) { m := NewMoney(dec("18000")); r.Instances[1].MonthlySavings = &m },
			"instance gpu-train-01 monthlySavings is 18000.00, want 18702.45"},
		{"unpriced count", func(r *Report) { r.Summary.UnpricedCount = 0 },
			"summary.unpricedCount is 0, want 1"},
		{"percent", func(r *Report) { r.Summary.SavingsPercent = NewNumber(dec("80")) },
			"summary.savingsPercent is 80, want 88.4"},
		{"after", func(r *Report) { r.Recommendations[1].After = "nope" },
			"recommendation spot-gpu-train-01 is priced after nope, which is not in the report"},
		{"allocation total", func(r *Report) { r.Allocation.CurrentMonthlyCost = NewMoney(dec("31000")) },
			"allocation.currentMonthlyCost is 31000.00, but summary.currentMonthlyCost is 31184.87"},
		{"allocation bucket", func(r *Report) { r.Allocation.ByProject[1].CurrentMonthlyCost = NewMoney(dec("4140.65")) },
			"allocation.byProject adds up to a current cost of 31184.96, want 31184.87"},
		{"allocation optimized", func(r *Report) { r.Allocation.ByTeam[0].OptimizedMonthlyCost = NewMoney(dec("2750.00")) },
			"allocation.byTeam adds up to an optimized cost of 3613.54, want 3614.26"},
		{"allocation count", func(r *Report) { r.Allocation.ByProvider[2].Instances = 2 },
			"allocation.byProvider counts 6 instances, want 7 (summary.instanceCount)"},
		{"sharing freed", func(r *Report) { r.Sharing.FreedMonthlyCost = NewMoney(dec("114.41")) },
			"sharing.freedMonthlyCost is 114.41, but the share recommendations save 114.14"},
		{"sharing group", func(r *Report) { r.Sharing.Groups[0].FreedMonthlyCost = NewMoney(dec("0")) },
			"sharing.freedMonthlyCost is 114.14, but its groups free 0.00"},
		{"sharing frees another", func(r *Report) { r.Sharing.Groups[0].Freed = []string{"nb-t4-1"} },
			"share recommendation share-nb-t4-2: no sharing group frees nb-t4-2; sharing frees nb-t4-1, but no share recommendation stops it"},
		{"commitments", func(r *Report) { r.Commitments.Groups[1].Terms[0].MonthlySavings = NewMoney(dec("192.41")) },
			"commitments groups save 422.97 at the 1y term, but the commitment recommendations save 422.70"},
		{"commitments recommended", func(r *Report) { r.Commitments.Groups[4].RecommendedTerm = "1y" },
			"commitments.recommendedMonthlySavings is 644.66, but the groups save 532.49 at their recommended terms"},
		{"commitments unknown term", func(r *Report) { r.Commitments.Groups[0].RecommendedTerm = "5y" },
			`commitments group aws us-east-1 g5 recommends term "5y", which it does not plan`},
		{"tagging saves", func(r *Report) {
			r.Recommendations[8].MonthlySavings = NewMoney(dec("1"))
			r.Recommendations[8].ProjectedMonthlyCost = NewMoney(dec("113.14"))
		}, "tagging recommendation tagging-nb-t4-1 saves 1.00; tagging saves nothing by itself"},
		{"untagged spend", func(r *Report) { r.TagAudit.UntaggedMonthlyCost = NewMoney(dec("114.14")) },
			"tagAudit.untaggedMonthlyCost is 114.14, but its non-compliant instances cost 228.28"},
		{"compliant count", func(r *Report) { r.TagAudit.CompliantCount = 5 },
			"tagAudit.compliantCount is 5, want 4 (7 instances, 3 with a missing or invalid tag)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := testReport()
			tc.mutate(r)
			err := r.Verify()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Verify() = %v, want it to mention %q", err, tc.want)
			}
		})
	}
}

func TestLoad(t *testing.T) {
	good := write(t, testReport(), "json", PrintOptions{})
	t.Run("round trip", func(t *testing.T) {
		r, err := Load(strings.NewReader(good))
		if err != nil {
			t.Fatal(err)
		}
		if err := r.Verify(); err != nil {
			t.Error(err)
		}
		if again := write(t, r, "json", PrintOptions{}); again != good {
			t.Errorf("loaded report writes differently:\n%s", cmp.Diff(good, again))
		}
	})
	t.Run("later minor with new fields", func(t *testing.T) {
		in := strings.Replace(good, `"schemaVersion": "`+SchemaVersion+`",`, `"schemaVersion": "1.7", "newThing": {"x": 1},`, 1)
		if in == good {
			t.Fatal("no schemaVersion to replace")
		}
		if _, err := Load(strings.NewReader(in)); err != nil {
			t.Error(err)
		}
	})
	t.Run("1.0 report", func(t *testing.T) {
		r, err := Load(strings.NewReader(report10(t, good)))
		if err != nil {
			t.Fatal(err)
		}
		if r.Allocation != nil || r.AIMetrics != nil || r.TagAudit != nil || r.Sharing != nil || r.Commitments != nil ||
			r.Policy.Quantize != nil || r.Policy.Sharing != nil || r.Policy.Governance != nil {
			t.Errorf("a 1.0 report has 1.1 sections: %+v", r)
		}
		if err := r.Verify(); err != nil {
			t.Error(err)
		}
		for _, f := range Formats {
			write(t, r, f, PrintOptions{TTY: true})
		}
	})
	for _, tc := range []struct {
		name, in, want string
		is             error
	}{
		{"unknown major", strings.Replace(good, `"`+SchemaVersion+`"`, `"2.0"`, 1),
			"unsupported report version: schema version 2.0; this gpufinops reads 1.x reports", ErrUnsupportedVersion},
		{"truncated", good[:len(good)/2], "invalid report: the JSON ends early (truncated file?)", ErrInvalid},
		{"bad syntax", `{"schemaVersion": "1.0",, }`, "invalid report: not valid JSON at byte 25: invalid character ',' looking for beginning of object key string", ErrInvalid},
		{"array", `[{"schemaVersion": "1.0"}]`, "invalid report: expected a JSON object, got an array", ErrInvalid},
		{"string", `"report"`, "invalid report: expected a JSON object, got a string", ErrInvalid},
		{"empty", " \n", "invalid report: the input is empty", ErrInvalid},
		{"no version", `{"summary": {}}`, "invalid report: no schemaVersion; is this a gpufinops report?", ErrInvalid},
		{"numeric version", `{"schemaVersion": 1}`, `invalid report: schemaVersion must be a string like "` + SchemaVersion + `"`, ErrInvalid},
		{"bad version", `{"schemaVersion": "one"}`, `invalid report: schemaVersion "one" is not major.minor`, ErrInvalid},
		{"wrong type", `{"schemaVersion": "1.0", "summary": {"instanceCount": "four"}}`,
			"invalid report: summary.instanceCount: expected int, got string", ErrInvalid},
		{"quoted money", `{"schemaVersion": "1.0", "summary": {"monthlySavings": "12.00"}}`,
			`invalid report: expected a number, got "12.00"`, ErrInvalid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load(strings.NewReader(tc.in))
			if err == nil || err.Error() != tc.want || !errors.Is(err, tc.is) {
				t.Errorf("Load() = %v\nwant     %s (wrapping %v)", err, tc.want, tc.is)
			}
			if err != nil && strings.Contains(err.Error(), "\n") {
				t.Errorf("error is more than one line: %q", err)
			}
		})
	}
}

func TestMoney(t *testing.T) {
	for _, tc := range []struct {
		in, json, tty, pipe string
	}{
		{"1234.5", "1234.50", "$1,234.50", "1234.50"},
		{"0", "0.00", "$0.00", "0.00"},
		{"0.005", "0.01", "$0.01", "0.01"},
		{"0.004999", "0.00", "$0.00", "0.00"},
		{"2.675", "2.68", "$2.68", "2.68"},
		{"-2.675", "-2.68", "-$2.68", "-2.68"},
		{"-0.004", "0.00", "$0.00", "0.00"},
		{"-1234567.891", "-1234567.89", "-$1,234,567.89", "-1234567.89"},
		{"999.995", "1000.00", "$1,000.00", "1000.00"},
		{"12345678901.1", "12345678901.10", "$12,345,678,901.10", "12345678901.10"},
		{"100", "100.00", "$100.00", "100.00"},
		{"123456", "123456.00", "$123,456.00", "123456.00"},
	} {
		m := NewMoney(dec(tc.in))
		b, err := json.Marshal(m)
		if err != nil || string(b) != tc.json {
			t.Errorf("Marshal(%s) = %s, %v; want %s", tc.in, b, err, tc.json)
		}
		if got := formatMoney(m, true); got != tc.tty {
			t.Errorf("formatMoney(%s, tty) = %q, want %q", tc.in, got, tc.tty)
		}
		if got := formatMoney(m, false); got != tc.pipe {
			t.Errorf("formatMoney(%s, pipe) = %q, want %q", tc.in, got, tc.pipe)
		}
	}
}

func TestMoneyUnmarshal(t *testing.T) {
	var v struct {
		M Money  `json:"m"`
		N Number `json:"n"`
	}
	if err := json.Unmarshal([]byte(`{"m": 12.345, "n": 5.6720001}`), &v); err != nil {
		t.Fatal(err)
	}
	if v.M.String() != "12.35" || v.N.String() != "5.6720001" {
		t.Errorf("got %s and %s", v.M, v.N)
	}
	for _, bad := range []string{`{"m": "12"}`, `{"m": true}`, `{"n": "5.67"}`} {
		if err := json.Unmarshal([]byte(bad), &v); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
	b, _ := json.Marshal(NewNumber(decimal.RequireFromString("5.6720")))
	if string(b) != "5.672" {
		t.Errorf("Number marshals as %s", b)
	}
}

func TestSchemaValidatesReport(t *testing.T) {
	c := jsonschema.NewCompiler()
	sch, err := c.Compile("../../docs/schema/report.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	validate := func(name, doc string) error {
		inst, err := jsonschema.UnmarshalJSON(strings.NewReader(doc))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return sch.Validate(inst)
	}
	good := write(t, testReport(), "json", PrintOptions{})
	if err := validate("report", good); err != nil {
		t.Errorf("report does not match the schema: %v", err)
	}
	empty := write(t, New(recommend.Plan{Policy: recommend.DefaultPolicy()}, Meta{GeneratedAt: testutil.FixedNow}), "json", PrintOptions{})
	if err := validate("empty report", empty); err != nil {
		t.Errorf("empty report does not match the schema: %v", err)
	}
	for name, mutate := range map[string]func(doc map[string]any){
		"money as string": func(doc map[string]any) { summary(doc)["monthlySavings"] = "25167.48" },
		"unknown kind":    func(doc map[string]any) { item(doc, "recommendations", 0)["kind"] = "magic" },
		"no summary":      func(doc map[string]any) { delete(doc, "summary") },
		"priced, no cost": func(doc map[string]any) { delete(item(doc, "instances", 0), "currentMonthlyCost") },
		"bad version":     func(doc map[string]any) { doc["schemaVersion"] = "v1" },
		"next major":      func(doc map[string]any) { doc["schemaVersion"] = "2.0" },
	} {
		var doc map[string]any
		if err := json.Unmarshal([]byte(good), &doc); err != nil {
			t.Fatal(err)
		}
		mutate(doc)
		b, err := json.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		if err := validate(name, string(b)); err == nil {
			t.Errorf("%s: the schema accepts it", name)
		}
	}
	// An unpriced instance has no costs, and that is valid.
	if r := testReport(); r.Instances[3].Priced || r.Instances[0].CurrentMonthlyCost == nil {
		t.Fatal("fixture changed: instance 0 must be priced and instance 3 unpriced")
	}
}

// report10 is doc without the fields 1.1 added, as a 1.0 writer made it (the
// recommendations of the kinds 1.1 added are kept, so that it still adds up).
func report10(t *testing.T, doc string) string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(doc), &m); err != nil {
		t.Fatal(err)
	}
	m["schemaVersion"] = "1.0"
	for _, k := range []string{"allocation", "aiMetrics", "tagAudit", "sharing", "commitments"} {
		delete(m, k)
	}
	pol := m["policy"].(map[string]any)
	for _, k := range []string{"quantize", "sharing", "governance"} {
		delete(pol, k)
	}
	delete(pol["commitment"].(map[string]any), "names")
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func summary(doc map[string]any) map[string]any { return doc["summary"].(map[string]any) }

func item(doc map[string]any, list string, i int) map[string]any {
	return doc[list].([]any)[i].(map[string]any)
}
