package factory

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
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
	"github.com/gpufinops/gpufinops/pricing"
	"github.com/gpufinops/gpufinops/pricing/catalog"
	"github.com/gpufinops/gpufinops/providers"
	"github.com/gpufinops/gpufinops/providers/aws/sim"
	"github.com/gpufinops/gpufinops/providers/aws/simcat"
	"github.com/gpufinops/gpufinops/providers/file"
)

// demoRegions are the regions of the demo fleet's AWS part.
var demoRegions = []string{"eu-west-1", "us-east-1", "us-west-2"}

// faultySim serves the demo fleet's AWS part through the simulator with a
// fault hook, a FailRegions list and an optional wrapper around the handler.
type faultySim struct {
	url   string
	fleet *fleet.Fleet
}

func startFaultySim(t *testing.T, fault func(service, op, region string) (int, string), failRegions []string, wrap func(http.Handler) http.Handler) *faultySim {
	t.Helper()
	for k, v := range map[string]string{
		"AWS_EC2_METADATA_DISABLED": "true", "AWS_CONFIG_FILE": os.DevNull, "AWS_SHARED_CREDENTIALS_FILE": os.DevNull,
		"AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test", "AWS_REGION": "us-east-1", "AWS_PROFILE": "",
	} {
		t.Setenv(k, v)
	}
	f, err := file.Demo()
	if err != nil {
		t.Fatal(err)
	}
	cat, err := catalog.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	// Spread the AWS instances over the three regions, so that a failing
	// region leaves others with instances that must come through whole.
	n := 0
	for i := range f.Instances {
		if in := &f.Instances[i]; in.Provider == fleet.AWS {
			in.Region = demoRegions[n%len(demoRegions)]
			n++
		}
	}
	if err := pricing.Complete(f, cat); err != nil {
		t.Fatal(err)
	}
	opts := simcat.Options(f, cat)
	opts.Now = func() time.Time { return simNow }
	opts.Regions = demoRegions
	opts.Fault = fault
	opts.FailRegions = failRegions
	var h http.Handler = sim.New(f, opts)
	if wrap != nil {
		h = wrap(h)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return &faultySim{url: srv.URL, fleet: f}
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

// run runs analyze or inventory in-process with the real scanner against
// the simulator (fast retries), stdin given.
func (s *faultySim) run(t *testing.T, stdin string, command string, args ...string) runResult {
	t.Helper()
	ios, in, out, errOut := iostreams.Test()
	in.WriteString(stdin)
	cfg := &config.Config{
		Policy:    recommend.DefaultPolicy(),
		Providers: map[string]providers.Values{"aws": {providers.OptEndpoint: s.url, providers.OptConcurrency: 4}},
		Cache:     config.CacheConfig{Dir: t.TempDir(), TTLHours: 24},
		Report:    config.ReportConfig{ExchangeRates: map[string]float64{"EUR": 0.9}},
	}
	sc := &scanner{io: ios, now: func() time.Time { return simNow }, retryMaxBackoff: time.Millisecond}
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
	// fault, failRegions and wrap break the simulator.
	fault       func(service, op, region string) (int, string)
	failRegions []string
	wrap        func(http.Handler) http.Handler
	// scopeFailed are the regions whose listing fails; metricsFailed those
	// whose CloudWatch fails.
	scopeFailed, metricsFailed []string
	// reason is a pattern the warning's reason matches.
	reason string
}

// cloudWatchIn answers the CloudWatch calls op ("" for all) in region with
// status and code.
func cloudWatchIn(region, op string, status int, code string) func(string, string, string) (int, string) {
	return func(service, o, r string) (int, string) {
		if service == "monitoring" && r == region && (op == "" || o == op) {
			return status, code
		}
		return 0, ""
	}
}

// dropCloudWatch closes the connection of every CloudWatch request signed
// for region without an answer, as a dead load balancer or a reset does.
func dropCloudWatch(region string) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if auth := r.Header.Get("Authorization"); strings.Contains(auth, "/"+region+"/monitoring/") {
				if hj, ok := w.(http.Hijacker); ok {
					if conn, _, err := hj.Hijack(); err == nil {
						_ = conn.Close()
						return
					}
				}
			}
			next.ServeHTTP(w, r)
		})
	}
}

var failures = []failure{
	{name: "region outage, 5xx after retries", failRegions: []string{"eu-west-1"}, scopeFailed: []string{"eu-west-1"}, reason: `(?i)500|internal|outage|retry`},
	{name: "EC2 access denied in one region", fault: func(service, op, r string) (int, string) {
		if service == "ec2" && op == "DescribeInstances" && r == "us-west-2" {
			return 403, "UnauthorizedOperation"
		}
		return 0, ""
	}, scopeFailed: []string{"us-west-2"}, reason: `(?i)permission denied.*docs/iam`},
	{name: "GetMetricData 500 after retries", fault: cloudWatchIn("us-east-1", "GetMetricData", 500, "InternalFailure"), metricsFailed: []string{"us-east-1"}, reason: `(?i)500|InternalFailure|retry`},
	{name: "every CloudWatch call 503", fault: cloudWatchIn("eu-west-1", "", 503, "ServiceUnavailable"), metricsFailed: []string{"eu-west-1"}, reason: `(?i)503|unavailable|retry`},
	{name: "GetMetricData access denied", fault: cloudWatchIn("us-west-2", "GetMetricData", 400, "AccessDenied"), metricsFailed: []string{"us-west-2"}, reason: `(?i)permission denied`},
	{name: "ListMetrics access denied", fault: cloudWatchIn("us-east-1", "ListMetrics", 400, "AccessDeniedException"), metricsFailed: []string{"us-east-1"}, reason: `(?i)permission denied`},
	{name: "CloudWatch throttling exhausted", fault: cloudWatchIn("us-east-1", "", 400, "Throttling"), metricsFailed: []string{"us-east-1"}, reason: `(?i)throttl|retry`},
	{name: "CloudWatch connection dropped", wrap: dropCloudWatch("us-west-2"), metricsFailed: []string{"us-west-2"}, reason: `(?i)EOF|reset|closed|connection|retry`},
	{name: "region outage and CloudWatch denied elsewhere", failRegions: []string{"eu-west-1"}, fault: cloudWatchIn("us-east-1", "", 400, "AccessDeniedException"),
		scopeFailed: []string{"eu-west-1"}, metricsFailed: []string{"us-east-1"}, reason: `(?i)500|internal|permission denied`},
}

// noUtilAdvice are the kinds that rest on utilization.
var noUtilAdvice = map[string]bool{"idle-stop": true, "schedule": true, "rightsize": true, "quantize": true, "share": true}

// TestScanFailuresAreInTheReport: against the AWS simulator, each way a
// region or CloudWatch fails is a warning inside every format of the report
// with its scope and reason, exit 3; a CloudWatch failure keeps the region's
// instances, priced, utilization unknown, with no advice that rests on use.
func TestScanFailuresAreInTheReport(t *testing.T) {
	baseline := startFaultySim(t, nil, nil, nil)
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

	cases := failures
	if testing.Short() {
		cases = cases[:3] // about 3 s each
	}
	for _, fc := range cases {
		t.Run(fc.name, func(t *testing.T) {
			s := startFaultySim(t, fc.fault, fc.failRegions, fc.wrap)
			start := time.Now()
			js := s.run(t, "", "analyze", "--provider", "aws", "-o", "json")
			if d := time.Since(start); d > 30*time.Second {
				t.Errorf("the failing scan took %s: retries are not fast in tests", d)
			}
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
				if !ok || w.Code != fleet.ScanMetricsFailed || w.Scope.Source != "cloudwatch" {
					t.Errorf("%s: no metrics-failed cloudwatch warning: %+v", r, ws)
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
						t.Errorf("%s of %s (CloudWatch failed) is missing: the inventory was thrown away", id, r)
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

// denyAssumedDescribeRegions answers DescribeRegions signed with credentials
// AssumeRole issued (ASIA… keys) with EC2's UnauthorizedOperation, and the
// base account's too when all is set.
func denyAssumedDescribeRegions(all bool) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			assumed := strings.Contains(r.Header.Get("Authorization"), "Credential=ASIA")
			if strings.Contains(string(body), "Action=DescribeRegions") && (assumed || all) {
				w.Header().Set("Content-Type", "text/xml;charset=UTF-8")
				w.WriteHeader(http.StatusForbidden)
				_, _ = io.WriteString(w, `<?xml version="1.0" encoding="UTF-8"?>`+"\n"+
					`<Response><Errors><Error><Code>UnauthorizedOperation</Code><Message>You are not authorized to perform this operation.</Message></Error></Errors><RequestID>x</RequestID></Response>`)
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

// TestAccountFailureIsAWarning: with several accounts, one whose regions
// cannot be listed is a scope-failed warning naming the account (no region),
// and the other account's instances are reported; exit 3. When no account
// can be listed the scan fails as a whole (exit 4 for a permission).
func TestAccountFailureIsAWarning(t *testing.T) {
	const role = "arn:aws:iam::444455556666:role/gpufinops-read"
	s := startFaultySim(t, nil, nil, denyAssumedDescribeRegions(false))
	for _, format := range []string{"json", "table", "markdown", "html", "csv"} {
		res := s.run(t, "", "analyze", "--provider", "aws", "--role-arn", role, "-o", format)
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

	all := startFaultySim(t, nil, nil, denyAssumedDescribeRegions(true))
	res := all.run(t, "", "analyze", "--provider", "aws", "--role-arn", role, "-o", "json")
	if res.code != cmdutil.ExitCredentials || res.out != "" {
		t.Errorf("no account listed: exit %d (%v), stdout %d bytes", res.code, res.err, len(res.out))
	}
}
