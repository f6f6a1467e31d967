package cmdutil

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/providers"
)

// Two clouds registered for the tests (the real adapters are not linked):
// "aws" with an adapter, made-up flags and a lookback limit, "gcp" with only
// its data.
func init() {
	providers.Register(&providers.RegInfo{
		Name: "aws",
		New:  func(context.Context, providers.Options) (providers.Provider, error) { return nil, nil },
		Options: []providers.Option{
			{Name: "accounts", Flag: "account", Default: []string{}, Help: "accounts to scan"},
			{Name: "tenant", Flag: "tenant", Default: "", Help: "tenant", Validate: func(v any) error {
				if v.(string) == "bad" {
					return errors.New(`"bad" is not a tenant`)
				}
				return nil
			}},
		},
		Lookback: providers.Lookback{MaxDays: 30, Why: "the metrics store keeps 30 days"},
	})
	providers.Register(&providers.RegInfo{Name: "gcp"})
}

func parseScope(t *testing.T, args ...string) (*FleetFlags, error) {
	t.Helper()
	f := &FleetFlags{}
	cmd := &cobra.Command{Use: "x", RunE: func(*cobra.Command, []string) error { return f.Validate() }}
	AddFleetFlags(cmd, f)
	cmd.SetArgs(args)
	cmd.SilenceErrors, cmd.SilenceUsage = true, true
	return f, cmd.Execute()
}

func TestAdapterFlags(t *testing.T) {
	f, err := parseScope(t, "--provider", "aws", "--account", "a,b", "--tenant", "t1", "--region", "r1")
	if err != nil {
		t.Fatal(err)
	}
	if got := f.Adapter.Values("aws"); !reflect.DeepEqual(got, providers.Values{"accounts": []string{"a", "b"}, "tenant": "t1"}) {
		t.Errorf("values %v", got)
	}
	if got := f.Adapter.Values("gcp"); len(got) != 0 {
		t.Errorf("gcp values %v", got)
	}
	f, err = parseScope(t, "--provider", "aws")
	if err != nil || len(f.Adapter.Values("aws")) != 0 || len(f.Adapter.Given()) != 0 {
		t.Errorf("no flags given: %v %v", err, f.Adapter.Given())
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "give a fleet: --fleet FILE, --demo or --provider aws"},
		{[]string{"--demo", "--tenant", "x"}, "--tenant needs --provider"},
		{[]string{"--demo", "--region", "us-east-1"}, "--region needs --provider"},
		{[]string{"--demo", "--region", "us-east-1", "--tenant", "x"}, "--region, --tenant need --provider"},
		{[]string{"--provider", "gcp", "--account", "a"}, "--account is a flag of aws, which --provider does not name"},
		{[]string{"--provider", "oracle"}, `--provider: "oracle" is not one of aws, azure, gcp`},
		{[]string{"--provider", "aws", "--lookback-days", "31"}, "--lookback-days: 31 is outside 1–30 (the metrics store keeps 30 days)"},
		{[]string{"--demo", "--lookback-days", "456"}, "--lookback-days: 456 is outside 1–455"},
		{[]string{"--provider", "aws", "--tenant", "bad"}, `--tenant: "bad" is not a tenant`},
	} {
		if _, err := parseScope(t, tc.args...); err == nil || err.Error() != tc.want {
			t.Errorf("%v: %v, want %q", tc.args, err, tc.want)
		}
	}
	if _, err := parseScope(t, "--demo", "--lookback-days", "200"); err != nil {
		t.Errorf("a file has no adapter limit: %v", err)
	}
}

func TestProviderCompletionAndHelp(t *testing.T) {
	f := &FleetFlags{}
	cmd := &cobra.Command{Use: "x"}
	AddScopeFlags(cmd, f, "scan")
	if h := cmd.Flags().Lookup("provider").Usage; h != "clouds to scan: aws" {
		t.Errorf("help %q", h)
	}
	if h := cmd.Flags().Lookup("account").Usage; !strings.Contains(h, "aws: accounts to scan") {
		t.Errorf("help %q", h)
	}
	comp, ok := cmd.GetFlagCompletionFunc("provider")
	if !ok {
		t.Fatal("no completion")
	}
	got, _ := comp(cmd, nil, "")
	if !reflect.DeepEqual(got, []string{string(fleet.AWS)}) {
		t.Errorf("completion %v: only clouds with an adapter", got)
	}
}
