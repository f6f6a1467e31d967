package root

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/gpufinops/gpufinops/pkg/cmdutil"
	"github.com/gpufinops/gpufinops/pkg/config"
	"github.com/gpufinops/gpufinops/pkg/suggest"
)

type helpTopic struct {
	name, short string
	// long is the topic's text for a terminal of width columns.
	long func(width int) string
}

var helpTopics = []helpTopic{
	{
		name:  "environment",
		short: "Environment variables and configuration precedence",
		long:  environmentHelp,
	},
	{
		name:  "exit-codes",
		short: "Exit codes and what they mean",
		long: constant(`gpufinops exits with one of these codes. They are stable; scripts may rely on them.

  0  success
  1  an error not covered below, including an internal error: a bug in
     gpufinops (one line on stderr; GPUFINOPS_DEBUG=1 adds the stack), never
     reported as bad input
  2  usage error or invalid input: a bad flag, an unreadable or invalid fleet,
     config or report file (the message names the file, instance and field)
  3  partial results: some scope (a provider, region or account) or its metrics
     could not be read, now or in the scan that made a --fleet snapshot, or an
     instance type is known neither to the cloud nor to the catalog (its
     instances are kept, unpriced or without advice); the output for the rest
     was written, with the failures as warnings inside it
  4  missing or insufficient credentials or permissions
  5  a --fail-on gate tripped; the report was written first

Running out of memory is fatal in Go and cannot be turned into one of these
codes: the runtime prints "fatal error: out of memory" and exits 2. To make
that unlikely, gpufinops sets a soft memory limit (the garbage collector works
harder near it instead of growing): GPUFINOPS_MEMORY_LIMIT (e.g. 2GiB, or off),
else GOMEMLIMIT, else 90% of the container's (cgroup) memory limit.
`),
	},
}

func constant(s string) func(int) string { return func(int) string { return s } }

// environmentHelp lists the variables in two columns when they fit width,
// else each variable over its key.
func environmentHelp(width int) string {
	var b strings.Builder
	b.WriteString(`Settings are taken, highest first, from:

  1. command-line flags
  2. environment variables (GPUFINOPS_*)
  3. the configuration file: --config FILE, else
     $XDG_CONFIG_HOME/gpufinops/config.yaml (~/.config/gpufinops/config.yaml)
  4. built-in defaults (see docs/rules.md)

Every configuration key has an environment variable: upper-case it, replace
dots with underscores and prefix GPUFINOPS_. Lists take commas. An empty
variable counts as unset; surrounding spaces are ignored.

Every value is checked the same way wherever it comes from: a flag, a
variable or the file. NaN, Inf (Go reads "NaN", "Inf" and "+Infinity" as
numbers) and out-of-range numbers are refused with exit code 2 and one line
naming the flag, the variable or the file and key, and what is expected, e.g.

  environment GPUFINOPS_POLICY_IDLE_GPU_PERCENT: policy.idle.gpu_percent: NaN is not a finite number

Percentages are 0–100, fractions (discounts, coverage) 0–1, exchange rates
(report.exchange_rates.<CODE>, GPUFINOPS_REPORT_EXCHANGE_RATES_<CODE>)
0.000001–1000000, and every other number at most 1e9 in size; the limits
of each key are in docs/rules.md.

A GPUFINOPS_ variable that is none of those below is not read: each run warns
of it on stderr, with the names it is close to.

`)
	type pair struct{ name, key string }
	var keys []pair
	nameW, keyW := 0, 0
	for _, k := range config.Keys() {
		keys = append(keys, pair{config.EnvVar(k), k})
	}
	for _, v := range patternVariables {
		keys = append(keys, pair{v.name, v.key})
	}
	for _, p := range keys {
		nameW, keyW = max(nameW, len(p.name)), max(keyW, len(p.key))
	}
	for _, p := range keys {
		if 2+nameW+2+keyW <= width {
			fmt.Fprintf(&b, "  %-*s  %s\n", nameW, p.name, p.key)
		} else {
			fmt.Fprintf(&b, "  %s\n      %s\n", p.name, p.key)
		}
	}
	b.WriteString("\nOther variables:\n\n")
	for _, v := range otherVariables {
		fmt.Fprintf(&b, "  %-27s  %s\n", v.name, v.help)
	}
	return cmdutil.WrapText(b.String(), width)
}

func newHelpTopic(t helpTopic, width func() int) *cobra.Command {
	cmd := &cobra.Command{
		Use:     t.name,
		Short:   t.short,
		Long:    t.long(80),
		GroupID: "help",
		Hidden:  false,
		Args:    cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			_, err := fmt.Fprint(c.OutOrStdout(), cmdutil.WrapText(t.long(width()), width()))
			return err
		},
	}
	cmd.SetHelpFunc(func(c *cobra.Command, _ []string) {
		fmt.Fprint(c.OutOrStdout(), cmdutil.WrapText(t.long(width()), width()))
	})
	cmd.Annotations = map[string]string{"helpTopic": "true"}
	return cmd
}

// envVariable is a variable help environment lists besides the keys'.
type envVariable struct{ name, key, help string }

// patternVariables are keys whose last part is a name of the user's (a
// currency code): one variable per name.
var patternVariables = []envVariable{
	{name: config.EnvPrefix + "_REPORT_EXCHANGE_RATES_<CODE>", key: "report.exchange_rates.<CODE>"},
}

// otherVariables are read directly, not through the configuration.
var otherVariables = []envVariable{
	{name: "NO_COLOR", help: "disable colour in tables (any value)"},
	{name: DebugEnv, help: "print the stack of an internal error and the SDK's message behind a credentials error (any value)"},
	{name: MemoryLimitEnv, help: "soft memory limit, e.g. 2GiB or off (see help exit-codes)"},
	{name: "GOMEMLIMIT", help: "the Go runtime's soft memory limit, when the above is unset"},
	{name: "XDG_CONFIG_HOME", help: "where the default configuration file is looked for"},
	{name: "XDG_CACHE_HOME", help: "where live prices are cached ($XDG_CACHE_HOME/gpufinops)"},
	{name: "XDG_STATE_HOME", help: "where idle-stop keeps its audit log and locks by default ($XDG_STATE_HOME/gpufinops, else ~/.local/state/gpufinops)"},
	{name: "GPUFINOPS_BIGQUERY_ENDPOINT", help: "--billing bigquery://: the BigQuery endpoint to query, without credentials (a simulator); unset is Google's, with ADC"},
	{name: CPUProfileEnv, help: "contributors: write a CPU profile of the run to this file (go tool pprof)"},
	{name: MemProfileEnv, help: "contributors: write an allocation profile of the run to this file"},
	{name: "GPUFINOPS_UPDATE_GOLDEN", help: "contributors: the tests rewrite their golden files (make golden)"},
}

// knownVariable reports whether name is a GPUFINOPS_ variable gpufinops
// reads, and if not, the names it is close to.
func knownVariable(name string) (bool, []string) {
	var all []string
	for _, k := range config.Keys() {
		all = append(all, config.EnvVar(k))
	}
	for _, v := range otherVariables {
		all = append(all, v.name)
	}
	for _, v := range patternVariables {
		prefix, _, _ := strings.Cut(v.name, "<")
		if strings.HasPrefix(name, prefix) && len(name) > len(prefix) {
			return true, nil
		}
		all = append(all, v.name)
	}
	for _, a := range all {
		if a == name {
			return true, nil
		}
	}
	for _, a := range config.DeprecatedEnvVars() {
		if a == name {
			return true, nil // read, with the configuration's own deprecation warning
		}
	}
	return false, suggest.For(name, all)
}

// warnUnknownVariables warns, on w, of each set GPUFINOPS_ variable that no
// setting reads (a typo would otherwise be ignored without a word).
func warnUnknownVariables(w io.Writer, environ []string) {
	prefix := config.EnvPrefix + "_"
	var unknown []string
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, prefix) {
			if ok, _ := knownVariable(name); !ok {
				unknown = append(unknown, name)
			}
		}
	}
	sort.Strings(unknown)
	for _, name := range unknown {
		_, near := knownVariable(name)
		line := fmt.Sprintf("gpufinops: warning: %s is not a variable gpufinops reads, so it is ignored", name)
		if len(near) > 0 {
			line += "; did you mean " + orList(near, "or") + "?"
		}
		fmt.Fprintln(w, line+" (see 'gpufinops help environment')")
	}
}
