package factory

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/gpufinops/gpufinops/pkg/cmd/analyze"
	"github.com/gpufinops/gpufinops/pkg/cmd/inventory"
	"github.com/gpufinops/gpufinops/pkg/cmdutil"
	"github.com/gpufinops/gpufinops/pkg/config"
	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pkg/iostreams"
	"github.com/gpufinops/gpufinops/pkg/recommend"
	"github.com/gpufinops/gpufinops/pkg/report"
	"github.com/gpufinops/gpufinops/pricing/catalog"
	"github.com/gpufinops/gpufinops/providers"
	"github.com/gpufinops/gpufinops/providers/fake"
)

// faultySim serves the demo fleet's AWS part, spread over three regions,
// from the fake provider with faults per region.
type faultySim struct {
	p     providers.Provider
	fleet *fleet.Fleet
	// runTimeout is timeouts.run in the configuration; zero leaves it unbounded.
	runTimeout time.Duration
}

func startFaultySim(t *testing.T, opts fake.Options) *faultySim {
	t.Helper()
	f := demoFleet(t)
	if opts.Regions == nil {
		opts.Regions = demoRegions
	}
	return &faultySim{p: fake.New(f, opts), fleet: f}
}

// awsIDs lists the IDs of the demo fleet's AWS instances in region.
func (s *faultySim) awsIDs(region string) []string {
	var out []string
	for _, in := range s.fleet.Instances {
		if in.Provider == fleet.AWS && in.Region == region {
			out = append(out, in.ID)
		}
	}
	sort.Strings(out)
	return out
}

type runResult struct {
	out, errOut string
	code        cmdutil.ExitCode
	err         error
}

// run runs analyze or inventory in-process with the real scanner reading
// the fake provider, stdin given.
func (s *faultySim) run(t *testing.T, stdin string, command string, args ...string) runResult {
	t.Helper()
	ios, in, out, errOut := iostreams.Test()
	in.WriteString(stdin)
	cfg := &config.Config{
		Policy:    recommend.DefaultPolicy(),
		Providers: map[string]providers.Values{"aws": {providers.OptConcurrency: 4}},
		Cache:     config.CacheConfig{Dir: t.TempDir(), TTLHours: 24},
		Report:    config.ReportConfig{ExchangeRates: map[string]float64{"EUR": 0.9}},
		Timeouts:  config.TimeoutsConfig{Run: s.runTimeout},
	}
	sc := fakeScanner(ios, s.p)
	f := &cmdutil.Factory{
		IOStreams: ios,
		Config:    func() (*config.Config, error) { return cfg, nil },
		Catalog:   catalog.Embedded,
		Fleet:     FileFleet(ios),
		Scan:      sc.scan,
		Providers: sc.providers,
		Now:       func() time.Time { return simNow },
	}
	c := analyze.NewCmdAnalyze(f, nil)
	if command == "inventory" {
		c = inventory.NewCmdInventory(f, nil)
	}
	c.SetArgs(args)
	c.SetOut(&bytes.Buffer{})
	c.SetErr(&bytes.Buffer{})
	c.SilenceUsage, c.SilenceErrors = true, true
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	err := c.ExecuteContext(ctx)
	return runResult{out: out.String(), errOut: errOut.String(), code: cmdutil.ExitCodeFor(err), err: err}
}

// failure is one way a part of a scan fails.
type failure struct {
	name string
	// faults break the fake, per region.
	faults map[string]fake.Fault
	// scopeFailed are the regions whose listing fails; metricsFailed those
	// whose metrics fail.
	scopeFailed, metricsFailed []string
	// reason is a pattern the warning's reason matches.
	reason string
}

// How each cloud's failures become these errors is the adapters' part
// (providers/aws: TestCloudWatchFailuresAreMetricsFailures); here each kind
// of failure must reach every format of the report.
var failures = []failure{
	{name: "region outage", faults: map[string]fake.Fault{"eu-west-1": {List: errors.New("500 InternalError after 10 attempts")}},
		scopeFailed: []string{"eu-west-1"}, reason: `(?i)500|internal|outage|retry`},
	{name: "listing denied in one region", faults: map[string]fake.Fault{"us-west-2": {List: providers.ErrPermission}},
		scopeFailed: []string{"us-west-2"}, reason: `(?i)permission denied.*docs/iam`},
	{name: "metrics fail", faults: map[string]fake.Fault{"us-east-1": {Metrics: errors.New("500 InternalFailure after 10 attempts")}},
		metricsFailed: []string{"us-east-1"}, reason: `(?i)500|InternalFailure|retry`},
	{name: "metrics denied", faults: map[string]fake.Fault{"us-west-2": {Metrics: providers.ErrPermission}},
		metricsFailed: []string{"us-west-2"}, reason: `(?i)permission denied`},
	{name: "metrics throttled", faults: map[string]fake.Fault{"us-east-1": {Metrics: providers.ErrThrottled}},
		metricsFailed: []string{"us-east-1"}, reason: `(?i)throttl`},
	{name: "region outage and metrics denied elsewhere", faults: map[string]fake.Fault{
		"eu-west-1": {List: errors.New("500 InternalError")}, "us-east-1": {Metrics: providers.ErrPermission}},
		scopeFailed: []string{"eu-west-1"}, metricsFailed: []string{"us-east-1"}, reason: `(?i)500|internal|permission denied`},
}

// noUtilAdvice are the kinds that rest on utilization.
var noUtilAdvice = map[string]bool{"idle-stop": true, "schedule": true, "rightsize": true, "quantize": true, "share": true}

// TestScanFailuresAreInTheReport: each way a region or its metrics fail is
// a warning inside every format of the report with its scope and reason,
// exit 3; a metrics failure keeps the region's instances, priced,
// utilization unknown, with no advice that rests on use.
func TestScanFailuresAreInTheReport(t *testing.T) {
	baseline := startFaultySim(t, fake.Options{})
	base := baseline.run(t, "", "analyze", "--provider", "aws", "-o", "json")
	if base.code != cmdutil.ExitOK {
		t.Fatalf("baseline: exit %d: %v\n%s", base.code, base.err, base.errOut)
	}
	baseRep := decodeReport(t, base.out)
	if n := len(scanWarnings(baseRep)); n != 0 {
		t.Fatalf("baseline has %d scan warnings", n)
	}
	// The baseline has idle or rightsize advice in the regions whose
	// CloudWatch the cases break, so its absence below means something.
	advised := map[string]bool{}
	for _, rec := range baseRep.Recommendations {
		if noUtilAdvice[rec.Kind] {
			advised[rec.Region] = true
		}
	}

	for _, fc := range failures {
		t.Run(fc.name, func(t *testing.T) {
			s := startFaultySim(t, fake.Options{Faults: fc.faults})
			js := s.run(t, "", "analyze", "--provider", "aws", "-o", "json")
			if js.code != cmdutil.ExitPartial {
				t.Fatalf("exit %d (%v), want 3\n%s", js.code, js.err, js.errOut)
			}
			rep := decodeReport(t, js.out)
			ws := scanWarnings(rep)
			if len(ws) != len(fc.scopeFailed)+len(fc.metricsFailed) {
				t.Fatalf("scan warnings %+v, want %d", ws, len(fc.scopeFailed)+len(fc.metricsFailed))
			}
			reason := regexp.MustCompile(fc.reason)
			byRegion := map[string]report.Warning{}
			for _, w := range ws {
				if w.Scope == nil || w.Scope.Provider != "aws" || w.Scope.Account == "" || w.Scope.Region == "" {
					t.Errorf("warning without a full scope: %+v", w)
					continue
				}
				if !reason.MatchString(w.Reason) || strings.Contains(w.Reason, "\n") {
					t.Errorf("reason %q does not match %s", w.Reason, fc.reason)
				}
				if !strings.Contains(w.Message, w.Scope.Region) {
					t.Errorf("message %q does not name the region", w.Message)
				}
				byRegion[w.Scope.Region] = w
			}
			for _, r := range fc.scopeFailed {
				w, ok := byRegion[r]
				if !ok || w.Code != fleet.ScanScopeFailed {
					t.Errorf("%s: no scope-failed warning: %+v", r, ws)
				}
				for _, id := range s.awsIDs(r) {
					if instanceOf(rep, id) != nil {
						t.Errorf("%s of the failed region %s is in the report", id, r)
					}
				}
			}
			for _, r := range fc.metricsFailed {
				w, ok := byRegion[r]
				if !ok || w.Code != fleet.ScanMetricsFailed || w.Scope.Source != fake.MetricsSource {
					t.Errorf("%s: no metrics-failed %s warning: %+v", r, fake.MetricsSource, ws)
				}
				ids := s.awsIDs(r)
				if w.InstanceCount != len(ids) {
					t.Errorf("%s: instanceCount %d, want %d", r, w.InstanceCount, len(ids))
				}
				if !advised[r] {
					t.Errorf("the baseline has no utilization advice in %s: the case proves nothing", r)
				}
				for _, id := range ids {
					in := instanceOf(rep, id)
					switch {
					case in == nil:
						t.Errorf("%s of %s (metrics failed) is missing: the inventory was thrown away", id, r)
						continue
					case !in.Priced || in.CurrentMonthlyCost == nil:
						t.Errorf("%s is not priced", id)
					case in.State == "running" && in.UtilizationSource != fleet.UtilizationUnknown:
						t.Errorf("%s: utilizationSource %q, want unknown", id, in.UtilizationSource)
					}
					for _, rec := range rep.Recommendations {
						if rec.ResourceID == id && noUtilAdvice[rec.Kind] {
							t.Errorf("%s: %s advice without utilization: %s", id, rec.Kind, rec.Action)
						}
					}
				}
			}
			// Regions that worked are whole.
			for _, r := range demoRegions {
				if _, failed := byRegion[r]; failed {
					continue
				}
				for _, id := range s.awsIDs(r) {
					if in := instanceOf(rep, id); in == nil || in.UtilizationSource == fleet.UtilizationUnknown {
						t.Errorf("%s of the healthy region %s: %+v", id, r, in)
					}
				}
			}

			// Every other format shows each warning's scope and reason.
			for _, format := range []string{"table", "wide", "markdown", "html", "csv"} {
				res := s.run(t, "", "analyze", "--provider", "aws", "-o", format)
				if res.code != cmdutil.ExitPartial {
					t.Errorf("-o %s: exit %d, want 3", format, res.code)
				}
				for _, w := range ws {
					text := res.out
					if format == "html" {
						text = htmlUnescape(text)
					}
					for _, want := range []string{w.Scope.String(), w.Code, firstWords(w.Reason)} {
						if !strings.Contains(text, want) {
							t.Errorf("-o %s: %q missing from the output", format, want)
						}
					}
				}
				if format == "csv" {
					checkCSVWarnings(t, res.out, ws)
				}
			}
			// --jq and --currency see them too.
			jq := s.run(t, "", "analyze", "--provider", "aws", "-o", "json", "--jq", `[.warnings[] | select(.scope) | .code] | length`)
			if jq.code != cmdutil.ExitPartial || strings.TrimSpace(jq.out) != itoa(len(ws)) {
				t.Errorf("--jq: %q, exit %d", jq.out, jq.code)
			}
			eur := s.run(t, "", "analyze", "--provider", "aws", "-o", "json", "--currency", "EUR")
			if eur.code != cmdutil.ExitPartial || len(scanWarnings(decodeReport(t, eur.out))) != len(ws) {
				t.Errorf("--currency EUR: exit %d, warnings lost", eur.code)
			}

			// The snapshot keeps them: inventory -o json, then analyze --fleet.
			inv := s.run(t, "", "inventory", "--provider", "aws", "-o", "json")
			if inv.code != cmdutil.ExitPartial {
				t.Fatalf("inventory: exit %d", inv.code)
			}
			snap, err := fleet.Parse("snapshot.json", []byte(inv.out))
			if err != nil {
				t.Fatal(err)
			}
			if len(snap.Metadata.Warnings) != len(ws) {
				t.Errorf("snapshot metadata.warnings %+v", snap.Metadata.Warnings)
			}
			path := filepath.Join(t.TempDir(), "snapshot.json")
			if err := os.WriteFile(path, []byte(inv.out), 0o600); err != nil {
				t.Fatal(err)
			}
			again := s.run(t, "", "analyze", "--fleet", path, "-o", "json")
			if again.code != cmdutil.ExitPartial {
				t.Errorf("analyze of the partial snapshot: exit %d, want 3", again.code)
			}
			rep2 := decodeReport(t, again.out)
			if got := scanWarnings(rep2); len(got) != len(ws) {
				t.Errorf("analyze --fleet of the snapshot: %d scan warnings, want %d", len(got), len(ws))
			}
			for _, r := range fc.metricsFailed {
				for _, id := range s.awsIDs(r) {
					if in := instanceOf(rep2, id); in == nil || (in.State == "running" && in.UtilizationSource != fleet.UtilizationUnknown) {
						t.Errorf("snapshot: %s: %+v", id, in)
					}
				}
			}
			if !strings.Contains(again.errOut, "warning: ") {
				t.Errorf("analyze of the partial snapshot printed no warning on stderr: %q", again.errOut)
			}
		})
	}
}

// TestPrometheusRefusedIsAWarning: a metrics source that refuses the
// connection is a metrics-failed warning in the report, exit 3, and the
// fleet is still reported.
func TestPrometheusRefusedIsAWarning(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + l.Addr().String()
	_ = l.Close() // nothing listens there now: connection refused
	s := &faultySim{}
	dir := t.TempDir()
	fl := `apiVersion: gpufinops/v1
kind: Fleet
metadata: {name: onprem}
instances:
  - {id: i-a, provider: aws, region: us-east-1, instanceType: g5.xlarge}
  - {id: i-b, provider: aws, region: us-east-1, instanceType: p4d.24xlarge}
`
	path := filepath.Join(dir, "fleet.yaml")
	if err := os.WriteFile(path, []byte(fl), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, format := range []string{"json", "table", "markdown", "html", "csv"} {
		res := s.run(t, "", "analyze", "--fleet", path, "--metrics", "prometheus", "--prometheus-url", url, "-o", format)
		if res.code != cmdutil.ExitPartial {
			t.Fatalf("-o %s: exit %d (%v), want 3", format, res.code, res.err)
		}
		if !strings.Contains(res.out, "metrics-failed") || !strings.Contains(res.out, "prometheus") {
			t.Errorf("-o %s: no prometheus warning:\n%s", format, res.out)
		}
		if format != "json" {
			continue
		}
		rep := decodeReport(t, res.out)
		ws := scanWarnings(rep)
		if len(ws) != 1 || ws[0].Scope == nil || ws[0].Scope.Source != "prometheus" || !regexp.MustCompile(`(?i)refused|connect`).MatchString(ws[0].Reason) || ws[0].InstanceCount != 2 {
			t.Errorf("warnings %+v", ws)
		}
		for _, id := range []string{"i-a", "i-b"} {
			if in := instanceOf(rep, id); in == nil || !in.Priced || in.UtilizationSource != fleet.UtilizationUnknown {
				t.Errorf("%s: %+v", id, in)
			}
		}
	}
}

func decodeReport(t *testing.T, out string) *report.Report {
	t.Helper()
	r, err := report.Load(strings.NewReader(out))
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	return r
}

func scanWarnings(r *report.Report) []report.Warning {
	var out []report.Warning
	for _, w := range r.Warnings {
		if report.IsScanWarning(w) {
			out = append(out, w)
		}
	}
	return out
}

func instanceOf(r *report.Report, id string) *report.Instance {
	for i := range r.Instances {
		if r.Instances[i].ResourceID == id {
			return &r.Instances[i]
		}
	}
	return nil
}

// checkCSVWarnings: each scan warning is one csv row of kind warning with
// its scope and reason in their columns.
func checkCSVWarnings(t *testing.T, out string, ws []report.Warning) {
	t.Helper()
	rows, err := csv.NewReader(bufio.NewReader(strings.NewReader(out))).ReadAll()
	if err != nil {
		t.Fatalf("csv: %v", err)
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	var got int
	for _, row := range rows[1:] {
		if row[col["kind"]] != report.CSVWarningKind {
			continue
		}
		got++
		found := false
		for _, w := range ws {
			// Request IDs differ between runs: compare the reason's start.
			if row[col["id"]] == w.Code && row[col["region"]] == w.Scope.Region && row[col["account"]] == w.Scope.Account &&
				row[col["target"]] == w.Scope.Source && strings.HasPrefix(row[col["rationale"]], firstWords(w.Reason)) {
				found = true
			}
		}
		if !found {
			t.Errorf("csv warning row %q matches no warning", row)
		}
	}
	if got != len(ws) {
		t.Errorf("csv: %d warning rows, want %d", got, len(ws))
	}
}

// firstWords is the start of a reason, short enough to survive escaping.
func firstWords(s string) string {
	f := strings.Fields(s)
	if len(f) > 2 {
		f = f[:2]
	}
	return strings.Join(f, " ")
}

func htmlUnescape(s string) string {
	return strings.NewReplacer("&amp;", "&", "&lt;", "<", "&gt;", ">", "&#34;", `"`, "&#39;", "'", "&quot;", `"`).Replace(s)
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// TestAccountFailureIsAWarning: with several accounts, one whose regions
// cannot be listed is a scope-failed warning naming the account (no region),
// and the other account's instances are reported; exit 3. When no account
// can be listed the scan fails as a whole (exit 4 for a permission).
func TestAccountFailureIsAWarning(t *testing.T) {
	s := startFaultySim(t, fake.Options{AccountErrors: map[string]error{"444455556666": providers.ErrPermission}})
	for _, format := range []string{"json", "table", "markdown", "html", "csv"} {
		res := s.run(t, "", "analyze", "--provider", "aws", "-o", format)
		if res.code != cmdutil.ExitPartial {
			t.Fatalf("-o %s: exit %d (%v), want 3\n%s", format, res.code, res.err, res.errOut)
		}
		if !strings.Contains(res.out, "aws:444455556666") || !strings.Contains(res.out, "scope-failed") {
			t.Errorf("-o %s: the account's failure is not in the report", format)
		}
		if format != "json" {
			continue
		}
		rep := decodeReport(t, res.out)
		ws := scanWarnings(rep)
		if len(ws) != 1 || ws[0].Scope == nil || ws[0].Scope.Account != "444455556666" || ws[0].Scope.Region != "" ||
			!regexp.MustCompile(`listing regions: permission denied`).MatchString(ws[0].Reason) {
			t.Errorf("warnings %+v", ws)
		}
		for _, r := range demoRegions {
			for _, id := range s.awsIDs(r) {
				if instanceOf(rep, id) == nil {
					t.Errorf("%s of the working account is missing", id)
				}
			}
		}
	}

	all := startFaultySim(t, fake.Options{AccountErrors: map[string]error{"111122223333": providers.ErrPermission, "444455556666": providers.ErrPermission}})
	res := all.run(t, "", "analyze", "--provider", "aws", "-o", "json")
	if res.code != cmdutil.ExitCredentials || res.out != "" {
		t.Errorf("no account listed: exit %d (%v), stdout %d bytes", res.code, res.err, len(res.out))
	}
}
