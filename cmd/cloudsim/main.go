// Command cloudsim serves a fleet file as local clouds: every simulator
// registered with providers/simkit is mounted on one port (HTTP/1.1 and
// cleartext HTTP/2, so gRPC shares it), behind one set of fault flags,
// counters and /_sim/* control endpoints. Today those are AWS's (EC2, STS,
// CloudWatch, Pricing, Savings Plans), Azure's (ARM, Resource Graph, Azure
// Monitor, Retail Prices) and GCP's (Compute REST, Cloud Monitoring gRPC,
// Billing Catalog), so the real SDKs and the clouds' CLIs can run against
// it. It is for demos, benchmarks and side-by-side runs. `cloudsim generate`
// writes a generated mixed fleet to serve (docs/performance.md).
//
//	go run ./cmd/cloudsim --demo --addr 127.0.0.1:4566
//	AWS_ENDPOINT_URL=http://127.0.0.1:4566 AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test \
//	  gpufinops analyze --provider aws --region us-east-1
//
// docs/azure.md and docs/gcp.md show the other clouds' settings. --tls
// serves HTTPS on the same port too, with a certificate authority made at
// start (--ca-file), and proxies the public hosts a client cannot be
// pointed away from (Azure CLI's login.microsoftonline.com), so the clouds'
// CLIs run unchanged against it (docs/aws.md, docs/azure.md, docs/gcp.md).
// --focus-export FILE writes the fleet's FOCUS billing export (CSV or
// Parquet) with known totals; with --sql-engine postgres cloudsim also loads
// it into a private PostgreSQL and serves Athena's and BigQuery's query
// APIs over it on the same port, for `gpufinops analyze --billing
// athena://primary/focus.gpu_bill` or `bigquery://sim-billing.focus.gpu_bill`
// (docs/billing.md); SIGINT or SIGTERM stops the server and removes its
// folder. The fleet
// is completed from the embedded catalog first; the simulators' instance
// types and prices come from the catalog too (each cloud's simcat package).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"syscall"
	"time"

	"github.com/gpufinops/gpufinops/internal/warehousesim"
	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pricing"
	"github.com/gpufinops/gpufinops/pricing/catalog"
	_ "github.com/gpufinops/gpufinops/providers/aws/simcat"   // registers the AWS simulator
	_ "github.com/gpufinops/gpufinops/providers/azure/simcat" // registers the Azure simulator
	"github.com/gpufinops/gpufinops/providers/file"
	_ "github.com/gpufinops/gpufinops/providers/gcp/simcat" // registers the GCP simulator
	"github.com/gpufinops/gpufinops/providers/simkit"
)

func main() {
	if path := os.Getenv("CLOUDSIM_CPUPROFILE"); path != "" {
		// Contributors: profile the simulators' own CPU (they share the
		// machine with the scan they serve); written when cloudsim stops.
		f, err := os.Create(path)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "cloudsim: CLOUDSIM_CPUPROFILE: %s\n", err)
			os.Exit(exitError)
		}
		code := run(os.Args[1:], os.Stdout, os.Stderr)
		pprof.StopCPUProfile()
		f.Close()
		os.Exit(code)
	}
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// Exit codes: as gpufinops's (0 ok, 1 error, 2 usage or invalid input).
const (
	exitOK    = 0
	exitError = 1
	exitUsage = 2
)

// config is the parsed command line.
type config struct {
	fleetPath    string
	demo         bool
	addr         string
	latency      time.Duration
	throttleRate float64
	errorRate    float64
	failRegions  []string
	seed         int64
	delays       map[string]time.Duration
	hang         []string
	// focusPath, focusStart and focusHours write the fleet's FOCUS export.
	focusPath  string
	focusStart time.Time
	focusHours int
	// warehouse serves the export through Athena and BigQuery (--sql-engine).
	warehouse warehouseConfig
	// tls also serves HTTPS on the port, trusted through caFile (--tls).
	tls    bool
	caFile string
}

// usageError is a bad flag or argument: exit 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

// parseFlags reads the command line; -h is flag.ErrHelp.
func parseFlags(args []string, stdout io.Writer) (*config, error) {
	c := &config{}
	fs := flag.NewFlagSet("cloudsim", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&c.fleetPath, "fleet", "", "fleet file to serve (JSON or YAML, docs/fleet-format.md; - for stdin)")
	fs.BoolVar(&c.demo, "demo", false, "serve the embedded demo fleet")
	fs.StringVar(&c.addr, "addr", "127.0.0.1:4566", "address to listen on (port 0 picks a free port)")
	fs.DurationVar(&c.latency, "latency", 0, "latency added to every request, e.g. 50ms")
	fs.Float64Var(&c.throttleRate, "throttle-rate", 0, "share of requests (0–1) answered with the service's throttling error")
	fs.Float64Var(&c.errorRate, "error-rate", 0, "share of requests (0–1) answered with HTTP 500")
	fs.Func("fail-region", "answer every request for this region with HTTP 500 (repeatable, or comma-separated)", func(v string) error {
		for _, r := range strings.Split(v, ",") {
			r = strings.TrimSpace(r)
			if r == "" {
				return errors.New("empty region")
			}
			c.failRegions = append(c.failRegions, r)
		}
		return nil
	})
	fs.Func("delay", "hold back the answers of an operation, which takes effect at once: OP=DURATION, e.g. StopInstances=2s (repeatable)", func(v string) error {
		op, d, ok := strings.Cut(v, "=")
		dur, err := time.ParseDuration(strings.TrimSpace(d))
		if !ok || strings.TrimSpace(op) == "" || err != nil || dur < 0 {
			return fmt.Errorf("want OP=DURATION, e.g. StopInstances=2s")
		}
		if dur > simkit.MaxDelay {
			return fmt.Errorf("%s is longer than %s: to never answer, use --hang %s", dur, simkit.MaxDelay, strings.TrimSpace(op))
		}
		if c.delays == nil {
			c.delays = map[string]time.Duration{}
		}
		c.delays[strings.TrimSpace(op)] = dur
		return nil
	})
	fs.Func("hang", "never answer an operation, e.g. DescribeInstances (repeatable, or comma-separated)", func(v string) error {
		for _, op := range strings.Split(v, ",") {
			op = strings.TrimSpace(op)
			if op == "" {
				return errors.New("empty operation")
			}
			c.hang = append(c.hang, op)
		}
		return nil
	})
	fs.Int64Var(&c.seed, "seed", 1, "seed of the fault injection, for repeatable runs")
	fs.BoolVar(&c.tls, "tls", false, "serve HTTPS too, on the same port, with a certificate authority made at start (clients that accept only https: az), and proxy the public hosts such clients must reach (HTTPS_PROXY)")
	fs.StringVar(&c.caFile, "ca-file", "", "with --tls, write the authority's certificate (PEM) here for clients to trust (default: a file in a temporary folder, removed on exit)")
	fs.StringVar(&c.focusPath, "focus-export", "", "write the fleet's FOCUS 1.2 billing export to this .csv or .parquet file before serving")
	focusStart := fs.String("focus-start", "", "first hour of the FOCUS export, YYYY-MM-DD or RFC 3339 (default: --focus-hours before now)")
	fs.IntVar(&c.focusHours, "focus-hours", 720, "hours the FOCUS export bills each running instance")
	checks := []func() error{warehouseFlags(fs, c)}
	var titles []string
	for _, sim := range simkit.Registered() {
		titles = append(titles, sim.Title)
		if sim.Flags != nil {
			if check := sim.Flags(fs); check != nil {
				checks = append(checks, check)
			}
		}
	}
	usage := func() {
		fmt.Fprintln(stdout, "Usage: cloudsim (--fleet FILE | --demo) [--addr HOST:PORT] [--tls [--ca-file FILE]] [--latency D] [--throttle-rate R] [--error-rate R] [--fail-region REGION] [--delay OP=D] [--hang OP] [--seed N] [--focus-export FILE [--sql-engine postgres]] [simulator flags]")
		fmt.Fprintf(stdout, "\nServes a fleet file's instances as local clouds on one port (simulators: %s).\n\nFlags:\n", strings.Join(titles, ", "))
		fs.SetOutput(stdout)
		fs.PrintDefaults()
		fs.SetOutput(io.Discard)
	}
	fs.Usage = func() {} // errors are one line; -h prints the usage below
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			usage()
			return nil, err
		}
		return nil, &usageError{err.Error()}
	}
	switch {
	case fs.NArg() > 0:
		return nil, &usageError{fmt.Sprintf("unexpected argument %q", fs.Arg(0))}
	case c.fleetPath == "" && !c.demo:
		return nil, &usageError{"give a fleet: --fleet FILE or --demo"}
	case c.fleetPath != "" && c.demo:
		return nil, &usageError{"--fleet and --demo exclude each other"}
	case c.addr == "":
		return nil, &usageError{"--addr is empty"}
	case c.latency < 0:
		return nil, &usageError{fmt.Sprintf("--latency %s is negative", c.latency)}
	case c.latency > simkit.MaxDelay:
		return nil, &usageError{fmt.Sprintf("--latency %s is longer than %s: a request that is never to be answered is --hang OP", c.latency, simkit.MaxDelay)}
	case !isRate(c.throttleRate):
		return nil, &usageError{fmt.Sprintf("--throttle-rate %g is not between 0 and 1", c.throttleRate)}
	case !isRate(c.errorRate):
		return nil, &usageError{fmt.Sprintf("--error-rate %g is not between 0 and 1", c.errorRate)}
	case c.throttleRate+c.errorRate > 1:
		return nil, &usageError{fmt.Sprintf("--throttle-rate and --error-rate add up to %g, more than 1", c.throttleRate+c.errorRate)}
	}
	if c.caFile != "" && !c.tls {
		return nil, &usageError{"--ca-file needs --tls"}
	}
	if c.focusPath != "" && focusKind(c.focusPath) == "" {
		return nil, &usageError{fmt.Sprintf("--focus-export %q: want a .csv or .parquet file", c.focusPath)}
	}
	if c.focusHours < 1 || c.focusHours > 24*400 {
		return nil, &usageError{fmt.Sprintf("--focus-hours %d is not between 1 and %d", c.focusHours, 24*400)}
	}
	if *focusStart != "" {
		t, err := time.Parse("2006-01-02", *focusStart)
		if err != nil {
			if t, err = time.Parse(time.RFC3339, *focusStart); err != nil {
				return nil, &usageError{fmt.Sprintf("--focus-start %q is not YYYY-MM-DD or RFC 3339", *focusStart)}
			}
		}
		c.focusStart = t.UTC()
	}
	for _, check := range checks {
		if err := check(); err != nil {
			return nil, &usageError{err.Error()}
		}
	}
	if _, _, err := net.SplitHostPort(c.addr); err != nil {
		return nil, &usageError{fmt.Sprintf("--addr %q is not HOST:PORT", c.addr)}
	}
	return c, nil
}

func isRate(v float64) bool { return !math.IsNaN(v) && v >= 0 && v <= 1 }

// run is main without the exit: it serves until SIGINT or SIGTERM.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "generate" {
		return runGenerate(args[1:], stdout, stderr)
	}
	c, err := parseFlags(args, stdout)
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	if err != nil {
		fmt.Fprintf(stderr, "cloudsim: %s (see cloudsim -h)\n", err)
		return exitUsage
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return serve(ctx, c, os.Stdin, stdout, stderr)
}

// serve loads the fleet, builds every registered simulator on one kit and
// serves them until ctx ends.
func serve(ctx context.Context, c *config, stdin io.Reader, stdout, stderr io.Writer) int {
	f, name, err := loadFleet(c, stdin)
	if err != nil {
		fmt.Fprintf(stderr, "cloudsim: %s\n", oneLine(err))
		return exitUsage
	}
	cat, err := catalog.Embedded()
	if err != nil {
		fmt.Fprintf(stderr, "cloudsim: loading the catalog: %s\n", oneLine(err))
		return exitError
	}
	if err := pricing.Complete(f, cat); err != nil {
		fmt.Fprintf(stderr, "cloudsim: %s: %s\n", name, oneLine(err))
		return exitUsage
	}
	// Types the catalog lacks are served from the fleet's own figures; what
	// the fleet does not give either, the simulators cannot answer.
	for _, w := range pricing.UnknownTypes(f, cat, nil) {
		fmt.Fprintf(stderr, "cloudsim: note: %s: %s\n", name, w.Message())
	}
	if c.focusPath != "" {
		if c.focusStart.IsZero() {
			c.focusStart = time.Now().UTC().Truncate(time.Hour).Add(-time.Duration(c.focusHours) * time.Hour)
		}
		if err := writeFOCUS(c.focusPath, c.focusStart, c.focusHours, f, cat, stdout); err != nil {
			fmt.Fprintf(stderr, "cloudsim: --focus-export: %s\n", oneLine(err))
			return exitError
		}
	}
	kit, err := simkit.New(simkit.Options{
		Latency: c.latency, ThrottleRate: c.throttleRate, ErrorRate: c.errorRate,
		FailScopes: c.failRegions, Delays: c.delays, Hang: c.hang, Seed: c.seed, Ops: simkit.RegisteredOps(warehousesim.Ops...),
	})
	if err != nil {
		fmt.Fprintf(stderr, "cloudsim: %s\n", oneLine(err))
		return exitUsage
	}
	wh, err := startWarehouse(ctx, c, f, cat, kit, stdout)
	if err != nil {
		fmt.Fprintf(stderr, "cloudsim: --sql-engine: %s\n", oneLine(err))
		return exitError
	}
	defer wh.close(stderr)
	regs := simkit.Registered()
	sims := make([]simkit.Sim, len(regs))
	for i, reg := range regs {
		if sims[i], err = reg.Build(f, simkit.Env{Kit: kit}); err != nil {
			fmt.Fprintf(stderr, "cloudsim: %s simulator: %s\n", reg.Title, oneLine(err))
			return exitError
		}
	}

	ln, err := net.Listen("tcp", c.addr)
	if err != nil {
		fmt.Fprintf(stderr, "cloudsim: %s\n", oneLine(err))
		return exitError
	}
	url := "http://" + ln.Addr().String()
	handler := simkit.Mux(kit, append(wh.sims(), sims...)...)
	var tlsNotes []string
	if c.tls {
		var proxied []string
		for _, reg := range regs {
			proxied = append(proxied, reg.ProxyHosts...)
		}
		tc, caFile, cleanup, err := startTLS(c.caFile, proxied)
		if err != nil {
			ln.Close()
			fmt.Fprintf(stderr, "cloudsim: --tls: %s\n", oneLine(err))
			return exitError
		}
		defer cleanup()
		ln = simkit.DualListener(ln, tc.Config)
		handler = simkit.ConnectProxy(handler, tc.Config, proxied...)
		tlsNotes = append(tlsNotes, fmt.Sprintf("HTTPS too, on https://%s; its certificate authority is %s (REQUESTS_CA_BUNDLE for az, AWS_CA_BUNDLE for aws)", ln.Addr(), caFile))
		if len(proxied) > 0 {
			tlsNotes = append(tlsNotes, fmt.Sprintf("HTTPS_PROXY=%s NO_PROXY=127.0.0.1,localhost brings %s to the simulators", url, strings.Join(proxied, ", ")))
		}
	}
	var empty []string
	for i, reg := range regs {
		n := len(sims[i].State())
		fmt.Fprintf(stdout, "cloudsim: serving %d %s instances of %s on %s (%s=%s)\n", n, reg.Title, name, url, reg.EndpointEnv, url)
		if n == 0 {
			empty = append(empty, reg.Title)
		}
	}
	fmt.Fprintf(stdout, "cloudsim: instance states at %s/_sim/state, request counts at %s/_sim/requests\n", url, url)
	for _, note := range tlsNotes {
		fmt.Fprintf(stdout, "cloudsim: %s\n", note)
	}
	for _, s := range sims {
		for _, note := range s.Notes() {
			fmt.Fprintf(stdout, "cloudsim: %s\n", note)
		}
	}
	wh.announce(url, stdout)
	for _, title := range empty {
		fmt.Fprintf(stderr, "cloudsim: warning: %s has no %s instances\n", name, title)
	}

	// HTTP/1.1 and cleartext HTTP/2 on one port: gRPC simulators (GCP's
	// Cloud Monitoring) need HTTP/2 without TLS.
	protocols := new(http.Protocols)
	protocols.SetHTTP1(true)
	protocols.SetUnencryptedHTTP2(true)
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second, Protocols: protocols}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		fmt.Fprintf(stderr, "cloudsim: %s\n", oneLine(err))
		return exitError
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil {
		fmt.Fprintf(stderr, "cloudsim: stopping: %s\n", oneLine(err))
		return exitError
	}
	fmt.Fprintf(stdout, "cloudsim: stopped after %d requests\n", simkit.Total(kit.Counts()))
	return exitOK
}

// startTLS makes the certificate authority of --tls, for the loopback
// names and the proxied hosts, and writes its certificate to caFile (or a
// temporary file cleanup removes).
func startTLS(caFile string, proxied []string) (*simkit.TLS, string, func(), error) {
	tc, err := simkit.NewTLS(proxied...)
	if err != nil {
		return nil, "", nil, err
	}
	cleanup := func() {}
	if caFile == "" {
		dir, err := os.MkdirTemp("", "cloudsim-tls-")
		if err != nil {
			return nil, "", nil, err
		}
		caFile = filepath.Join(dir, "ca.pem")
		cleanup = func() { os.RemoveAll(dir) }
	}
	if err := tc.WriteCA(caFile); err != nil {
		cleanup()
		return nil, "", nil, err
	}
	return tc, caFile, cleanup, nil
}

// loadFleet reads the fleet the flags name and says what to call it.
func loadFleet(c *config, stdin io.Reader) (*fleet.Fleet, string, error) {
	if c.demo {
		f, err := file.Demo()
		return f, file.DemoName, err
	}
	name := c.fleetPath
	if name == "-" {
		name = file.StdinName
	}
	f, err := file.Load(c.fleetPath, stdin)
	return f, name, err
}

// oneLine joins a multi-line error (errors.Join) with "; ".
func oneLine(err error) string {
	return strings.Join(strings.Split(strings.TrimSpace(err.Error()), "\n"), "; ")
}
