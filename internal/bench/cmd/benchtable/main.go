// Command benchtable prints the `make bench` table: generated fleets over
// three clouds scanned by gpufinops through cloudsim, engine-only runs from
// the fleet files, and the per-instance baseline, beside the bounds the
// clouds' API limits allow (docs/performance.md).
//
//	go run ./internal/bench/cmd/benchtable                       # 1,000, 10,000, 100,000
//	BENCH_SIZES=1000,10000 BENCH_LATENCY=50ms go run ./internal/bench/cmd/benchtable
//
// Flags override the environment: --sizes (BENCH_SIZES), --live
// (BENCH_LIVE, the sizes also scanned live; default the sizes up to
// 10,000), --latency (BENCH_LATENCY), --target (BENCH_TARGET, the size of
// the 0 ms, throttled and baseline rows), --throttle (BENCH_THROTTLE),
// --baseline (BENCH_BASELINE), --regions, --accounts, --seed.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/gpufinops/gpufinops/internal/bench"
	"github.com/gpufinops/gpufinops/internal/fleetgen"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func env(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func parseSizes(flagName, v string) ([]int, error) {
	var out []int
	if strings.TrimSpace(v) == "" || v == "none" {
		return nil, nil
	}
	for _, s := range strings.Split(v, ",") {
		n, err := strconv.Atoi(strings.ReplaceAll(strings.TrimSpace(s), "_", ""))
		if err != nil || n <= 0 || n > fleetgen.MaxInstances {
			return nil, fmt.Errorf("--%s %q: want comma-separated sizes from 1 to %d, e.g. 1000,10000", flagName, v, fleetgen.MaxInstances)
		}
		out = append(out, n)
	}
	return out, nil
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("benchtable", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	sizes := fs.String("sizes", env("BENCH_SIZES", "1000,10000,100000"), "fleet sizes of the engine rows")
	live := fs.String("live", env("BENCH_LIVE", ""), "sizes also scanned live through the simulators (default: the sizes up to 10000; none for no scan)")
	latency := fs.String("latency", env("BENCH_LATENCY", "50ms"), "latency the simulators add to every request")
	target := fs.Int("target", 10000, "size of the 0 ms, throttled and baseline rows (BENCH_TARGET)")
	throttle := fs.Float64("throttle", 0.1, "share of throttled requests of the throttled row, 0 for none (BENCH_THROTTLE)")
	baseline := fs.Bool("baseline", true, "run the per-instance baseline at the target size (BENCH_BASELINE)")
	engineRuns := fs.Int("engine-runs", 3, "runs of each engine row, which shows the one of median CPU (BENCH_ENGINE_RUNS)")
	regions := fs.Int("regions", 10, "regions per cloud")
	accounts := fs.Int("accounts", 3, "accounts per cloud")
	seed := fs.Uint64("seed", 1, "fleet seed")
	keep := fs.String("dir", "", "work directory (default: a temporary one, removed)")
	profile := fs.String("profile", "", "directory for each row's pprof profiles (gpufinops CPU and allocations, cloudsim CPU)")
	// Environment defaults of the typed flags.
	for name, key := range map[string]string{"target": "BENCH_TARGET", "throttle": "BENCH_THROTTLE", "baseline": "BENCH_BASELINE", "engine-runs": "BENCH_ENGINE_RUNS"} {
		if v := os.Getenv(key); v != "" {
			if err := fs.Set(name, v); err != nil {
				fmt.Fprintf(stderr, "benchtable: %s=%q: %v\n", key, v, err)
				return 2
			}
		}
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(stdout, "Usage: benchtable [flags]  (make bench-table; docs/performance.md)")
			fs.SetOutput(stdout)
			fs.PrintDefaults()
			return 0
		}
		fmt.Fprintf(stderr, "benchtable: %v (see -h)\n", err)
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "benchtable: unexpected argument %q (see -h)\n", fs.Arg(0))
		return 2
	}
	fail := func(msg string) int { fmt.Fprintf(stderr, "benchtable: %s\n", msg); return 2 }
	if *engineRuns < 1 || *engineRuns > 20 {
		return fail(fmt.Sprintf("--engine-runs %d: want 1 to 20", *engineRuns))
	}
	cfg := bench.Config{Target: *target, Throttle: *throttle, Baseline: *baseline, Progress: stderr, EngineRuns: *engineRuns,
		Fleet: bench.FleetOptions{Seed: *seed, Regions: *regions, Accounts: *accounts}}
	var err error
	if cfg.Sizes, err = parseSizes("sizes", *sizes); err != nil {
		return fail(err.Error())
	}
	if *live == "" {
		for _, n := range cfg.Sizes {
			if n <= 10000 {
				cfg.Live = append(cfg.Live, n)
			}
		}
	} else if cfg.Live, err = parseSizes("live", *live); err != nil {
		return fail(err.Error())
	}
	if cfg.Latency, err = time.ParseDuration(*latency); err != nil || cfg.Latency < 0 || cfg.Latency > time.Minute {
		return fail(fmt.Sprintf("--latency %q: want a duration from 0 to 1m, such as 50ms", *latency))
	}
	if !(*throttle >= 0 && *throttle < 1) { // NaN too
		return fail(fmt.Sprintf("--throttle %g: want a share from 0 to below 1", *throttle))
	}
	if *target <= 0 {
		return fail(fmt.Sprintf("--target %d: want a positive size", *target))
	}
	if *regions <= 0 || *accounts <= 0 || *accounts > fleetgen.MaxAccounts {
		return fail(fmt.Sprintf("--regions %d, --accounts %d: want positive numbers, at most %d accounts", *regions, *accounts, fleetgen.MaxAccounts))
	}
	cfg.Dir = *keep
	if *profile != "" {
		if cfg.Profile, err = filepath.Abs(*profile); err == nil {
			err = os.MkdirAll(cfg.Profile, 0o755)
		}
		if err != nil {
			fmt.Fprintf(stderr, "benchtable: --profile: %v\n", err)
			return 1
		}
	}
	if cfg.Dir == "" {
		if cfg.Dir, err = os.MkdirTemp("", "gpufinops-bench-"); err != nil {
			fmt.Fprintf(stderr, "benchtable: %v\n", err)
			return 1
		}
		defer os.RemoveAll(cfg.Dir)
	} else if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
		fmt.Fprintf(stderr, "benchtable: %v\n", err)
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	began := time.Now()
	rows, err := bench.Run(ctx, cfg)
	bench.Print(stdout, rows, cfg.Target)
	fmt.Fprintf(stdout, "\n%d runs in %s\n", len(rows), time.Since(began).Round(time.Second))
	if err != nil {
		fmt.Fprintf(stderr, "benchtable: %v\n", err)
		return 1
	}
	return 0
}
