package root

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/gpufinops/gpufinops/pkg/cmdutil"
	"github.com/gpufinops/gpufinops/pkg/config"
	"github.com/gpufinops/gpufinops/providers"
)

func TestHumanize(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"if any flags in the group [fleet demo provider] are set none of the others can be; [demo fleet] were all set",
			"--demo and --fleet cannot be used together: give only one of --fleet, --demo or --provider"},
		{"if any flags in the group [a b c] are set none of the others can be; [a b c] were all set",
			"--a, --b and --c cannot be used together: give only one of --a, --b or --c"},
		{"if any flags in the group [user password] are set they must all be set; missing [password]",
			"--user and --password go together: add --password"},
		{"at least one of the flags in the group [fleet demo] is required", "give one of --fleet or --demo"},
		{"something else", "something else"},
	} {
		got := humanize(&cmdutil.FlagError{Err: errors.New(tc.in)})
		if got.Error() != tc.want {
			t.Errorf("humanize(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if cmdutil.ExitCodeFor(got) != cmdutil.ExitUsage {
			t.Errorf("%q: exit code %d", tc.in, cmdutil.ExitCodeFor(got))
		}
	}
}

// Every cobra flag group of every command reads in plain words.
func TestNoRawCobraGroupText(t *testing.T) {
	f, _, _ := testFactory()
	type group struct {
		path  []string
		flags []string
	}
	var groups []group
	seen := map[string]bool{}
	for _, c := range allCommands(NewCmdRoot(f)) {
		c.Flags().VisitAll(func(fl *pflagFlag) {
			for _, g := range fl.Annotations["cobra_annotation_mutually_exclusive"] {
				id := c.CommandPath() + "|" + g
				if seen[id] {
					continue
				}
				seen[id] = true
				var flags []string
				for _, name := range strings.Fields(g)[:2] {
					arg := "--" + name
					if c.Flags().Lookup(name).Value.Type() != "bool" {
						arg += "=x"
					}
					flags = append(flags, arg)
				}
				groups = append(groups, group{strings.Fields(c.CommandPath())[1:], flags})
			}
		})
	}
	if len(groups) == 0 {
		t.Fatal("no mutually exclusive flag groups found; the test needs one")
	}
	// Commands with positional arguments get valid ones, so that the flag
	// groups are what fails.
	positional := map[string][]string{"diff": {"old.json", "new.json"}, "iam-policy": {"aws"}, "report merge": {"part.json"}}
	for _, g := range groups {
		args := append(append(append([]string{}, g.path...), positional[strings.Join(g.path, " ")]...), g.flags...)
		f, _, errOut := testFactory()
		if code := Run(context.Background(), f, args); code != cmdutil.ExitUsage {
			t.Errorf("%v: exit code %d", args, code)
		}
		if s := errOut.String(); strings.Contains(s, "if any flags in the group") || !strings.Contains(s, "cannot be used together") {
			t.Errorf("%v: %s", args, s)
		}
	}
}

func TestUnknownVariables(t *testing.T) {
	var w bytes.Buffer
	warnUnknownVariables(&w, []string{
		"HOME=/root",
		"GPUFINOPS_POLCY_IDLE_GPU_PERCENT=5",
		"GPUFINOPS_POLICY_IDLE_GPU_PERCENT=5",
		"GPUFINOPS_REPORT_EXCHANGE_RATES_EUR=0.9",
		"GPUFINOPS_DEBUG=1",
		"GPUFINOPS_AWS_REGIONS=us-east-1",
		"GPUFINOPS_PROVIDERS_AWS_CONCURRENCY=4",
		"GPUFINOPS_WHATEVER=1",
	})
	got := w.String()
	for _, want := range []string{
		"gpufinops: warning: GPUFINOPS_POLCY_IDLE_GPU_PERCENT is not a variable gpufinops reads, so it is ignored; did you mean GPUFINOPS_POLICY_IDLE_GPU_PERCENT? (see 'gpufinops help environment')\n",
		"gpufinops: warning: GPUFINOPS_WHATEVER is not a variable gpufinops reads, so it is ignored (see 'gpufinops help environment')\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("warnings\n%s\nlack\n%s", got, want)
		}
	}
	if n := strings.Count(got, "\n"); n != 2 {
		t.Errorf("%d warnings, want 2:\n%s", n, got)
	}
}

func TestRunWarnsOfUnknownVariables(t *testing.T) {
	old := environ
	environ = func() []string { return []string{"GPUFINOPS_PROVIDERS_AWS_REGIOSN=us-east-1"} }
	defer func() { environ = old }()
	f, _, errOut := testFactory()
	if code := Run(context.Background(), f, []string{"help", "exit-codes"}); code != 0 {
		t.Fatalf("exit code %d", code)
	}
	if !strings.Contains(errOut.String(), "did you mean GPUFINOPS_PROVIDERS_AWS_REGIONS?") {
		t.Errorf("stderr: %q", errOut.String())
	}
}

// TestEnvironmentHelpListsEverySetting checks that help environment lists
// every configuration key and every GPUFINOPS_ variable that the code
// (an error message, a warning, a default) names, and every key a message
// tells the user to set: the list is made from the configuration's schema
// and this test finds what it could miss.
func TestEnvironmentHelpListsEverySetting(t *testing.T) {
	help := environmentHelp(200)
	for _, k := range config.Keys() {
		if !strings.Contains(help, " "+config.EnvVar(k)+" ") || !strings.Contains(help, " "+k+"\n") {
			t.Errorf("help environment lacks key %s (%s)", k, config.EnvVar(k))
		}
	}
	vars := regexp.MustCompile(`GPUFINOPS_[A-Z0-9_]*[A-Z0-9]`)
	setKey := regexp.MustCompile(`\b[Ss]et ([a-z_]+(?:\.[a-z0-9_]+)+)`)
	top := map[string]bool{}
	for _, k := range config.Keys() {
		top[strings.Split(k, ".")[0]] = true
	}
	seenVars, seenKeys := 0, 0
	err := filepath.WalkDir("../../..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && path != "../../.." {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, name := range vars.FindAllString(string(src), -1) {
			if name == config.EnvPrefix {
				continue
			}
			seenVars++
			if ok, _ := knownVariable(name); !ok {
				// A prefix written out to build names (e.g. "GPUFINOPS_POLICY_")
				// is fine when some listed variable starts with it.
				if strings.HasSuffix(name, "_") || strings.Contains(help, name+"_") {
					continue
				}
				t.Errorf("%s names %s, which help environment does not list", path, name)
			}
		}
		for _, m := range setKey.FindAllStringSubmatch(string(src), -1) {
			key := strings.TrimSuffix(m[1], ".")
			if !top[strings.Split(key, ".")[0]] {
				continue // a fleet field, not a setting
			}
			seenKeys++
			if !strings.Contains(help, key) {
				t.Errorf("%s tells the user to set %s, which help environment does not list", path, key)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if seenVars < 5 || seenKeys < 2 {
		t.Fatalf("found only %d variables and %d keys in the source; is the walk reading it?", seenVars, seenKeys)
	}
}

func TestCredentialsFix(t *testing.T) {
	sdk := errors.New("operation error STS: GetCallerIdentity, get identity: get credentials: failed to refresh cached credentials, no EC2 IMDS role found")
	err := &cmdutil.CredentialsError{Err: fmt.Errorf("aws default: %w",
		providers.WithFix(fmt.Errorf("%w: no AWS credentials found", providers.ErrCredentials), "Run aws configure.", sdk))}
	var w bytes.Buffer
	printFix(&w, err, false)
	if w.String() != "Run aws configure.\n" {
		t.Errorf("got %q", w.String())
	}
	w.Reset()
	printFix(&w, err, true)
	if !strings.Contains(w.String(), "detail: operation error STS") {
		t.Errorf("debug: got %q", w.String())
	}
	if strings.Contains(err.Error(), "IMDS") {
		t.Errorf("the message carries the SDK's chain: %s", err)
	}
}

type pflagFlag = pflag.Flag

func allCommands(c *cobra.Command) []*cobra.Command {
	out := []*cobra.Command{c}
	for _, s := range c.Commands() {
		out = append(out, allCommands(s)...)
	}
	return out
}
