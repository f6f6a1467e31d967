// Package doctor implements `gpufinops doctor`: per provider, account and
// region, it checks the credentials, each permission the commands need
// (without changing anything) and how many GPU instances publish the metrics
// the engine reads, and says how to fix what is missing.
package doctor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"github.com/gpufinops/gpufinops/pkg/cmdutil"
	"github.com/gpufinops/gpufinops/pkg/config"
	"github.com/gpufinops/gpufinops/pkg/envelope"
	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pkg/iostreams"
	"github.com/gpufinops/gpufinops/pkg/tableprinter"
	"github.com/gpufinops/gpufinops/providers"
)

// DoctorOptions are the inputs of `gpufinops doctor`.
type DoctorOptions struct {
	IO        *iostreams.IOStreams
	Config    func() (*config.Config, error)
	Providers func(ctx context.Context, in cmdutil.FleetFlags, cfg *config.Config) ([]providers.Provider, error)
	// Ctx is the command's context; nil means context.Background().
	Ctx context.Context
	// Input names the clouds, regions, profiles and roles to check.
	Input cmdutil.FleetFlags
	// Output is table or json.
	Output string
	// Filter is the --jq or --template filter of the JSON output; nil prints it whole.
	Filter cmdutil.Filter
}

// Kind and SchemaVersion head the JSON document.
const (
	Kind          = "DoctorReport"
	SchemaVersion = "1.0"
)

// Report is the `gpufinops doctor -o json` document.
type Report struct {
	envelope.Header
	// Scopes are the checked scopes in order: per provider, each account
	// (account-wide checks, no region), then its regions.
	Scopes []ScopeResult `json:"scopes"`
	// Summary counts the checks by status.
	Summary Summary `json:"summary"`
}

// ScopeResult is the checks of one scope.
type ScopeResult struct {
	Scope  providers.Scope   `json:"scope"`
	Checks []providers.Check `json:"checks"`
}

// Summary counts checks by status.
type Summary struct {
	OK      int `json:"ok"`
	Missing int `json:"missing"`
	Warn    int `json:"warn"`
	Error   int `json:"error"`
}

// NewCmdDoctor builds the command; runF replaces the run function in tests.
func NewCmdDoctor(f *cmdutil.Factory, runF func(*DoctorOptions) error) *cobra.Command {
	opts := &DoctorOptions{IO: f.IOStreams, Config: f.Config, Providers: f.Providers}
	var output *cmdutil.Output
	cmd := &cobra.Command{
		Use:   "doctor [--provider CLOUD] [--region R]",
		Short: "Check credentials, permissions and GPU metric coverage",
		Long: `Check, per provider, account and region, that gpufinops can do its job:
the credentials, each permission the commands need (without changing
anything), and how many running GPU instances publish the GPU metrics the
engine reads, with how to fix what is missing.` + cloudChecks() + `

Exit codes: 0 all good (metric gaps are warnings), 3 a scope could not be
reached, 4 credentials or a permission missing (see 'gpufinops iam-policy').`,
		Example: `  $ gpufinops doctor
  $ gpufinops doctor --provider aws --region us-east-1,eu-west-1 -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Output, opts.Filter = output.Format(), output.Filter
			opts.Ctx = cmd.Context()
			if len(opts.Input.Providers) == 0 {
				opts.Input.Providers = defaultClouds()
				if len(opts.Input.Providers) == 0 {
					return cmdutil.FlagErrorf("give --provider: this build checks no cloud by default")
				}
			}
			if err := opts.Input.ValidateConnectTimeout(); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return doctorRun(opts)
		},
	}
	cmdutil.AddScopeFlags(cmd, &opts.Input, "check")
	cmdutil.AddConnectTimeoutFlag(cmd, &opts.Input)
	output = cmdutil.AddOutputFlags(cmd, cmdutil.FormatTable, cmdutil.FormatJSON)
	return cmd
}

func doctorRun(opts *DoctorOptions) error {
	ctx := opts.Ctx
	if ctx == nil {
		ctx = context.Background()
	}
	loaded, err := opts.Config()
	if err != nil {
		return err
	}
	cfg := *loaded
	opts.Input.ApplyTimeouts(&cfg)
	rep, err := Run(ctx, opts.Providers, opts.Input, &cfg)
	if err != nil {
		return err
	}
	werr := cmdutil.Print(ctx, opts.IO.Out, opts.Output, opts.Filter, rep, cmdutil.Printers{
		cmdutil.FormatTable: func(io.Writer) error { return write(opts, rep) },
	})
	if werr != nil {
		return werr
	}
	return rep.Err()
}

// Run checks every provider the flags name. Credentials that cannot be loaded
// at all become a missing credentials check of the provider.
func Run(ctx context.Context, build func(context.Context, cmdutil.FleetFlags, *config.Config) ([]providers.Provider, error), in cmdutil.FleetFlags, cfg *config.Config) (*Report, error) {
	rep := &Report{Header: envelope.New(Kind, SchemaVersion), Scopes: []ScopeResult{}}
	for _, name := range in.Providers {
		one := in
		one.Providers = []string{name}
		provs, err := build(ctx, one, cfg)
		if err != nil {
			var credErr *cmdutil.CredentialsError
			if !errors.As(err, &credErr) {
				return nil, err
			}
			fix := "configure the credentials of " + name + " (see 'gpufinops help environment')"
			if ri, ok := providers.Find(fleet.Provider(name)); ok && ri.Doctor.CredentialsFix != "" {
				fix = ri.Doctor.CredentialsFix
			}
			rep.add(ScopeResult{Scope: providers.Scope{Provider: fleet.Provider(name)}, Checks: []providers.Check{{
				Name: "credentials", Status: providers.CheckMissing, Detail: err.Error(), Fix: fix,
			}}})
			continue
		}
		for _, p := range provs {
			rep.check(ctx, p)
		}
	}
	return rep, nil
}

// check runs every check of one provider: the account-wide ones, then per
// region the permissions and the metric coverage, regions concurrently.
func (rep *Report) check(ctx context.Context, p providers.Provider) {
	d, ok := p.(providers.Doctor)
	if !ok {
		rep.add(ScopeResult{Scope: providers.Scope{Provider: p.Name()}, Checks: []providers.Check{{
			Name: "doctor", Status: providers.CheckWarn, Detail: "this adapter has no checks yet",
		}}})
		return
	}
	scopes, err := p.Scopes(ctx)
	if err != nil {
		st := providers.CheckError
		if errors.Is(err, providers.ErrCredentials) || errors.Is(err, providers.ErrPermission) {
			st = providers.CheckMissing
		}
		rep.add(ScopeResult{Scope: providers.Scope{Provider: p.Name()}, Checks: []providers.Check{{
			Name: "scopes", Status: st, Detail: firstLine(providers.Brief(err)), Fix: "gpufinops iam-policy " + string(p.Name()),
		}}})
		return
	}
	var all []providers.Scope
	seen := map[string]bool{}
	for _, s := range scopes {
		acct := providers.Scope{Provider: s.Provider, Account: s.Account, Profile: s.Profile}
		if !seen[acct.Profile+"|"+acct.Account] {
			seen[acct.Profile+"|"+acct.Account] = true
			all = append(all, acct)
		}
	}
	all = append(all, scopes...)
	// Accounts first, then regions, each in a stable order.
	sort.SliceStable(all, func(i, j int) bool {
		a, b := all[i], all[j]
		if a.Account != b.Account {
			return a.Account < b.Account
		}
		if a.Profile != b.Profile {
			return a.Profile < b.Profile
		}
		return a.Region < b.Region
	})
	results := make([]ScopeResult, len(all))
	sem := make(chan struct{}, 8)
	var wg sync.WaitGroup
	for i, s := range all {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			checks := d.CheckPermissions(ctx, s)
			if s.Region != "" {
				checks = append(checks, d.CheckCoverage(ctx, s)...)
			}
			results[i] = ScopeResult{Scope: s, Checks: checks}
		}()
	}
	wg.Wait()
	for _, r := range results {
		rep.add(r)
	}
}

// cloudChecks are the registered clouds' own words on what doctor checks.
func cloudChecks() string {
	var b strings.Builder
	for _, ri := range providers.Registered() {
		if ri.CanScan() && ri.Doctor.Checks != "" {
			fmt.Fprintf(&b, "\n\n%s: %s", ri.Name, ri.Doctor.Checks)
		}
	}
	return b.String()
}

// defaultClouds are the registered clouds doctor checks without --provider.
func defaultClouds() []string {
	var out []string
	for _, ri := range providers.Registered() {
		if ri.CanScan() && ri.Doctor.Default {
			out = append(out, string(ri.Name))
		}
	}
	return out
}

func (rep *Report) add(r ScopeResult) {
	for _, c := range r.Checks {
		switch c.Status {
		case providers.CheckOK:
			rep.Summary.OK++
		case providers.CheckMissing:
			rep.Summary.Missing++
		case providers.CheckWarn:
			rep.Summary.Warn++
		default:
			rep.Summary.Error++
		}
	}
	rep.Scopes = append(rep.Scopes, r)
}

// Err is the run's outcome: a CredentialsError (exit code 4) when a
// credential or permission is missing, a PartialError (exit code 3) when a
// scope could not be checked, else nil. Warnings do not fail it.
func (rep *Report) Err() error {
	var missing, failed []error
	var clouds []string
	for _, r := range rep.Scopes {
		for _, c := range r.Checks {
			what := c.Action
			if what == "" {
				what = c.Name
			}
			switch c.Status {
			case providers.CheckMissing:
				missing = append(missing, fmt.Errorf("%s %s", scopeLabel(r.Scope), what))
				if !slices.Contains(clouds, string(r.Scope.Provider)) {
					clouds = append(clouds, string(r.Scope.Provider))
				}
			case providers.CheckError:
				failed = append(failed, fmt.Errorf("%s %s: %s", scopeLabel(r.Scope), what, c.Detail))
			}
		}
	}
	if len(missing) > 0 {
		names := make([]string, len(missing))
		for i, e := range missing {
			names[i] = e.Error()
		}
		hints := make([]string, len(clouds))
		for i, c := range clouds {
			hints[i] = "gpufinops iam-policy " + c
		}
		return &cmdutil.CredentialsError{Err: fmt.Errorf("%d credential or permission check(s) failed: %s (%s)", len(missing), strings.Join(names, ", "), strings.Join(hints, "; "))}
	}
	if len(failed) > 0 {
		return &cmdutil.PartialError{Failures: failed}
	}
	return nil
}

// scopeLabel names a scope; an account scope ends in "(account)".
func scopeLabel(s providers.Scope) string {
	if s.Account == "" && s.Region == "" {
		return string(s.Provider)
	}
	if s.Region == "" {
		return s.String() + " (account)"
	}
	return s.String()
}

func firstLine(s string) string {
	first, _, _ := strings.Cut(s, "\n")
	return first
}

// write prints the checks as a table, then the fixes.
func write(opts *DoctorOptions, rep *Report) error {
	cs := opts.IO.ColorScheme()
	t := tableprinter.New(opts.IO.Out, opts.IO.IsStdoutTTY(), "scope", "check", "status", "detail")
	t.SetWidth(opts.IO.TerminalWidth())
	t.Key(0, 1, 2, 3)
	t.TruncateMiddle(0, 20)
	t.WrapColumn(1, 18)
	t.WrapColumn(3, 20)
	var statuses []providers.CheckStatus
	t.Style(func(row, col int, s string) string {
		if col != 2 {
			return s
		}
		switch statuses[row] {
		case providers.CheckOK:
			return cs.Green(s)
		case providers.CheckWarn:
			return cs.Yellow(s)
		}
		return cs.Red(s)
	})
	var fixes []string
	fixed := map[string]bool{}
	for _, r := range rep.Scopes {
		for _, c := range r.Checks {
			what := c.Action
			if what == "" {
				what = c.Name
			}
			if c.Method != "" {
				what += " (" + c.Method + ")"
			}
			statuses = append(statuses, c.Status)
			t.AddRow(scopeLabel(r.Scope), what, string(c.Status), firstLine(c.Detail))
			if c.Fix != "" && !fixed[c.Fix] {
				fixed[c.Fix] = true
				what := scopeLabel(r.Scope) + ": " + firstLine(c.Detail)
				if opts.IO.IsStdoutTTY() {
					what = tableprinter.Wrap(what, opts.IO.TerminalWidth())
				}
				fixes = append(fixes, what+"\n"+c.Fix)
			}
		}
	}
	if err := t.Render(); err != nil {
		return err
	}
	s := rep.Summary
	fmt.Fprintf(opts.IO.Out, "\n%d ok, %d missing, %d warnings, %d errors\n", s.OK, s.Missing, s.Warn, s.Error)
	for _, f := range fixes {
		fmt.Fprintf(opts.IO.Out, "\n%s\n", f)
	}
	return nil
}
