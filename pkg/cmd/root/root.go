// Package root builds the gpufinops command tree and maps errors to exit codes.
package root

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/gpufinops/gpufinops/pkg/build"
	analyzeCmd "github.com/gpufinops/gpufinops/pkg/cmd/analyze"
	billingCmd "github.com/gpufinops/gpufinops/pkg/cmd/billing"
	catalogCmd "github.com/gpufinops/gpufinops/pkg/cmd/catalog"
	commitPlanCmd "github.com/gpufinops/gpufinops/pkg/cmd/commitplan"
	diffCmd "github.com/gpufinops/gpufinops/pkg/cmd/diff"
	doctorCmd "github.com/gpufinops/gpufinops/pkg/cmd/doctor"
	"github.com/gpufinops/gpufinops/pkg/cmd/factory"
	fitCmd "github.com/gpufinops/gpufinops/pkg/cmd/fit"
	iamPolicyCmd "github.com/gpufinops/gpufinops/pkg/cmd/iampolicy"
	idleStopCmd "github.com/gpufinops/gpufinops/pkg/cmd/idlestop"
	inventoryCmd "github.com/gpufinops/gpufinops/pkg/cmd/inventory"
	pricesCmd "github.com/gpufinops/gpufinops/pkg/cmd/prices"
	reportCmd "github.com/gpufinops/gpufinops/pkg/cmd/reportmerge"
	sharingCmd "github.com/gpufinops/gpufinops/pkg/cmd/sharing"
	tagsCmd "github.com/gpufinops/gpufinops/pkg/cmd/tags"
	versionCmd "github.com/gpufinops/gpufinops/pkg/cmd/version"
	"github.com/gpufinops/gpufinops/pkg/cmdutil"
)

// Main runs the command line and returns the exit code. Nothing else exits.
// SIGINT and SIGTERM (what Kubernetes and systemd send) cancel the command's
// context with the signal as the cause: commands stop starting new work and
// finish or abandon what is in flight (idle-stop: within its grace period).
// A second signal ends the process at once.
func Main() cmdutil.ExitCode {
	f := factory.New()
	if err := applyMemoryLimit(os.Getenv, cgroupMemoryLimit); err != nil {
		fmt.Fprintf(f.IOStreams.ErrOut, "gpufinops: %s\n", err)
		return cmdutil.ExitCodeFor(err)
	}
	stopProfiles, err := startProfiles(os.Getenv)
	if err != nil {
		fmt.Fprintf(f.IOStreams.ErrOut, "gpufinops: %s\n", err)
		return cmdutil.ExitError
	}
	ctx, stop := NotifyContext(context.Background())
	code := Run(ctx, f, os.Args[1:])
	stop()
	if err := stopProfiles(); err != nil {
		fmt.Fprintf(f.IOStreams.ErrOut, "gpufinops: %s\n", err)
	}
	return code
}

// environ is the process environment; tests replace it.
var environ = os.Environ

// InterruptSignals are the signals that interrupt a command.
var InterruptSignals = []os.Signal{os.Interrupt, syscall.SIGTERM}

// NotifyContext is cancelled, with an "interrupted by SIGNAL" cause, on the
// first of InterruptSignals; after it the signals have their default effect
// again, so a second one ends the process. stop releases the signals.
func NotifyContext(parent context.Context) (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancelCause(parent)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, InterruptSignals...)
	done := make(chan struct{})
	go func() {
		select {
		case s := <-sigs:
			cancel(fmt.Errorf("interrupted by %s", s))
			signal.Stop(sigs)
		case <-done:
		}
	}()
	return ctx, func() {
		signal.Stop(sigs)
		close(done)
		cancel(nil)
	}
}

// Run executes args against a factory and returns the exit code; tests call it
// in-process. A panic in the command is an internal error: one line on
// stderr (the stack too when GPUFINOPS_DEBUG is set) and exit code 1, never
// the runtime's exit code 2, which means bad input.
func Run(ctx context.Context, f *cmdutil.Factory, args []string) (code cmdutil.ExitCode) {
	defer func() {
		if r := recover(); r != nil {
			code = internalError(f.IOStreams.ErrOut, os.Getenv, r, debug.Stack())
		}
	}()
	if len(args) == 0 || !strings.HasPrefix(args[0], "__complete") {
		warnUnknownVariables(f.IOStreams.ErrOut, environ())
	}
	cmd := NewCmdRoot(f)
	cmd.SetArgs(args)
	cmd.SetIn(f.IOStreams.In)
	cmd.SetOut(f.IOStreams.Out)
	cmd.SetErr(f.IOStreams.ErrOut)
	executed, err := cmd.ExecuteContextC(ctx)
	if err == nil {
		return cmdutil.ExitOK
	}
	var flagErr *cmdutil.FlagError
	if !errors.As(err, &flagErr) && isCobraUsageError(err) {
		err = &cmdutil.FlagError{Err: err}
	}
	if errors.As(err, &flagErr) {
		err = humanize(err)
	}
	printError(f, executed, err)
	return cmdutil.ExitCodeFor(err)
}

func printError(f *cmdutil.Factory, cmd *cobra.Command, err error) {
	if errors.Is(err, cmdutil.SilentError) {
		return
	}
	w := f.IOStreams.ErrOut
	fmt.Fprintf(w, "gpufinops: %s\n", cmdutil.ErrorText(err))
	printFix(w, err, os.Getenv(DebugEnv) != "")
	var flagErr *cmdutil.FlagError
	if errors.As(err, &flagErr) {
		if cmd != nil {
			fmt.Fprintf(w, "Run '%s --help' for usage.\n", cmd.CommandPath())
		}
	}
}

// isCobraUsageError recognises the argument and flag errors cobra returns as
// plain, untyped errors (unknown commands, argument counts, flag groups).
func isCobraUsageError(err error) bool {
	msg := err.Error()
	for _, p := range []string{"unknown command", "unknown flag", "unknown shorthand flag", "invalid argument", "flag needs an argument", "accepts ", "requires ", "if any flags in the group", "at least one of the flags in the group", "bad flag syntax"} {
		if strings.Contains(msg, p) {
			return true
		}
	}
	return false
}

// NewCmdRoot returns the root command with every subcommand attached.
func NewCmdRoot(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "gpufinops <command> [flags]",
		Short: "Find and cut GPU spend on AWS, Azure and GCP",
		Long: `gpufinops reads a GPU fleet (from the clouds or from a snapshot file), prices it
from a dated catalog, and recommends what to stop, schedule, resize or buy
differently, with the monthly saving of each change and how it was computed.`,
		Example: `  $ gpufinops analyze --demo
  $ gpufinops inventory --demo -o yaml > fleet.yaml
  $ gpufinops analyze --fleet fleet.yaml -o json > report.json
  $ gpufinops prices --gpu H100 --provider aws`,
		SilenceErrors: true,
		SilenceUsage:  true,
		Version:       build.Version,
	}
	cmd.SetVersionTemplate("gpufinops {{.Version}}\n")
	cmd.PersistentFlags().StringVar(&f.ConfigFile, "config", "", "configuration file (default $XDG_CONFIG_HOME/gpufinops/config.yaml)")
	_ = cmd.MarkPersistentFlagFilename("config", "yaml", "yml", "json", "toml")
	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		// "gpufinops analyse --demo": the flag is unknown because the command
		// is; say that, with the suggestion, rather than blame the flag.
		if c.HasSubCommands() {
			if args := c.Flags().Args(); len(args) > 0 {
				return unknownCommand(c, args[0])
			}
		}
		return &cmdutil.FlagError{Err: err}
	})

	cmd.AddGroup(&cobra.Group{ID: "core", Title: "Core commands:"}, &cobra.Group{ID: "help", Title: "Help topics:"})
	for _, c := range []*cobra.Command{
		analyzeCmd.NewCmdAnalyze(f, nil),
		idleStopCmd.NewCmdIdleStop(f, nil),
		billingCmd.NewCmdBilling(f),
		catalogCmd.NewCmdCatalog(f),
		commitPlanCmd.NewCmdCommitPlan(f, nil),
		diffCmd.NewCmdDiff(f, nil),
		doctorCmd.NewCmdDoctor(f, nil),
		fitCmd.NewCmdFit(f, nil),
		iamPolicyCmd.NewCmdIAMPolicy(f, nil),
		inventoryCmd.NewCmdInventory(f, nil),
		pricesCmd.NewCmdPrices(f, nil),
		reportCmd.NewCmdReport(f, nil),
		sharingCmd.NewCmdSharing(f),
		tagsCmd.NewCmdTags(f),
	} {
		c.GroupID = "core"
		cmd.AddCommand(c)
	}
	cmd.AddCommand(versionCmd.NewCmdVersion(f))
	width := func() int {
		if f.IOStreams == nil {
			return 80
		}
		return f.IOStreams.TerminalWidth()
	}
	for _, t := range helpTopics {
		cmd.AddCommand(newHelpTopic(t, width))
	}
	cmdutil.SetHelp(cmd, width)
	suggestSubcommands(cmd)
	return cmd
}
