package bench

import (
	"bufio"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pricing"
	"github.com/gpufinops/gpufinops/pricing/catalog"
)

// Binaries are the two programs a run executes, built once.
type Binaries struct {
	GPUFinOps, CloudSim string
}

// Build compiles gpufinops and cloudsim into dir with `go build`.
func Build(ctx context.Context, dir string) (Binaries, error) {
	b := Binaries{GPUFinOps: filepath.Join(dir, "gpufinops"), CloudSim: filepath.Join(dir, "cloudsim")}
	for _, p := range []struct{ out, pkg string }{
		{b.GPUFinOps, "github.com/gpufinops/gpufinops/cmd/gpufinops"},
		{b.CloudSim, "github.com/gpufinops/gpufinops/cmd/cloudsim"},
	} {
		cmd := exec.CommandContext(ctx, "go", "build", "-o", p.out, p.pkg)
		if out, err := cmd.CombinedOutput(); err != nil {
			return b, fmt.Errorf("go build %s: %v: %s", p.pkg, err, strings.TrimSpace(string(out)))
		}
	}
	return b, nil
}

// FleetOptions say which generated fleet a size gets.
type FleetOptions struct {
	Seed     uint64
	Regions  int
	Accounts int
	Clouds   []fleet.Provider
}

// Generated is a generated fleet written to a file, and what the bounds and
// the AWS set-up need of it (the fleet itself is not kept).
type Generated struct {
	Path      string
	Instances int
	Shape     Shape
	// AWSBase is the account the AWS simulator's static keys act in (the
	// fleet's most common AWS account, the smallest on a tie); AWSRoles
	// the other AWS accounts, scanned through AssumeRole.
	AWSBase  string
	AWSRoles []string
	// AWSRegions are the fleet's AWS regions.
	AWSRegions []string
}

// Generate writes the mixed fleet of n instances to dir with `cloudsim
// generate` (fleetgen.Mixed) and reads its shape back from the file one
// instance at a time, so that the bench never holds the fleet.
func Generate(ctx context.Context, bin Binaries, dir string, n int, o FleetOptions) (Generated, error) {
	g := Generated{Path: filepath.Join(dir, fmt.Sprintf("fleet-%d.json", n))}
	args := []string{"generate", "--instances", strconv.Itoa(n), "--seed", strconv.FormatUint(o.Seed, 10),
		"--regions", strconv.Itoa(max(1, o.Regions)), "--accounts", strconv.Itoa(max(1, o.Accounts)), "--out", g.Path}
	if len(o.Clouds) > 0 {
		var cs []string
		for _, c := range o.Clouds {
			cs = append(cs, string(c))
		}
		args = append(args, "--clouds", strings.Join(cs, ","))
	}
	if out, err := exec.CommandContext(ctx, bin.CloudSim, args...).CombinedOutput(); err != nil {
		return g, fmt.Errorf("cloudsim %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	cat, err := catalog.Embedded()
	if err != nil {
		return g, err
	}
	return readFleet(g.Path, cat)
}

// fileInstance is what the bench reads of an instance in a fleet file.
type fileInstance struct {
	ID           string          `json:"id"`
	Provider     fleet.Provider  `json:"provider"`
	Account      string          `json:"account"`
	Region       string          `json:"region"`
	InstanceType string          `json:"instanceType"`
	State        fleet.State     `json:"state"`
	Lifecycle    fleet.Lifecycle `json:"lifecycle"`
	GPU          fleet.GPU       `json:"gpu"`
	Utilization  *struct {
		GPU, GPUMemory, CPU, Memory *json.RawMessage
	} `json:"utilization"`
	Managed *fleet.Managed `json:"managed"`
}

// readFleet streams a JSON fleet file's instances into its shape; a GPU
// count the file leaves out is the catalog's for the type, as
// pricing.Complete fills it in.
func readFleet(path string, cat pricing.Catalog) (Generated, error) {
	g := Generated{Path: path}
	f, err := os.Open(path)
	if err != nil {
		return g, err
	}
	defer f.Close()
	dec := json.NewDecoder(bufio.NewReaderSize(f, 1<<20))
	bad := func(err error) (Generated, error) { return g, fmt.Errorf("%s: %v", path, err) }
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return bad(fmt.Errorf("not a JSON fleet (%v)", err))
	}
	var b shapeBuilder
	awsN := map[string]int{}
	awsRegions := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return bad(err)
		}
		if tok != "instances" {
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return bad(err)
			}
			continue
		}
		if tok, err := dec.Token(); err != nil || tok != json.Delim('[') {
			return bad(fmt.Errorf("instances is not a list (%v)", err))
		}
		for dec.More() {
			var in fileInstance
			if err := dec.Decode(&in); err != nil {
				return bad(err)
			}
			gpu := in.GPU
			if t, ok := cat.InstanceType(in.Provider, in.InstanceType); ok {
				if gpu.Count == 0 {
					gpu.Count = t.GPUCount
				}
				if gpu.MemoryGiB == 0 {
					gpu.MemoryGiB = t.GPUMemoryGiB
				}
			}
			var m metrics
			if u := in.Utilization; u != nil {
				m = metrics{gpu: u.GPU != nil, gpuMemory: u.GPUMemory != nil, cpu: u.CPU != nil, memory: u.Memory != nil}
			}
			if in.Managed != nil {
				// As ShapeOf: a managed item is read through its service's
				// own calls, not as a VM (a Workbench instance excepted).
				item := fleet.Instance{ID: in.ID, Provider: in.Provider, Account: in.Account, Region: in.Region, InstanceType: in.InstanceType, State: in.State, Managed: in.Managed}
				if m.gpu {
					item.Utilization = &fleet.Utilization{GPU: &fleet.Stats{}}
					if m.gpuMemory {
						item.Utilization.GPUMemory = &fleet.Stats{}
					}
				}
				if b.managed(item) {
					g.Instances++
					continue
				}
			}
			b.add(in.Provider, in.Account, in.Region, in.InstanceType, gpu, in.Lifecycle == fleet.Spot, in.State == fleet.Stopped, m)
			g.Instances++
			if in.Provider == fleet.AWS {
				awsRegions[in.Region] = true
				if in.Account != "" {
					awsN[in.Account]++
				}
			}
		}
		if _, err := dec.Token(); err != nil {
			return bad(err)
		}
	}
	g.Shape = b.shape()
	g.AWSBase, g.AWSRoles, g.AWSRegions = awsAccounts(awsN, awsRegions)
	return g, nil
}

// awsAccounts picks the AWS simulator's base account as it does (most
// instances, smallest ID on a tie) and lists the others and the regions.
func awsAccounts(n map[string]int, rs map[string]bool) (base string, roles, regions []string) {
	for a, c := range n {
		if base == "" || c > n[base] || (c == n[base] && a < base) {
			base = a
		}
	}
	for a := range n {
		if a != base {
			roles = append(roles, a)
		}
	}
	for r := range rs {
		regions = append(regions, r)
	}
	sort.Strings(roles)
	sort.Strings(regions)
	return base, roles, regions
}

// Usage is what one process used.
type Usage struct {
	Wall time.Duration
	// CPU is user + system time.
	CPU time.Duration
	// PeakRSS is the peak resident set in bytes (getrusage ru_maxrss).
	PeakRSS int64
}

func usageOf(ps *os.ProcessState, wall time.Duration) Usage {
	u := Usage{Wall: wall}
	if ps == nil {
		return u
	}
	u.CPU = ps.UserTime() + ps.SystemTime()
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
		u.PeakRSS = int64(ru.Maxrss) * 1024 // KiB on Linux
	}
	return u
}

// Sim is a running cloudsim.
type Sim struct {
	URL   string
	cmd   *exec.Cmd
	start time.Time
}

var servingURL = regexp.MustCompile(`on (http://[^ ]+) \(`)

// SimOptions are the faults cloudsim injects.
type SimOptions struct {
	Latency      time.Duration
	ThrottleRate float64
	// CPUProfile, when set, is where cloudsim writes its CPU profile.
	CPUProfile string
}

// StartSim serves the fleet file with cloudsim on a free port and waits
// until it listens.
func StartSim(ctx context.Context, bin Binaries, fleetPath string, o SimOptions) (*Sim, error) {
	cmd := exec.CommandContext(ctx, bin.CloudSim, "--fleet", fleetPath, "--addr", "127.0.0.1:0",
		"--latency", o.Latency.String(), "--throttle-rate", strconv.FormatFloat(o.ThrottleRate, 'g', -1, 64), "--seed", "1")
	if o.CPUProfile != "" {
		cmd.Env = append(os.Environ(), "CLOUDSIM_CPUPROFILE="+o.CPUProfile)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	errTail := &tail{max: 2048}
	cmd.Stderr = errTail
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &Sim{cmd: cmd, start: time.Now()}
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		line := sc.Text()
		if m := servingURL.FindStringSubmatch(line); m != nil && s.URL == "" {
			s.URL = m[1]
		}
		if strings.Contains(line, "request counts at") {
			break
		}
	}
	go func() { _, _ = io.Copy(io.Discard, out) }()
	if s.URL == "" {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return nil, fmt.Errorf("cloudsim did not start: %s", strings.TrimSpace(errTail.String()))
	}
	return s, nil
}

// Requests reads the simulators' counters.
func (s *Sim) Requests(ctx context.Context) (Counts, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+"/_sim/requests", nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var raw map[string]map[string]int
	if err := json.NewDecoder(resp.Body).Decode(&raw); err != nil {
		return nil, fmt.Errorf("/_sim/requests: %v", err)
	}
	return countsOf(raw)
}

// Stop ends cloudsim and returns what it used while it ran.
func (s *Sim) Stop() Usage {
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	_ = s.cmd.Wait()
	return usageOf(s.cmd.ProcessState, time.Since(s.start))
}

// tail keeps the last max bytes written to it.
type tail struct {
	max int
	b   []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = append(t.b[:0], t.b[len(t.b)-t.max:]...)
	}
	return len(p), nil
}

func (t *tail) String() string { return string(t.b) }

// scanEnv is the environment the e2e tests give gpufinops to scan the three
// simulators at url (internal/e2e/allclouds_test.go), with its own config,
// cache and state directories under home so that no price cache carries
// over from one run to the next.
func scanEnv(url, home string) []string {
	env := []string{
		"PATH=" + os.Getenv("PATH"),
		"AWS_ENDPOINT_URL=" + url, "AWS_EC2_METADATA_DISABLED=true", "AWS_CONFIG_FILE=" + os.DevNull, "AWS_SHARED_CREDENTIALS_FILE=" + os.DevNull,
		"AWS_ACCESS_KEY_ID=test", "AWS_SECRET_ACCESS_KEY=test", "AWS_REGION=us-east-1",
		"GPUFINOPS_PROVIDERS_AZURE_ENDPOINT=" + url, "GPUFINOPS_PROVIDERS_AZURE_TEST_CREDENTIAL=true",
		"GPUFINOPS_PROVIDERS_GCP_ENDPOINT=" + url,
		"CLOUDSDK_AUTH_ACCESS_TOKEN=test", "GOOGLE_APPLICATION_CREDENTIALS=/nonexistent/gpufinops-bench-adc.json",
		"HOME=" + home, "XDG_CONFIG_HOME=" + home, "XDG_CACHE_HOME=" + home, "XDG_STATE_HOME=" + home,
	}
	if v := os.Getenv("GOMAXPROCS"); v != "" {
		env = append(env, "GOMAXPROCS="+v)
	}
	return env
}

// Outcome is what must agree between two reports of one fleet: the
// instance count, the totals, every recommendation (kind, resource, target,
// current and projected cost) and every instance's current and optimized
// cost, hashed so that a 100,000-instance report is not kept in memory.
type Outcome struct {
	Instances, Recommendations int
	Current, Savings           string
	// Digest is a SHA-256 of the sorted recommendation and instance lines.
	Digest string
}

// outcomeOf reads a JSON report file, one recommendation and instance at a
// time, so that only their digest lines are held.
func outcomeOf(path string) (Outcome, error) {
	f, err := os.Open(path)
	if err != nil {
		return Outcome{}, err
	}
	defer f.Close()
	bad := func(err error) (Outcome, error) {
		return Outcome{}, fmt.Errorf("%s: the report does not parse: %v", path, err)
	}
	dec := json.NewDecoder(bufio.NewReaderSize(f, 1<<20))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return bad(fmt.Errorf("not a JSON object (%v)", err))
	}
	var o Outcome
	var lines []string
	// each decodes the elements of a list one by one.
	each := func(decode func() error) error {
		if tok, err := dec.Token(); err != nil || tok != json.Delim('[') {
			return fmt.Errorf("not a list (%v)", err)
		}
		for dec.More() {
			if err := decode(); err != nil {
				return err
			}
		}
		_, err := dec.Token()
		return err
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return bad(err)
		}
		switch key {
		case "summary":
			var sum struct {
				Current float64 `json:"currentMonthlyCost"`
				Savings float64 `json:"monthlySavings"`
			}
			if err := dec.Decode(&sum); err != nil {
				return bad(err)
			}
			o.Current, o.Savings = fmt.Sprintf("%.2f", sum.Current), fmt.Sprintf("%.2f", sum.Savings)
		case "recommendations":
			err = each(func() error {
				var rec struct {
					Kind       string  `json:"kind"`
					ResourceID string  `json:"resourceId"`
					Target     string  `json:"target"`
					Current    float64 `json:"currentMonthlyCost"`
					Projected  float64 `json:"projectedMonthlyCost"`
				}
				if err := dec.Decode(&rec); err != nil {
					return err
				}
				o.Recommendations++
				lines = append(lines, fmt.Sprintf("r %s %s %s %.2f %.2f", rec.Kind, rec.ResourceID, rec.Target, rec.Current, rec.Projected))
				return nil
			})
		case "instances":
			err = each(func() error {
				var in struct {
					ResourceID string  `json:"resourceId"`
					Monthly    float64 `json:"currentMonthlyCost"`
					Optimized  float64 `json:"optimizedMonthlyCost"`
				}
				if err := dec.Decode(&in); err != nil {
					return err
				}
				o.Instances++
				lines = append(lines, fmt.Sprintf("i %s %.2f %.2f", in.ResourceID, in.Monthly, in.Optimized))
				return nil
			})
		default:
			var skip json.RawMessage
			err = dec.Decode(&skip)
		}
		if err != nil {
			return bad(err)
		}
	}
	sort.Strings(lines)
	h := sha256.New()
	for _, l := range lines {
		io.WriteString(h, l)
		h.Write([]byte{'\n'})
	}
	o.Digest = hex.EncodeToString(h.Sum(nil))[:16]
	return o, nil
}

// Analyze runs `gpufinops analyze ARGS -o json` with env, writing the report
// to out, and measures the process.
func Analyze(ctx context.Context, bin Binaries, env []string, out string, args ...string) (Usage, error) {
	w, err := os.Create(out)
	if err != nil {
		return Usage{}, err
	}
	defer w.Close()
	cmd := exec.CommandContext(ctx, bin.GPUFinOps, append(append([]string{"analyze"}, args...), "-o", "json")...)
	cmd.Env = env
	cmd.Stdout = w
	stderr := &tail{max: 4096}
	cmd.Stderr = stderr
	start := time.Now()
	err = cmd.Run()
	u := usageOf(cmd.ProcessState, time.Since(start))
	if err != nil {
		msg := strings.TrimSpace(stderr.String())
		if i := strings.LastIndex(msg, "\n"); i >= 0 {
			msg = msg[i+1:]
		}
		var exit *exec.ExitError
		if errors.As(err, &exit) && exit.ExitCode() == exitPartial {
			return u, &PartialError{Msg: msg}
		}
		return u, fmt.Errorf("gpufinops analyze %s: %v: %s", strings.Join(args, " "), err, msg)
	}
	return u, nil
}

// exitPartial is gpufinops's exit code for partial results: some scope
// failed, the report still came.
const exitPartial = 3

// PartialError is a scan that exited 3: its report and figures are kept,
// and the row says what failed.
type PartialError struct{ Msg string }

func (e *PartialError) Error() string { return "partial results (exit 3): " + e.Msg }

// Row is one measured run.
type Row struct {
	// Name says what ran: "engine", "scan", "scan 0 ms", "scan 10 % throttled",
	// "baseline".
	Name string
	N    int
	// Latency and Throttle are the simulators' faults (live rows).
	Latency  time.Duration
	Throttle float64
	Live     bool
	// Requests are the simulators' counts (live rows).
	Requests Counts
	// Bounds are the clouds' lower bounds for the fleet (live rows).
	Bounds []Bound
	// Client is gpufinops's usage (the baseline's: the bench's wall only);
	// Sim cloudsim's.
	Client, Sim Usage
	Outcome     Outcome
	// Same, on a throttled row, says whether the report equals the clean
	// scan's at the same size and latency.
	Same *bool
	// Partial, when set, says the scan exited 3: some scope failed, and
	// no target counts the row as a pass.
	Partial string
	// Sent is the requests the baseline's clients sent (baseline rows).
	Sent int
	// MetricRetries are the baseline's GetMetricData attempts the SDK
	// repeated (baseline rows).
	MetricRetries int
	// Note explains a row that could not be measured or compared.
	Note string
	Err  error
}

// BoundTotal is the physical request bound over the row's clouds.
func (r Row) BoundTotal() int {
	n := 0
	for _, b := range r.Bounds {
		n += b.Total()
	}
	return n
}

// CriticalPath is the longest chain over the clouds times the latency.
func (r Row) CriticalPath() time.Duration {
	var d time.Duration
	for _, b := range r.Bounds {
		d = max(d, b.CriticalPath(r.Latency))
	}
	return d
}

// CPUFloor is the CPU the client and the simulators used divided among the
// machine's cores: the wall no scheduling can beat on this machine.
func (r Row) CPUFloor() time.Duration {
	return (r.Client.CPU + r.Sim.CPU) / time.Duration(runtime.NumCPU())
}

// Config is what Run measures.
type Config struct {
	// Sizes get an engine-only row each (analyze --fleet FILE).
	Sizes []int
	// Live are the sizes also scanned live through the simulators.
	Live []int
	// Latency is the simulators' added latency for the live rows.
	Latency time.Duration
	// Target is the size that also gets the 0 ms, throttled and baseline
	// rows (when it is scanned live).
	Target int
	// Throttle is the throttled row's share of throttled requests.
	Throttle float64
	// Baseline runs the per-instance baseline at Target.
	Baseline bool
	Fleet    FleetOptions
	// Dir holds the fleets, reports and binaries; Bin is built there when
	// its paths are empty.
	Dir string
	Bin Binaries
	// Progress, when set, gets a line per step.
	Progress io.Writer
	// Profile, when set, is a directory that gets each row's CPU and
	// allocation profiles (gpufinops's, and cloudsim's CPU for live rows),
	// named after the row and size: scan-10000.cpu, scan-10000.sim.cpu, …
	Profile string
	// Now is the clock that sameHour reads; nil is time.Now.
	Now func() time.Time
	// EngineRuns is how many times each engine row runs (0 is 1); the row
	// shows the run of median CPU and the highest peak of them all.
	EngineRuns int
}

func (c Config) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

// profiles returns the environment that makes gpufinops profile the row
// into c.Profile, and the path of cloudsim's CPU profile ("" when off).
func (c Config) profiles(row string, n int) (env []string, sim string) {
	if c.Profile == "" {
		return nil, ""
	}
	base := filepath.Join(c.Profile, fmt.Sprintf("%s-%d", profileSlug(row), n))
	return []string{"GPUFINOPS_CPUPROFILE=" + base + ".cpu", "GPUFINOPS_MEMPROFILE=" + base + ".mem"}, base + ".sim.cpu"
}

// profileSlug turns a row name ("scan 10 % throttled") into a file name.
func profileSlug(name string) string {
	var b strings.Builder
	for _, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		case b.Len() > 0 && !strings.HasSuffix(b.String(), "-"):
			b.WriteByte('-')
		}
	}
	return strings.TrimSuffix(b.String(), "-")
}

// Run measures every row the configuration asks for, a size at a time; a
// row that fails carries its error and the others still run.
func Run(ctx context.Context, c Config) ([]Row, error) {
	logf := func(format string, a ...any) {
		if c.Progress != nil {
			fmt.Fprintf(c.Progress, "bench: "+format+"\n", a...)
		}
	}
	if c.Bin.GPUFinOps == "" {
		logf("building gpufinops and cloudsim")
		b, err := Build(ctx, c.Dir)
		if err != nil {
			return nil, err
		}
		c.Bin = b
	}
	sizes := append([]int(nil), c.Sizes...)
	for _, n := range c.Live {
		if !containsInt(sizes, n) {
			sizes = append(sizes, n)
		}
	}
	sort.Ints(sizes)
	var rows []Row
	for _, n := range sizes {
		logf("generating %d instances", n)
		g, err := Generate(ctx, c.Bin, c.Dir, n, c.Fleet)
		if err != nil {
			return rows, fmt.Errorf("generating %d instances: %w", n, err)
		}
		if containsInt(c.Sizes, n) {
			logf("engine, %d instances from %s", n, filepath.Base(g.Path))
			rows = append(rows, engineRow(ctx, c, g))
		}
		if !containsInt(c.Live, n) {
			_ = os.Remove(g.Path)
			continue
		}
		cleanScan := func() Row {
			logf("scan, %d instances, %s latency", n, c.Latency)
			return scanRow(ctx, c, g, "scan", SimOptions{Latency: c.Latency}, allClouds)
		}
		if n != c.Target || c.Throttle <= 0 {
			rows = append(rows, cleanScan())
		}
		if n == c.Target {
			var thr Row
			if c.Throttle > 0 {
				var clean Row
				var oneHour bool
				clean, thr, oneHour = sameHour(c.now, logf, cleanScan, func() Row {
					logf("scan, %d instances, %s latency, %g %% throttled", n, c.Latency, 100*c.Throttle)
					return scanRow(ctx, c, g, fmt.Sprintf("scan %g %% throttled", 100*c.Throttle), SimOptions{Latency: c.Latency, ThrottleRate: c.Throttle}, allClouds)
				})
				if thr.Err == nil && clean.Err == nil && oneHour {
					same := thr.Outcome == clean.Outcome
					thr.Same = &same
				}
				rows = append(rows, clean)
			}
			if c.Latency != 0 {
				logf("scan, %d instances, 0 ms latency", n)
				rows = append(rows, scanRow(ctx, c, g, "scan 0 ms", SimOptions{}, allClouds))
			}
			if c.Throttle > 0 {
				rows = append(rows, thr)
			}
			if c.Baseline {
				logf("scan, %d instances' AWS part, %s latency", n, c.Latency)
				rows = append(rows, scanRow(ctx, c, g, "scan aws", SimOptions{Latency: c.Latency}, string(fleet.AWS)))
				logf("baseline, per-instance CloudWatch reads of %d instances' AWS part, %s latency", n, c.Latency)
				rows = append(rows, baselineRow(ctx, c, g))
			}
		}
		_ = os.Remove(g.Path)
	}
	return rows, nil
}

// hourAttempts bounds how often sameHour runs its pair of scans.
const hourAttempts = 3

// sameHour runs the clean scan and then the throttled one, and both again
// (up to hourAttempts times) when the UTC hour changed between the clean
// scan's start and the throttled scan's end. The simulators and gpufinops
// both read the wall clock, and a report depends on its hour: the
// utilization window ends at the current hour and the simulators' series,
// launch times and stopped spans are keyed by absolute time, so two scans
// that straddle an hour read different windows and need not agree, throttled
// or not. Within one hour they must. oneHour is false, and the throttled
// row says why in its Note, when every attempt straddled an hour.
func sameHour(now func() time.Time, logf func(string, ...any), clean, throttled func() Row) (c, t Row, oneHour bool) {
	for attempt := 1; ; attempt++ {
		began := now().UTC().Truncate(time.Hour)
		c, t = clean(), throttled()
		ended := now().UTC().Truncate(time.Hour)
		if ended.Equal(began) {
			return c, t, true
		}
		if attempt == hourAttempts {
			t.Note = fmt.Sprintf("not compared: the clean and throttled scans straddled an hour on each of %d attempts (last %s → %s), so they read different utilization windows", attempt, began.Format("15:04"), ended.Format("15:04"))
			return c, t, false
		}
		logf("the hour changed during the clean and throttled scans (%s → %s): they read different utilization windows; both again", began.Format("15:04"), ended.Format("15:04"))
	}
}

func containsInt(s []int, n int) bool {
	for _, v := range s {
		if v == n {
			return true
		}
	}
	return false
}

func engineRow(ctx context.Context, c Config, g Generated) Row {
	r := Row{Name: "engine", N: g.Instances}
	home, err := os.MkdirTemp(c.Dir, "home-")
	if err != nil {
		r.Err = err
		return r
	}
	defer os.RemoveAll(home)
	out := filepath.Join(c.Dir, fmt.Sprintf("report-engine-%d.json", g.Instances))
	defer os.Remove(out)
	penv, _ := c.profiles(r.Name, g.Instances)
	runs := max(1, c.EngineRuns)
	if penv != nil {
		runs = 1 // a profiled run is not timed against others
	}
	var usages []Usage
	for i := range runs {
		u, err := Analyze(ctx, c.Bin, append(scanEnv("http://127.0.0.1:1", home), penv...), out, "--fleet", g.Path)
		if err == nil {
			var o Outcome
			if o, err = outcomeOf(out); err == nil && i > 0 && o != r.Outcome {
				err = fmt.Errorf("engine run %d of %d gave another report than the first", i+1, runs)
			}
			r.Outcome = o
		}
		if err != nil {
			r.Client, r.Err = u, err
			return r
		}
		os.Remove(out)
		usages = append(usages, u)
	}
	r.Client = medianUsage(usages)
	if runs > 1 {
		lo, hi := usages[0].CPU, usages[0].CPU
		for _, u := range usages[1:] {
			lo, hi = min(lo, u.CPU), max(hi, u.CPU)
		}
		r.Note = fmt.Sprintf("median CPU of %d runs (%.2f–%.2f s), the highest peak", runs, lo.Seconds(), hi.Seconds())
	}
	return r
}

// medianUsage is the run of median CPU (the lower middle one of an even
// count) with the highest peak of all runs.
func medianUsage(us []Usage) Usage {
	sorted := slices.Clone(us)
	slices.SortFunc(sorted, func(a, b Usage) int { return cmp.Compare(a.CPU, b.CPU) })
	m := sorted[(len(sorted)-1)/2]
	for _, u := range us {
		m.PeakRSS = max(m.PeakRSS, u.PeakRSS)
	}
	return m
}

// scanRow scans the fleet live with gpufinops analyze --provider clouds
// ("aws,azure,gcp", or one cloud: its bound only).
func scanRow(ctx context.Context, c Config, g Generated, name string, o SimOptions, clouds string) (r Row) {
	r = Row{Name: name, N: g.Instances, Latency: o.Latency, Throttle: o.ThrottleRate, Live: true, Bounds: Bounds(g.Shape, DefaultSteps)}
	if !strings.Contains(clouds, ",") {
		var mine []Bound
		for _, b := range r.Bounds {
			if string(b.Cloud) == clouds {
				mine = append(mine, b)
			}
		}
		r.Bounds = mine
	}
	penv, simProfile := c.profiles(name, g.Instances)
	o.CPUProfile = simProfile
	sim, err := StartSim(ctx, c.Bin, g.Path, o)
	if err != nil {
		r.Err = err
		return r
	}
	defer func() { r.Sim = sim.Stop() }()
	home, err := os.MkdirTemp(c.Dir, "home-")
	if err != nil {
		r.Err = err
		return r
	}
	defer os.RemoveAll(home)
	out := filepath.Join(c.Dir, fmt.Sprintf("report-scan-%d.json", g.Instances))
	defer os.Remove(out)
	args := []string{"--provider", clouds}
	for _, a := range g.AWSRoles {
		args = append(args, "--role-arn", "arn:aws:iam::"+a+":role/gpufinops-bench")
	}
	r.Client, r.Err = Analyze(ctx, c.Bin, append(scanEnv(sim.URL, home), penv...), out, args...)
	var partial *PartialError
	if errors.As(r.Err, &partial) {
		r.Partial, r.Err = partial.Error(), nil
	}
	if r.Err != nil {
		return r
	}
	if r.Outcome, r.Err = outcomeOf(out); r.Err != nil {
		return r
	}
	r.Requests, r.Err = sim.Requests(ctx)
	return r
}

// allClouds is the scan rows' --provider.
const allClouds = "aws,azure,gcp"

// errNoAWS is the baseline's answer for a fleet without AWS instances.
var errNoAWS = errors.New("the fleet has no AWS instances")
