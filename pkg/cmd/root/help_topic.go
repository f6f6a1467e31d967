package root

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/gpufinops/gpufinops/pkg/config"
)

type helpTopic struct {
	name, short, long string
}

var helpTopics = []helpTopic{
	{
		name:  "environment",
		short: "Environment variables and configuration precedence",
		long:  environmentHelp(),
	},
	{
		name:  "exit-codes",
		short: "Exit codes and what they mean",
		long: `gpufinops exits with one of these codes. They are stable; scripts may rely on them.

  0  success
  1  an error not covered below, including an internal error: a bug in
     gpufinops (one line on stderr; GPUFINOPS_DEBUG=1 adds the stack), never
     reported as bad input
  2  usage error or invalid input: a bad flag, an unreadable or invalid fleet,
     config or report file (the message names the file, instance and field)
  3  partial results: some scope (a provider, region or account) or its metrics
     could not be read, now or in the scan that made a --fleet snapshot; the
     output for the rest was written, with the failures as warnings inside it
  4  missing or insufficient credentials or permissions
  5  a --fail-on gate tripped; the report was written first

Running out of memory is fatal in Go and cannot be turned into one of these
codes: the runtime prints "fatal error: out of memory" and exits 2. To make
that unlikely, gpufinops sets a soft memory limit (the garbage collector works
harder near it instead of growing): GPUFINOPS_MEMORY_LIMIT (e.g. 2GiB, or off),
else GOMEMLIMIT, else 90% of the container's (cgroup) memory limit.
`,
	},
}

func environmentHelp() string {
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

`)
	for _, k := range config.Keys() {
		fmt.Fprintf(&b, "  %-54s %s\n", config.EnvVar(k), k)
	}
	b.WriteString(`
Other variables:

  NO_COLOR                 disable colour in tables (any value)
  GPUFINOPS_DEBUG          print the stack of an internal error (any value)
  GPUFINOPS_MEMORY_LIMIT   soft memory limit, e.g. 2GiB or off (see help exit-codes)
  GOMEMLIMIT               the Go runtime's soft memory limit, when the above is unset
  XDG_CONFIG_HOME          where the default configuration file is looked for
  XDG_STATE_HOME           where idle-stop keeps its audit log and locks by default
                           ($XDG_STATE_HOME/gpufinops, else ~/.local/state/gpufinops)
`)
	return b.String()
}

func newHelpTopic(t helpTopic) *cobra.Command {
	cmd := &cobra.Command{
		Use:     t.name,
		Short:   t.short,
		Long:    t.long,
		GroupID: "help",
		Hidden:  false,
		Args:    cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			_, err := fmt.Fprint(c.OutOrStdout(), t.long)
			return err
		},
	}
	cmd.SetHelpFunc(func(c *cobra.Command, _ []string) {
		fmt.Fprint(c.OutOrStdout(), t.long)
	})
	cmd.Annotations = map[string]string{"helpTopic": "true"}
	return cmd
}
