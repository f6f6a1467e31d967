package tags

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/internal/purchasetest"
	"github.com/gpufinops/gpufinops/pkg/cmd/factory"
	"github.com/gpufinops/gpufinops/pkg/cmdutil"
	"github.com/gpufinops/gpufinops/pkg/cmdutil/cmdtest"
	"github.com/gpufinops/gpufinops/pkg/config"
	"github.com/gpufinops/gpufinops/pkg/governance"
	"github.com/gpufinops/gpufinops/pkg/iostreams"
	"github.com/gpufinops/gpufinops/pkg/recommend"
	"github.com/gpufinops/gpufinops/pkg/testutil"
	"github.com/gpufinops/gpufinops/pricing"
	"github.com/gpufinops/gpufinops/pricing/catalog"
	"github.com/gpufinops/gpufinops/providers/file"
)

func TestNewCmdAudit(t *testing.T) {
	def := governance.DefaultPolicy().RequiredTags
	for _, tc := range []struct {
		args      string
		want      AuditOptions
		wantErr   string
		flagError bool
	}{
		{args: "--demo", want: AuditOptions{Input: cmdutil.FleetFlags{Demo: true}, Format: "table"}},
		{args: "--fleet f.yaml -o json", want: AuditOptions{Input: cmdutil.FleetFlags{Path: "f.yaml"}, Format: "json"}},
		{args: "-f - -o csv --require Team,Project", want: AuditOptions{Input: cmdutil.FleetFlags{Path: "-"}, Format: "csv", Require: []string{"Team", "Project"}}},
		{args: "--demo --require " + strings.Join(def, ","), want: AuditOptions{Input: cmdutil.FleetFlags{Demo: true}, Format: "table", Require: def}},
		{args: "", wantErr: "give a fleet: --fleet FILE, --demo or --provider aws", flagError: true},
		{args: "--demo --require Team,,Project", wantErr: "--require: an empty tag name; give keys separated by commas, e.g. Team,Project", flagError: true},
		{args: "--demo --require Team,team", wantErr: "--require: Team and team are the same tag", flagError: true},
		{args: "--demo -o yaml", wantErr: `"yaml" is not one of table, json, csv`},
		{args: "--demo --fleet f.yaml", wantErr: "if any flags in the group [fleet demo provider] are set none of the others can be"},
		{args: "--demo extra", wantErr: `unknown command "extra"`},
	} {
		t.Run(tc.args, func(t *testing.T) {
			got, err := cmdtest.Parse(t, NewCmdAudit, strings.Fields(tc.args))
			if cmdtest.CheckErr(t, err, tc.wantErr) {
				var fe *cmdutil.FlagError
				if tc.flagError && !errors.As(err, &fe) {
					t.Errorf("error is %T, want a *cmdutil.FlagError", err)
				}
				if got != nil {
					t.Error("run function called despite the error")
				}
				return
			}
			if (got.Input.Path != tc.want.Input.Path || got.Input.Demo != tc.want.Input.Demo) || got.Format != tc.want.Format {
				t.Errorf("got input %+v format %q", got.Input, got.Format)
			}
			if d := cmp.Diff(tc.want.Require, got.Require); d != "" {
				t.Errorf("require (-want +got):\n%s", d)
			}
			if got.IO == nil {
				t.Error("options lack the factory's streams")
			}
		})
	}
}

func TestNewCmdTags(t *testing.T) {
	ios, _, out, _ := iostreams.Test()
	cmd := NewCmdTags(&cmdutil.Factory{IOStreams: ios})
	cmd.SetArgs(nil)
	cmd.SetOut(out)
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "audit") {
		t.Errorf("help does not list audit:\n%s", out)
	}
	if c, _, err := cmd.Find([]string{"audit"}); err != nil || c.Name() != "audit" {
		t.Errorf("audit not found: %v", err)
	}
}

// demoOptions runs against the real embedded catalog and demo fleet.
func demoOptions(t *testing.T, format string, tty bool) (*AuditOptions, *bytes.Buffer, *bytes.Buffer) {
	t.Helper()
	ios, _, out, errOut := iostreams.Test()
	ios.SetStdoutTTY(tty)
	return &AuditOptions{
		IO: ios,
		Config: func() (*config.Config, error) {
			return &config.Config{Policy: recommend.DefaultPolicy().WithPurchases(purchasetest.Purchases())}, nil
		},
		Catalog: catalog.Embedded,
		Fleet:   factory.FileFleet(ios),
		Now:     testutil.Now,
		Input:   cmdutil.FleetFlags{Demo: true},
		Format:  format,
	}, out, errOut
}

func TestAuditRunDemoGolden(t *testing.T) {
	for _, tc := range []struct {
		name, format, ext string
		tty               bool
	}{
		{"table", "table", ".txt", false},
		{"table-tty", "table", ".txt", true},
		{"json", "json", ".json", false},
		{"csv", "csv", ".csv", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts, out, _ := demoOptions(t, tc.format, tc.tty)
			if err := auditRun(opts); err != nil {
				t.Fatal(err)
			}
			testutil.AssertGolden(t, "testdata/demo-"+tc.name+tc.ext, out.Bytes())
		})
	}
}

// TestAuditDemoAddsUp checks the demo's allocation against the engine's plan:
// every dimension sums to the fleet's current and optimized cost, exactly.
func TestAuditDemoAddsUp(t *testing.T) {
	opts, out, _ := demoOptions(t, "json", false)
	if err := auditRun(opts); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		governance.Report
		GeneratedAt string `json:"generatedAt"`
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.GeneratedAt != "2026-11-30T12:00:00Z" {
		t.Errorf("generatedAt %s, want the fixed clock", doc.GeneratedAt)
	}
	fl, err := file.Demo()
	if err != nil {
		t.Fatal(err)
	}
	cat, err := catalog.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	if err := pricing.Complete(fl, cat); err != nil {
		t.Fatal(err)
	}
	plan := recommend.Run(fl, cat, recommend.DefaultPolicy().WithPurchases(purchasetest.Purchases()))
	al := doc.Allocation
	if !al.MonthlyCost.Equal(plan.Summary.CurrentMonthly) || !al.OptimizedMonthlyCost.Equal(plan.Summary.OptimizedMonthly) {
		t.Errorf("allocation %s → %s, plan %s → %s", al.MonthlyCost, al.OptimizedMonthlyCost, plan.Summary.CurrentMonthly, plan.Summary.OptimizedMonthly)
	}
	if !doc.Audit.MonthlyCost.Equal(plan.Summary.CurrentMonthly) {
		t.Errorf("audit spend %s, plan %s", doc.Audit.MonthlyCost, plan.Summary.CurrentMonthly)
	}
	for name, buckets := range map[string][]governance.Bucket{"team": al.ByTeam, "project": al.ByProject, "workload type": al.ByWorkloadType, "environment": al.ByEnvironment, "provider": al.ByProvider} {
		cur, opt, n := decimal.Zero, decimal.Zero, 0
		for _, b := range buckets {
			cur, opt, n = cur.Add(b.MonthlyCost.Decimal), opt.Add(b.OptimizedMonthlyCost.Decimal), n+b.Instances
		}
		if !cur.Equal(plan.Summary.CurrentMonthly) || !opt.Equal(plan.Summary.OptimizedMonthly) || n != len(fl.Instances) {
			t.Errorf("by %s: %s → %s over %d instances; plan %s → %s over %d", name, cur, opt, n,
				plan.Summary.CurrentMonthly, plan.Summary.OptimizedMonthly, len(fl.Instances))
		}
	}
	// The demo's two tagless instances are the untagged team's spend.
	var untagged governance.Bucket
	for _, b := range al.ByTeam {
		if b.Key == governance.Untagged {
			untagged = b
		}
	}
	if untagged.Instances != 2 {
		t.Errorf("untagged team: %+v", untagged)
	}
	// Hand-checked figures of the demo's first inference endpoint: $884.76 a
	// month (1.212 × 730), 300 tokens/s × 3600 × 730 = 788.4M tokens.
	for _, im := range doc.Metrics.Instances {
		if im.ResourceID != "infer-g5-1" {
			continue
		}
		if im.MonthlyCost.StringFixed(2) != "884.76" || im.CostPerMillionTokens.StringFixed(4) != "1.1222" ||
			im.CostPerThousandRequests.StringFixed(4) != "0.1683" || im.CostPerBusyGPUHour.StringFixed(2) != "3.46" {
			t.Errorf("infer-g5-1: %+v", im)
		}
	}
	// The two p4d nodes are one run of 520 hours each.
	if len(doc.Metrics.TrainingRuns) != 2 || doc.Metrics.TrainingRuns[0].ID != "nlp-pretrain-2026-11" || len(doc.Metrics.TrainingRuns[0].Instances) != 2 {
		t.Errorf("training runs: %+v", doc.Metrics.TrainingRuns)
	}
}

func TestAuditRunRequire(t *testing.T) {
	opts, out, _ := demoOptions(t, "csv", false)
	opts.Require = []string{"Team", "Project"}
	if err := auditRun(opts); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	// 27 items: the 23 VMs and the 4 managed AI items, which all carry
	// Team and Project (the Vertex deployment as GCP labels team, project).
	if len(lines) != 28 {
		t.Fatalf("%d lines, want a header and 27 items", len(lines))
	}
	missing := 0
	for _, l := range lines[1:] {
		f := strings.Split(l, ",")
		if f[10] != "" {
			missing++
			if f[10] != "Team;Project" || f[5] != governance.Untagged {
				t.Errorf("row %s", l)
			}
		}
		// Environment values are still checked while present.
		if f[8] == "prod" && f[11] != "Environment" {
			t.Errorf("prod not flagged: %s", l)
		}
	}
	if missing != 2 {
		t.Errorf("%d instances miss Team or Project, want the 2 tagless ones", missing)
	}
}

func TestAuditRunCaseAndLabels(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "fleet.yaml")
	doc := `apiVersion: gpufinops/v1
kind: Fleet
instances:
  - id: aws-lower
    provider: aws
    region: us-east-1
    instanceType: g5.xlarge
    tags: {team: search, Project: rank, Environment: production, WorkloadType: Inference, CostCenter: CC-7, AutoShutdown: "false"}
    workload: {type: inference, model: bge-reranker}
  - id: gcp-labels
    provider: gcp
    region: us-central1
    instanceType: g2-standard-4
    tags: {team: search, project: rank, environment: production, workload_type: inference, model_name: bge-reranker, cost_center: cc-7, auto_shutdown: "false"}
    workload: {type: inference, model: bge-reranker, tokensPerSecond: 100}
`
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	opts, out, _ := demoOptions(t, "json", false)
	opts.Input = cmdutil.FleetFlags{Path: path}
	if err := auditRun(opts); err != nil {
		t.Fatal(err)
	}
	var rep governance.Report
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	a := rep.Audit
	// AWS: team and production are case notes, ModelName is missing. GCP: fine.
	if a.CompliantCount != 1 || len(a.Violations) != 1 || a.Violations[0].ResourceID != "aws-lower" {
		t.Fatalf("%+v", a)
	}
	v := a.Violations[0]
	if d := cmp.Diff([]string{"Team", "Environment"}, v.CaseMismatch); d != "" {
		t.Errorf("case mismatches (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"ModelName"}, v.Missing); d != "" {
		t.Errorf("missing (-want +got):\n%s", d)
	}
	if !strings.HasPrefix(v.Action, "Add tag ModelName=bge-reranker; rename tag team to Team; write Environment as Production") {
		t.Errorf("action %q", v.Action)
	}
	if len(rep.Allocation.ByTeam) != 1 || rep.Allocation.ByTeam[0].Key != "search" || rep.Allocation.ByEnvironment[0].Key != "Production" {
		t.Errorf("allocation: %+v %+v", rep.Allocation.ByTeam, rep.Allocation.ByEnvironment)
	}
}

func TestAuditRunErrors(t *testing.T) {
	opts, _, _ := demoOptions(t, "table", false)
	opts.Input = cmdutil.FleetFlags{Path: filepath.Join(t.TempDir(), "missing.yaml")}
	err := auditRun(opts)
	var ie *cmdutil.InputError
	if err == nil || !errors.As(err, &ie) || strings.Contains(err.Error(), "\n") {
		t.Errorf("missing file: %v", err)
	}

	opts, _, _ = demoOptions(t, "table", false)
	opts.Require = []string{"Team", "team"}
	if err := auditRun(opts); err == nil || !errors.As(err, &ie) || err.Error() != `governance policy: requiredTags lists "Team" and "team", which are the same tag` {
		t.Errorf("bad policy: %v", err)
	}

	path := filepath.Join(t.TempDir(), "empty.yaml")
	if err := os.WriteFile(path, []byte("apiVersion: gpufinops/v1\nkind: Fleet\ninstances: []\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	opts, out, errOut := demoOptions(t, "table", false)
	opts.Input = cmdutil.FleetFlags{Path: path}
	if err := auditRun(opts); err != nil {
		t.Fatal(err)
	}
	if out.Len() != 0 || errOut.String() != path+" has no instances\n" {
		t.Errorf("stdout %q, stderr %q", out, errOut)
	}
}

// TestAuditFootnotesFollowTheReport: on a terminal, where stdout and stderr
// share the screen, the footnotes (stderr) come after the report, not
// before it; in a pipe there are none.
func TestAuditFootnotesFollowTheReport(t *testing.T) {
	for _, tty := range []bool{true, false} {
		opts, _, _ := demoOptions(t, "table", tty)
		var screen bytes.Buffer
		opts.IO.Out, opts.IO.ErrOut = &screen, &screen
		if err := auditRun(opts); err != nil {
			t.Fatal(err)
		}
		got := screen.String()
		head, note := strings.Index(got, "Tag audit of"), strings.Index(got, "Amounts are USD per month")
		last := strings.LastIndex(got, "Training runs")
		switch {
		case head != 0:
			t.Errorf("tty %v: the report does not come first:\n%s", tty, got)
		case tty && (note < 0 || note < last):
			t.Errorf("tty %v: the footnote is at %d, the report's last section at %d:\n%s", tty, note, last, got)
		case !tty && note >= 0:
			t.Errorf("footnotes in a pipe:\n%s", got)
		}
	}
}
