package report

import (
	"bytes"
	"encoding/csv"
	"html"
	"strings"
	"testing"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pkg/recommend"
)

// scanWarningCases are failed parts of a scan in their several shapes: a
// region, an account without a region, a metrics source of one scope and of
// the whole fleet, and reasons with characters each format escapes.
var scanWarningCases = []fleet.ScanWarning{
	{Code: fleet.ScanScopeFailed, Provider: fleet.AWS, Account: "111122223333", Region: "eu-west-1", Reason: "DescribeInstances: StatusCode: 500 after 10 attempts"},
	{Code: fleet.ScanScopeFailed, Provider: fleet.Azure, Account: "0000-1111", Reason: `permission denied: <Microsoft.Compute/read> & "more" (see docs/iam/)`},
	{Code: fleet.ScanMetricsFailed, Provider: fleet.AWS, Account: "111122223333", Region: "us-east-1", Source: "cloudwatch", Reason: "GetMetricData: AccessDenied | not authorized", Instances: []string{"i-0a1b2c3d4e5f60001", "i-0ffff0000aaaa0002"}},
	{Code: fleet.ScanMetricsFailed, Source: "prometheus", Reason: "dial tcp 127.0.0.1:9: connect: connection refused", Instances: []string{"gpu-train-01"}},
}

func scanReport(t *testing.T, ws []fleet.ScanWarning) *Report {
	t.Helper()
	plan := testPlan()
	// The engine warns of no utilization for the instances the metrics
	// failure left without any.
	for _, w := range ws {
		for _, id := range w.Instances {
			plan.Warnings = append(plan.Warnings, recommend.Warning{ResourceID: id, Code: recommend.WarnNoUtilization, Message: "no GPU utilization data: not judged idle"})
		}
	}
	meta := testMeta()
	meta.ScanWarnings = ws
	return New(plan, meta)
}

func TestScanWarningsInEveryFormat(t *testing.T) {
	r := scanReport(t, scanWarningCases)
	if r.SchemaVersion != SchemaVersion {
		t.Errorf("schema %s", r.SchemaVersion)
	}
	// They lead the warnings, in order, with scope, reason and count.
	for i, sw := range scanWarningCases {
		w := r.Warnings[i]
		if w.Code != sw.Code || w.Reason != sw.Reason || w.Scope == nil || w.Scope.String() != sw.Scope() {
			t.Errorf("warning %d = %+v, from %+v", i, w, sw)
		}
		if sw.Code == fleet.ScanMetricsFailed && w.InstanceCount != len(sw.Instances) {
			t.Errorf("warning %d: instanceCount %d", i, w.InstanceCount)
		}
		if !IsScanWarning(w) {
			t.Errorf("warning %d is not a scan warning", i)
		}
	}
	// Engine warnings for the unknown instances say why.
	for _, w := range r.Warnings[len(scanWarningCases):] {
		if IsScanWarning(w) {
			t.Errorf("engine warning taken for a scan warning: %+v", w)
		}
		if w.Code == recommend.WarnNoUtilization && !strings.HasPrefix(w.Message, "utilization unknown: ") {
			t.Errorf("no-utilization of a failed source: %q", w.Message)
		}
	}
	for _, format := range Formats {
		for _, tty := range []bool{false, true} {
			out := write(t, r, format, PrintOptions{TTY: tty})
			text := out
			if format == "html" {
				text = html.UnescapeString(out)
			}
			if format != "json" && format != "csv" {
				head := "Incomplete scan: 2 scopes not scanned (their instances are missing); 2 metrics sources failed"
				if i := strings.Index(text, head); i < 0 || i > len(text)/4 {
					t.Errorf("-o %s: no %q near the top", format, head)
				}
			}
			for _, sw := range scanWarningCases {
				for _, want := range []string{sw.Scope(), sw.Code, sw.Reason} {
					switch format {
					case "markdown":
						want = strings.NewReplacer("|", `\|`, "<", "&lt;", ">", "&gt;").Replace(want)
					case "json":
						want = strings.ReplaceAll(want, `"`, `\"`)
					case "csv":
						want = strings.ReplaceAll(want, `"`, `""`)
					}
					if !strings.Contains(text, want) && !strings.Contains(out, want) {
						t.Errorf("-o %s (tty %v): %q missing", format, tty, want)
					}
				}
			}
		}
	}
}

func TestScanWarningsCSVRows(t *testing.T) {
	r := scanReport(t, scanWarningCases)
	rows, err := csv.NewReader(strings.NewReader(write(t, r, "csv", PrintOptions{}))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var warn [][]string
	for _, row := range rows[1:] {
		if len(row) != len(CSVHeader) {
			t.Fatalf("row of %d columns", len(row))
		}
		if row[6] == CSVWarningKind {
			warn = append(warn, row)
		}
	}
	if len(warn) != len(scanWarningCases) {
		t.Fatalf("%d warning rows, want %d (engine warnings stay out of csv)", len(warn), len(scanWarningCases))
	}
	if len(rows)-1-len(warn) != len(r.Recommendations) {
		t.Errorf("recommendation rows lost")
	}
	for i, sw := range scanWarningCases {
		row := warn[i]
		if row[0] != sw.Code || row[2] != string(sw.Provider) || row[3] != sw.Account || row[4] != sw.Region || row[8] != sw.Source || row[14] != sw.Reason {
			t.Errorf("row %q for %+v", row, sw)
		}
		for _, money := range row[9:12] {
			if money != "" {
				t.Errorf("a warning row carries money: %q", row)
			}
		}
	}
}

func TestUnknownUtilizationMarker(t *testing.T) {
	r := scanReport(t, scanWarningCases)
	unknown := map[string]bool{"i-0a1b2c3d4e5f60001": true, "i-0ffff0000aaaa0002": true, "gpu-train-01": true}
	for _, in := range r.Instances {
		got := in.UtilizationSource == fleet.UtilizationUnknown
		if got != unknown[in.ResourceID] {
			t.Errorf("%s: utilizationSource %q", in.ResourceID, in.UtilizationSource)
		}
	}
	// Without the engine's no-utilization warning the instance has data
	// (another source filled it) and is not marked.
	plan := testPlan()
	meta := testMeta()
	meta.ScanWarnings = scanWarningCases[2:3]
	for _, in := range New(plan, meta).Instances {
		if in.UtilizationSource == fleet.UtilizationUnknown && in.State == string(fleet.Running) {
			t.Errorf("%s marked unknown though it has utilization", in.ResourceID)
		}
	}
}

func TestScanWarningsRoundTrip(t *testing.T) {
	r := scanReport(t, scanWarningCases)
	var b bytes.Buffer
	if err := Write(&b, r, "json", PrintOptions{}); err != nil {
		t.Fatal(err)
	}
	back, err := Load(&b)
	if err != nil {
		t.Fatal(err)
	}
	for i := range scanWarningCases {
		if got, want := back.Warnings[i], r.Warnings[i]; got.Code != want.Code || got.Reason != want.Reason || *got.Scope != *want.Scope || got.InstanceCount != want.InstanceCount {
			t.Errorf("warning %d: %+v, want %+v", i, got, want)
		}
	}
	if err := back.Verify(); err != nil {
		t.Errorf("Verify: %v", err)
	}
	conv, err := Convert(r, Conversion{Currency: "EUR", Rate: dec("0.9"), Source: "--exchange-rate"})
	if err != nil {
		t.Fatal(err)
	}
	if len(conv.Warnings) != len(r.Warnings) || conv.Warnings[0].Scope == nil {
		t.Errorf("Convert lost scan warnings")
	}
}

// FuzzScanWarningRender: whatever a scan warning's scope and reason hold,
// every format writes it, the csv stays one parseable row per warning with
// the reason intact, and the JSON reads back with it.
func FuzzScanWarningRender(f *testing.F) {
	for _, w := range scanWarningCases {
		f.Add(w.Code, string(w.Provider), w.Account, w.Region, w.Source, w.Reason)
	}
	f.Add("scope-failed", "aws", "1,2", "us-\"east\"-1", "", "line one\nline two, with \"quotes\"")
	f.Fuzz(func(t *testing.T, code, provider, account, region, source, reason string) {
		sw := fleet.ScanWarning{Code: code, Provider: fleet.Provider(provider), Account: account, Region: region, Source: source, Reason: reason}
		meta := testMeta()
		meta.ScanWarnings = []fleet.ScanWarning{sw}
		r := New(testPlan(), meta)
		for _, format := range Formats {
			var b bytes.Buffer
			if err := Write(&b, r, format, PrintOptions{}); err != nil {
				t.Fatalf("%s: %v", format, err)
			}
		}
		var b bytes.Buffer
		if err := Write(&b, r, "csv", PrintOptions{}); err != nil {
			t.Fatal(err)
		}
		rows, err := csv.NewReader(&b).ReadAll()
		if err != nil {
			t.Fatalf("csv does not parse back: %v", err)
		}
		var warn [][]string
		for _, row := range rows[1:] {
			if row[6] == CSVWarningKind {
				warn = append(warn, row)
			}
		}
		// Every warning the report holds as a scan warning is one row.
		want := 0
		for _, w := range r.Warnings {
			if IsScanWarning(w) {
				want++
			}
		}
		if len(warn) != want {
			t.Fatalf("%d csv warning rows, want %d", len(warn), want)
		}
		b.Reset()
		if err := Write(&b, r, "json", PrintOptions{}); err != nil {
			t.Fatal(err)
		}
		back, err := Load(&b)
		if err != nil {
			t.Fatalf("json does not load: %v", err)
		}
		if r.Warnings[0].Code != strings.ToValidUTF8(code, "\uFFFD") || r.Warnings[0].Reason != strings.ToValidUTF8(reason, "\uFFFD") {
			t.Fatalf("report text %+v, want the scan's text with bytes that are not UTF-8 replaced", r.Warnings[0])
		}
		if back.Warnings[0].Reason != r.Warnings[0].Reason || back.Warnings[0].Code != r.Warnings[0].Code || back.Warnings[0].Message != r.Warnings[0].Message {
			t.Fatalf("json round trip: %+v", back.Warnings[0])
		}
	})
}

// A commitment API that could not be read is a scan warning that names the
// API and what the advice may then do, and the incomplete-scan line counts
// it as such, never as a scope whose instances are missing.
func TestCommitmentsFailedIsNotAMissingScope(t *testing.T) {
	sw := fleet.ScanWarning{Code: fleet.ScanCommitmentsFailed, Provider: fleet.AWS, Account: "111122223333", Source: "savingsplans:DescribeSavingsPlans",
		Reason: "savingsplans:DescribeSavingsPlans: AccessDenied; the commitments it lists are missing, so the advice may count savings on capacity already committed"}
	r := scanReport(t, []fleet.ScanWarning{sw})
	w := r.Warnings[0]
	if !IsScanWarning(w) {
		t.Fatalf("not a scan warning: %+v", w)
	}
	want := "savingsplans:DescribeSavingsPlans could not be read for aws:111122223333: AccessDenied; the commitments it lists are missing, so the advice may count savings on capacity already committed"
	if w.Message != want {
		t.Errorf("message\n %q\nwant\n %q", w.Message, want)
	}
	line := partialScanLine(r)
	if strings.Contains(line, "not scanned") || strings.Contains(line, "instances are missing") {
		t.Errorf("a commitment API failure counted as a missing scope: %q", line)
	}
	if !strings.Contains(line, "1 commitment API could not be read") {
		t.Errorf("incomplete-scan line %q", line)
	}
	for _, format := range Formats {
		out := write(t, r, format, PrintOptions{})
		if strings.Contains(out, "was not scanned") {
			t.Errorf("%s says the scope was not scanned:\n%s", format, out)
		}
	}
}
