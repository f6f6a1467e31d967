package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/gpufinops/gpufinops/internal/fleetgen"
	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pricing/catalog"
)

// generateUsage is the first line of `cloudsim generate -h`.
const generateUsage = "Usage: cloudsim generate --instances N [--seed S] [--clouds aws,azure,gcp] [--regions N|R1,R2,…] [--accounts N] [--out FILE] [--format yaml|json]"

// runGenerate writes a generated fleet (fleetgen.Mixed) to stdout or --out.
func runGenerate(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("cloudsim generate", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	var (
		o       fleetgen.MixedOptions
		clouds  = "aws,azure,gcp"
		regions = "10"
		out     string
		format  string
	)
	fs.IntVar(&o.Instances, "instances", 0, "number of instances (required)")
	fs.Uint64Var(&o.Seed, "seed", 1, "seed: the same seed and flags give the same fleet")
	fs.StringVar(&clouds, "clouds", clouds, "comma-separated clouds to draw from: aws, azure, gcp")
	fs.StringVar(&regions, "regions", regions, "regions per cloud (a number: those the catalog prices most GPU types in) or a comma-separated list")
	fs.IntVar(&o.Accounts, "accounts", 3, "accounts per cloud (AWS accounts, Azure subscriptions, GCP projects)")
	fs.StringVar(&out, "out", "", "file to write (default stdout); its extension .json or .yaml picks the format")
	fs.StringVar(&format, "format", "", "yaml or json (default: from --out, else yaml)")
	fail := func(msg string) int {
		fmt.Fprintf(stderr, "cloudsim generate: %s (see cloudsim generate -h)\n", msg)
		return exitUsage
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(stdout, generateUsage)
			fmt.Fprintln(stdout, "\nWrites a realistic mixed GPU fleet in the fleet format, deterministic per seed.\n\nFlags:")
			fs.SetOutput(stdout)
			fs.PrintDefaults()
			return exitOK
		}
		return fail(err.Error())
	}
	if fs.NArg() > 0 {
		return fail(fmt.Sprintf("unexpected argument %q", fs.Arg(0)))
	}
	if o.Instances <= 0 || o.Instances > fleetgen.MaxInstances {
		return fail(fmt.Sprintf("--instances %d: want a number of instances from 1 to %d", o.Instances, fleetgen.MaxInstances))
	}
	if o.Accounts <= 0 || o.Accounts > fleetgen.MaxAccounts {
		return fail(fmt.Sprintf("--accounts %d: want a number of accounts per cloud from 1 to %d", o.Accounts, fleetgen.MaxAccounts))
	}
	for _, c := range strings.Split(clouds, ",") {
		p := fleet.Provider(strings.TrimSpace(c))
		switch p {
		case fleet.AWS, fleet.Azure, fleet.GCP:
			o.Clouds = append(o.Clouds, p)
		default:
			return fail(fmt.Sprintf("--clouds %q: want a comma-separated list of aws, azure, gcp", clouds))
		}
	}
	if n, err := strconv.Atoi(strings.TrimSpace(regions)); err == nil {
		if n <= 0 {
			return fail(fmt.Sprintf("--regions %d: want a positive number or a list of regions", n))
		}
		o.RegionCount = n
	} else {
		for _, r := range strings.Split(regions, ",") {
			if r = strings.TrimSpace(r); r == "" {
				return fail(fmt.Sprintf("--regions %q: empty region", regions))
			}
			o.Regions = append(o.Regions, r)
		}
	}
	if format == "" {
		format = fleet.FormatYAML
		if strings.EqualFold(filepath.Ext(out), ".json") {
			format = fleet.FormatJSON
		}
	}
	if format != fleet.FormatYAML && format != fleet.FormatJSON {
		return fail(fmt.Sprintf("--format %q: want yaml or json", format))
	}
	cat, err := catalog.Embedded()
	if err != nil {
		fmt.Fprintf(stderr, "cloudsim generate: loading the catalog: %s\n", oneLine(err))
		return exitError
	}
	head, all, err := fleetgen.MixedSeq(o, cat)
	if err != nil {
		return fail("--regions: " + oneLine(err))
	}
	write := func(w io.Writer) error {
		bw := bufio.NewWriterSize(w, 256<<10)
		if err := fleet.EncodeSeq(bw, head, all, format); err != nil {
			return err
		}
		return bw.Flush()
	}
	if out == "" || out == "-" {
		err = write(stdout)
	} else {
		err = writeFileAtomic(out, write)
	}
	if err != nil {
		fmt.Fprintf(stderr, "cloudsim generate: %s\n", oneLine(err))
		return exitError
	}
	return exitOK
}

// writeFileAtomic writes path through write into a temporary file beside it
// and renames it into place, so a run that fails or is killed halfway never
// leaves a truncated fleet under the name asked for.
func writeFileAtomic(path string, write func(io.Writer) error) (err error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return fmt.Errorf("--out %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
			err = fmt.Errorf("--out %s: %w", path, err)
		}
	}()
	if err = write(tmp); err != nil {
		return err
	}
	if err = tmp.Chmod(0o644); err != nil {
		return err
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
