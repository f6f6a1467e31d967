package fleet

import (
	"bytes"
	"strings"
	"testing"
)

const scanWarnHead = `apiVersion: gpufinops/v1
kind: Fleet
metadata:
  name: scan
  warnings:
`

const scanWarnTail = `instances:
  - {id: i-1, provider: aws, region: us-east-1, instanceType: g5.xlarge}
`

func TestScanWarningsValidate(t *testing.T) {
	for _, tc := range []struct {
		name, warning, wantErr string
	}{
		{"region", `{code: scope-failed, provider: aws, account: "1", region: eu-west-1, reason: boom}`, ""},
		{"metrics", `{code: metrics-failed, provider: aws, region: us-east-1, source: cloudwatch, reason: denied, instances: [i-1]}`, ""},
		{"whole-fleet source", `{code: metrics-failed, source: prometheus, reason: refused, instances: [i-1, i-2]}`, ""},
		{"future code", `{code: price-failed, reason: later}`, ""},
		{"no code", `{reason: boom}`, "metadata.warnings[0].code"},
		{"upper-case code", `{code: Scope-Failed, reason: boom}`, "metadata.warnings[0].code"},
		{"code with space", `{code: "scope failed", reason: boom}`, "is not a warning code"},
		{"no reason", `{code: scope-failed, provider: aws}`, "metadata.warnings[0].reason: missing"},
		{"blank reason", `{code: scope-failed, reason: "  "}`, "metadata.warnings[0].reason: missing"},
		{"bad provider", `{code: scope-failed, provider: AWS, reason: x}`, "metadata.warnings[0].provider"},
		{"other cloud", `{code: scope-failed, provider: oracle, reason: x}`, "is not one of aws, azure, gcp"},
		{"empty instance", `{code: metrics-failed, reason: x, instances: [i-1, ""]}`, "metadata.warnings[0].instances[1]"},
		{"unknown field", `{code: scope-failed, reason: x, severity: high}`, "severity"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc := scanWarnHead + "    - " + tc.warning + "\n" + scanWarnTail
			f, err := Parse("scan.yaml", []byte(doc))
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if len(f.Metadata.Warnings) != 1 {
					t.Fatalf("warnings %+v", f.Metadata.Warnings)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), "scan.yaml") || strings.Contains(err.Error(), "\n") {
				t.Fatalf("err %v, want one line with %q", err, tc.wantErr)
			}
		})
	}
}

func TestScanWarningsRoundTrip(t *testing.T) {
	in := &Fleet{APIVersion: APIVersion, Kind: Kind, Metadata: Metadata{Name: "scan", Warnings: []ScanWarning{
		{Code: ScanScopeFailed, Provider: AWS, Account: "1", Region: "eu-west-1", Reason: "500"},
		{Code: ScanMetricsFailed, Provider: AWS, Account: "1", Region: "us-east-1", Source: "cloudwatch", Reason: "denied", Instances: []string{"i-1"}},
	}}, Instances: []Instance{{ID: "i-1", Provider: AWS, Region: "us-east-1", InstanceType: "g5.xlarge"}}}
	for _, format := range []string{FormatJSON, FormatYAML} {
		var b bytes.Buffer
		if err := Write(&b, in, format); err != nil {
			t.Fatal(err)
		}
		out, err := Parse("snap", b.Bytes())
		if err != nil {
			t.Fatalf("%s: %v\n%s", format, err, b.String())
		}
		if len(out.Metadata.Warnings) != 2 || out.Metadata.Warnings[1].Instances[0] != "i-1" || out.Metadata.Warnings[0].Region != "eu-west-1" {
			t.Errorf("%s: %+v", format, out.Metadata.Warnings)
		}
		u := out.Metadata.UnknownUtilization()
		if len(u) != 1 || u["i-1"] == nil || u["i-1"].Source != "cloudwatch" {
			t.Errorf("unknown %v", u)
		}
	}
}

func TestScanWarningText(t *testing.T) {
	for _, tc := range []struct {
		w           ScanWarning
		scope, want string
	}{
		{ScanWarning{Code: ScanScopeFailed, Provider: AWS, Account: "1", Region: "eu-west-1", Reason: "500"}, "aws:1/eu-west-1", "aws:1/eu-west-1 was not scanned: 500; its instances are missing"},
		{ScanWarning{Code: ScanScopeFailed, Provider: Azure, Account: "sub", Reason: "denied"}, "azure:sub", "azure:sub was not scanned: denied"},
		{ScanWarning{Code: ScanMetricsFailed, Provider: AWS, Account: "1", Region: "us-east-1", Source: "cloudwatch", Reason: "denied", Instances: []string{"a", "b"}}, "aws:1/us-east-1", "cloudwatch could not be read for aws:1/us-east-1: denied; 2 instances kept with utilization unknown"},
		{ScanWarning{Code: ScanMetricsFailed, Source: "prometheus", Reason: "refused", Instances: []string{"a"}}, "prometheus", "prometheus could not be read for prometheus: refused; 1 instance kept"},
		{ScanWarning{Code: ScanScopeFailed, Reason: "listing regions: boom"}, "", "part of the scan failed: listing regions: boom; its instances are missing"},
		{ScanWarning{Code: ScanUnknownType, Provider: GCP, Region: "us-central1", Reason: `instance type "n9-standard-8" is not in the catalog; missing: price`, Instances: []string{"a", "b"}},
			"gcp/us-central1", `gcp/us-central1: instance type "n9-standard-8" is not in the catalog; missing: price; 2 instances kept, without savings advice`},
		{ScanWarning{Code: ScanUnknownType, Reason: "x", Instances: []string{"a"}}, "", "the fleet: x; 1 instance kept"},
	} {
		if got := tc.w.Scope(); got != tc.scope {
			t.Errorf("Scope() = %q, want %q", got, tc.scope)
		}
		if got := tc.w.Message(); !strings.HasPrefix(got, tc.want) || strings.Contains(got, "\n") {
			t.Errorf("Message() = %q, want %q…", got, tc.want)
		}
	}
}

// FuzzScanWarnings: a snapshot's metadata.warnings, whatever they hold,
// either parse into warnings that validate, print on one line and survive a
// round trip, or are refused with one line naming the file.
func FuzzScanWarnings(f *testing.F) {
	for _, w := range []string{
		`{code: scope-failed, provider: aws, account: "1", region: eu-west-1, reason: boom}`,
		`{code: metrics-failed, provider: aws, region: us-east-1, source: cloudwatch, reason: denied, instances: [i-1]}`,
		`{code: metrics-failed, source: prometheus, reason: "a\nb", instances: [i-1, i-2]}`,
		`{code: "", reason: x}`,
		`{code: scope-failed, provider: gcp, account: p, reason: "  "}`,
		`{code: metrics-failed, reason: x, instances: [""]}`,
	} {
		f.Add(w)
	}
	f.Fuzz(func(t *testing.T, warning string) {
		doc := scanWarnHead + "    - " + warning + "\n" + scanWarnTail
		fl, err := Parse("scan.yaml", []byte(doc))
		if err != nil {
			if msg := err.Error(); !strings.HasPrefix(msg, "scan.yaml") {
				t.Fatalf("error without the file name: %q", msg)
			}
			return
		}
		for _, w := range fl.Metadata.Warnings {
			if !warningCode.MatchString(w.Code) || strings.TrimSpace(w.Reason) == "" {
				t.Fatalf("accepted %+v", w)
			}
			if m := w.Message(); strings.ContainsAny(m, "\n\r") {
				t.Fatalf("message on several lines: %q", m)
			}
		}
		var b bytes.Buffer
		if err := Write(&b, fl, FormatJSON); err != nil {
			t.Fatal(err)
		}
		back, err := Parse("back.json", b.Bytes())
		if err != nil {
			t.Fatalf("round trip refused: %v\n%s", err, b.String())
		}
		if len(back.Metadata.Warnings) != len(fl.Metadata.Warnings) {
			t.Fatalf("round trip: %d warnings, want %d", len(back.Metadata.Warnings), len(fl.Metadata.Warnings))
		}
		for i, w := range back.Metadata.Warnings {
			if w.Message() != fl.Metadata.Warnings[i].Message() {
				t.Fatalf("round trip changed %q to %q", fl.Metadata.Warnings[i].Message(), w.Message())
			}
		}
	})
}
