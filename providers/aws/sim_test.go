package aws

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pricing"
	"github.com/gpufinops/gpufinops/pricing/catalog"
	"github.com/gpufinops/gpufinops/providers"
	"github.com/gpufinops/gpufinops/providers/aws/sim"
	"github.com/gpufinops/gpufinops/providers/aws/simcat"
	"github.com/gpufinops/gpufinops/providers/file"
	"github.com/gpufinops/gpufinops/providers/providertest"
)

// The tests in this file run the adapter, through the real SDK, against the
// wire-level simulator serving the demo fleet's AWS part or a generated one.

// simNow is the simulator's clock: the end of the demo fleet's week.
var simNow = time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)

// scanCatalog is the embedded catalog.
func scanCatalog(t testing.TB) pricing.Catalog {
	t.Helper()
	cat, err := catalog.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	return cat
}

// scanDemo is the demo fleet completed from the catalog.
func scanDemo(t testing.TB) *fleet.Fleet {
	t.Helper()
	f, err := file.Demo()
	if err != nil {
		t.Fatal(err)
	}
	if err := pricing.Complete(f, scanCatalog(t)); err != nil {
		t.Fatal(err)
	}
	return f
}

// scanTypes is what DescribeInstanceTypes says of the fleet's AWS types,
// from the catalog, as cmd/cloudsim serves them.
func scanTypes(t testing.TB, f *fleet.Fleet) []sim.TypeInfo {
	t.Helper()
	return simcat.Options(f, scanCatalog(t)).Types
}

// scanFleet generates n AWS instances: most in us-east-1 (more than one
// DescribeInstances page), the rest in us-west-2 and eu-west-1; a mix of
// types (1 to 8 GPUs, 80 GB A100s), spot (one-time requests) and on-demand,
// running and stopped, every seventh without GPU metrics.
func scanFleet(t testing.TB, n int) *fleet.Fleet {
	t.Helper()
	typesCycle := []string{"g5.xlarge", "g5.12xlarge", "p4de.24xlarge", "g4dn.xlarge", "g6e.xlarge", "p4d.24xlarge", "g5.2xlarge"}
	f := &fleet.Fleet{APIVersion: fleet.APIVersion, Kind: fleet.Kind}
	for i := range n {
		region, zone := "us-east-1", "us-east-1"+string(rune('a'+i%4))
		switch {
		case i%10 == 8:
			region, zone = "us-west-2", "us-west-2a"
		case i%20 == 9:
			region, zone = "eu-west-1", "eu-west-1b"
		}
		launch := simNow.Add(-time.Duration(24+i) * time.Hour)
		in := fleet.Instance{
			ID:           fmt.Sprintf("i-%017x", 0x1000+i),
			Name:         fmt.Sprintf("node-%d", i),
			Provider:     fleet.AWS,
			Account:      "111122223333",
			Region:       region,
			Zone:         zone,
			InstanceType: typesCycle[i%len(typesCycle)],
			Lifecycle:    fleet.OnDemand,
			State:        fleet.Running,
			LaunchTime:   &launch,
			Tags:         map[string]string{"Team": fmt.Sprintf("team-%d", i%5), "Name": fmt.Sprintf("node-%d", i)},
		}
		if i%6 == 1 {
			in.Lifecycle = fleet.Spot
		}
		if i%11 == 3 {
			in.State = fleet.Stopped
		}
		if i%7 != 4 {
			a := float64(10 + i%60)
			in.Utilization = &fleet.Utilization{
				Window:    &fleet.TimeRange{Start: simNow.AddDate(0, 0, -7), End: simNow},
				GPU:       &fleet.Stats{Avg: a, P95: a + 20, Max: a + 30},
				GPUMemory: &fleet.Stats{Avg: a / 2, P95: a/2 + 10, Max: a/2 + 20},
				CPU:       &fleet.Stats{Avg: 20, P95: 40, Max: 60},
				Memory:    &fleet.Stats{Avg: 30, P95: 50, Max: 70},
			}
		}
		f.Instances = append(f.Instances, in)
	}
	if err := pricing.Complete(f, scanCatalog(t)); err != nil {
		t.Fatal(err)
	}
	return f
}

// scanSim serves f from a simulator on a local HTTP server.
func scanSim(t testing.TB, f *fleet.Fleet, opts sim.Options) (*httptest.Server, *sim.Server) {
	t.Helper()
	if opts.Types == nil {
		opts.Types = scanTypes(t, f)
	}
	if opts.Now == nil {
		opts.Now = func() time.Time { return simNow }
	}
	if opts.AccountID == "" {
		opts.AccountID = "111122223333"
	}
	s := sim.New(f, strict(t, opts))
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return srv, s
}

// scanProvider is the adapter pointed at the simulator, signing with static
// test credentials so the simulator reads the region from the signature.
func scanProvider(t testing.TB, url string, regions ...string) *Provider {
	t.Helper()
	return scanProviderWith(t, url, nil, regions...)
}

// scanProviderWith is scanProvider sending through client (nil: the SDK's).
func scanProviderWith(t testing.TB, url string, client *http.Client, regions ...string) *Provider {
	t.Helper()
	if tt, ok := t.(*testing.T); ok {
		tt.Setenv("AWS_ACCESS_KEY_ID", "test")
		tt.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	}
	p, err := New(context.Background(), providers.Options{Endpoint: url, Regions: regions, Now: func() time.Time { return simNow },
		// Retries wait 1 ms, not the SDK's seconds: fault tests do not sleep.
		RetryMaxBackoff: time.Millisecond, HTTPClient: client})
	if err != nil {
		t.Fatal(err)
	}
	return p.(*Provider)
}

// retryCounter counts, by operation, the requests the SDK sent again (its
// amz-sdk-request header says attempt 2 or later): a retry after a dropped
// connection on a loaded machine, which the simulator counts as a request
// too but is not a second call.
type retryCounter struct {
	rt      http.RoundTripper
	mu      sync.Mutex
	retries map[string]int
}

func (c *retryCounter) RoundTrip(r *http.Request) (*http.Response, error) {
	if a := r.Header.Get("Amz-Sdk-Request"); a != "" && !strings.HasPrefix(a, "attempt=1;") {
		op, req, err := operationOf(r)
		if err != nil {
			return nil, err
		}
		r = req
		c.mu.Lock()
		if c.retries == nil {
			c.retries = map[string]int{}
		}
		c.retries[op]++
		c.mu.Unlock()
	}
	return c.rt.RoundTrip(r)
}

// operationOf names a request's operation: the last path segment of the
// RPC v2 protocol (CloudWatch), the X-Amz-Target of AWS JSON, or the Action
// of the query protocol (EC2, STS), whose body it reads; the request to
// send on is r, or a copy with the body to read again.
func operationOf(r *http.Request) (string, *http.Request, error) {
	if _, op, ok := strings.Cut(r.URL.Path, "/operation/"); ok {
		return op, r, nil
	}
	if t := r.Header.Get("X-Amz-Target"); t != "" {
		return t[strings.LastIndex(t, ".")+1:], r, nil
	}
	if r.Body == nil {
		return "", r, nil
	}
	b, err := io.ReadAll(r.Body)
	r.Body.Close()
	if err != nil {
		return "", nil, err
	}
	r = r.Clone(r.Context())
	r.Body = io.NopCloser(bytes.NewReader(b))
	form, _ := url.ParseQuery(string(b))
	return form.Get("Action"), r, nil
}

// calls is the simulator's counts less the SDK's retries.
func (c *retryCounter) calls(t testing.TB, counts map[string]map[string]int) map[string]map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	for op, n := range c.retries {
		for svc, byOp := range counts {
			if byOp[op] >= n {
				t.Logf("%s.%s: %d of %d attempts were the SDK's retries", svc, op, n, byOp[op])
				byOp[op] -= n
			}
		}
	}
	return counts
}

// retryCountedProvider is scanProvider sending through a retryCounter.
func retryCountedProvider(t testing.TB, endpoint string, regions ...string) (*Provider, *retryCounter) {
	t.Helper()
	rc := &retryCounter{rt: awshttp.NewBuildableClient().GetTransport()}
	return scanProviderWith(t, endpoint, &http.Client{Transport: rc}, regions...), rc
}

// withoutPrices hides the adapter's live prices from providers.Collect, so
// that a scan is inventory and utilization only (the price tests are
// elsewhere).
type withoutPrices struct {
	providers.Provider
	providers.UtilizationReader
}

func scanOnly(p *Provider) withoutPrices { return withoutPrices{p, p} }

// simRequests reads /_sim/requests: service → operation → count.
func simRequests(t testing.TB, url string) map[string]map[string]int {
	t.Helper()
	resp, err := http.Get(url + "/_sim/requests")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]map[string]int
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	return out
}

// simStates reads /_sim/state: instance ID → state.
func simStates(t testing.TB, url string) map[string]string {
	t.Helper()
	resp, err := http.Get(url + "/_sim/state")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		Instances []sim.InstanceState `json:"instances"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, s := range body.Instances {
		out[s.ID] = s.State
	}
	return out
}

// awsOnly are f's EC2 instances: the ones the EC2 simulator serves and
// the EC2 listing returns (SageMaker items are another service's).
// vmsOf are the EC2 instances of a listing, without its SageMaker items
// (their own tests are sagemaker_sim_test.go's).
func vmsOf(items []fleet.Instance) []fleet.Instance {
	var out []fleet.Instance
	for _, in := range items {
		if !in.IsManaged() {
			out = append(out, in)
		}
	}
	return out
}

func awsOnly(f *fleet.Fleet) map[string]fleet.Instance {
	out := map[string]fleet.Instance{}
	for _, in := range f.Instances {
		if in.Provider == fleet.AWS && !in.IsManaged() {
			out[in.ID] = in
		}
	}
	return out
}

func scopeOf(t testing.TB, p *Provider, region string) providers.Scope {
	t.Helper()
	scopes, err := p.Scopes(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range scopes {
		if s.Region == region {
			return s
		}
	}
	t.Fatalf("no scope for %s in %v", region, scopes)
	return providers.Scope{}
}

func TestSimInventoryDemo(t *testing.T) {
	demo := scanDemo(t)
	srv, _ := scanSim(t, demo, sim.Options{})
	p := scanProvider(t, srv.URL, "us-east-1")
	got, err := p.ListGPUInstances(context.Background(), scopeOf(t, p, "us-east-1"))
	if err != nil {
		t.Fatal(err)
	}
	got = vmsOf(got)
	want := awsOnly(demo)
	if len(got) != len(want) {
		t.Fatalf("listed %d instances, the demo has %d EC2 instances", len(got), len(want))
	}
	for _, g := range got {
		w, ok := want[g.ID]
		if !ok {
			t.Errorf("%s is not in the demo", g.ID)
			continue
		}
		if g.GPU != w.GPU || g.VCPUs != w.VCPUs || g.MemoryGiB != w.MemoryGiB {
			t.Errorf("%s hardware: GPU %+v, %v vCPUs, %v GiB; the catalog says %+v, %v, %v", g.ID, g.GPU, g.VCPUs, g.MemoryGiB, w.GPU, w.VCPUs, w.MemoryGiB)
		}
		if g.Provider != fleet.AWS || g.Account != w.Account || g.Region != w.Region || g.Zone != w.Zone || g.InstanceType != w.InstanceType ||
			g.Lifecycle != w.Lifecycle || g.State != w.State || g.Name != w.Name {
			t.Errorf("%s = %s %s %s %s %s %s %s %q\nwant %s %s %s %s %s %s %s %q", g.ID,
				g.Provider, g.Account, g.Region, g.Zone, g.InstanceType, g.Lifecycle, g.State, g.Name,
				w.Provider, w.Account, w.Region, w.Zone, w.InstanceType, w.Lifecycle, w.State, w.Name)
		}
		if g.LaunchTime == nil || w.LaunchTime == nil || !g.LaunchTime.Equal(*w.LaunchTime) {
			t.Errorf("%s launch time %v, want %v", g.ID, g.LaunchTime, w.LaunchTime)
		}
		wantTags := map[string]string{}
		for k, v := range w.Tags {
			wantTags[k] = v
		}
		if w.Name != "" {
			wantTags["Name"] = w.Name
		}
		// The workload block travels as tags (fleet.WorkloadTags).
		for k, v := range fleet.WorkloadTags(w.Workload, w.Tags) {
			wantTags[k] = v
		}
		if fmt.Sprint(g.Tags) != fmt.Sprint(wantTags) {
			t.Errorf("%s tags %v, want %v", g.ID, g.Tags, wantTags)
		}
	}
	// Empty region: empty, no error.
	if got, err := p.ListGPUInstances(context.Background(), providers.Scope{Provider: fleet.AWS, Account: "111122223333", Region: "ap-south-1", Profile: "default"}); err != nil || len(got) != 0 {
		t.Errorf("empty region: %d instances, %v", len(got), err)
	}
}

// TestSimInventoryFamilies lists one instance of each kind of accelerator
// the catalog has on AWS: its GPU facts must equal the catalog's, whatever
// DescribeInstanceTypes calls the device (A100 with 80 GB, partitions of an
// L4, Neuron devices, AMD and Habana GPUs).
func TestSimInventoryFamilies(t *testing.T) {
	typeNames := []string{"p4de.24xlarge", "p3dn.24xlarge", "g6f.xlarge", "g6f.4xlarge", "gr6f.4xlarge", "inf2.xlarge", "trn1.32xlarge",
		"g4ad.xlarge", "dl1.24xlarge", "g5g.xlarge", "p5.48xlarge", "p5e.48xlarge", "g7e.2xlarge", "p6-b200.48xlarge"}
	f := &fleet.Fleet{APIVersion: fleet.APIVersion, Kind: fleet.Kind}
	for i, typ := range typeNames {
		f.Instances = append(f.Instances, fleet.Instance{ID: fmt.Sprintf("i-%03d", i), Provider: fleet.AWS, Account: "111122223333",
			Region: "us-east-1", Zone: "us-east-1a", InstanceType: typ, Lifecycle: fleet.OnDemand, State: fleet.Running})
	}
	if err := pricing.Complete(f, scanCatalog(t)); err != nil {
		t.Fatal(err)
	}
	srv, _ := scanSim(t, f, sim.Options{})
	p := scanProvider(t, srv.URL, "us-east-1")
	got, err := p.ListGPUInstances(context.Background(), scopeOf(t, p, "us-east-1"))
	if err != nil {
		t.Fatal(err)
	}
	want := awsOnly(f)
	if len(got) != len(want) {
		t.Fatalf("listed %d instances, want %d", len(got), len(want))
	}
	for _, g := range got {
		w := want[g.ID]
		if g.GPU != w.GPU || g.VCPUs != w.VCPUs || g.MemoryGiB != w.MemoryGiB {
			t.Errorf("%s: GPU %+v, %v vCPUs, %v GiB; the catalog says %+v, %v, %v", w.InstanceType, g.GPU, g.VCPUs, g.MemoryGiB, w.GPU, w.VCPUs, w.MemoryGiB)
		}
	}
}

func TestSimUtilizationDemo(t *testing.T) {
	demo := scanDemo(t)
	srv, _ := scanSim(t, demo, sim.Options{})
	p := scanProvider(t, srv.URL, "us-east-1")
	scope := scopeOf(t, p, "us-east-1")
	got, err := p.ListGPUInstances(context.Background(), scope)
	if err != nil {
		t.Fatal(err)
	}
	got = vmsOf(got)
	week := fleet.TimeRange{Start: simNow.AddDate(0, 0, -7), End: simNow}
	notes, err := p.ReadUtilization(context.Background(), scope, got, week)
	if err != nil {
		t.Fatal(err)
	}
	if len(notes) != 0 {
		t.Errorf("notes: %q", notes)
	}
	want := awsOnly(demo)
	r2 := func(v float64) float64 { return math.Round(v*100) / 100 }
	sameStats := func(a, b *fleet.Stats) bool {
		if a == nil || b == nil {
			return a == b
		}
		return r2(a.Avg) == r2(b.Avg) && r2(a.P95) == r2(b.P95) && r2(a.Max) == r2(b.Max)
	}
	for i := range got {
		g := &got[i]
		w := want[g.ID]
		if g.Utilization == nil || len(g.Utilization.Samples) == 0 {
			t.Errorf("%s: no samples", g.ID)
			continue
		}
		gs, ws := g.Utilization.Summarize(), w.Utilization.Summarize()
		for _, m := range []struct {
			name string
			a, b *fleet.Stats
		}{{"gpu", gs.GPU, ws.GPU}, {"gpuMemory", gs.GPUMemory, ws.GPUMemory}, {"cpu", gs.CPU, ws.CPU}, {"memory", gs.Memory, ws.Memory}} {
			if !sameStats(m.a, m.b) {
				t.Errorf("%s %s: %+v from the samples, the file says %+v", g.ID, m.name, m.a, m.b)
			}
		}
		if h, wh := g.MonthlyHours(), w.MonthlyHours(); r2(h) != r2(wh) {
			t.Errorf("%s: %.2f hours a month, the file says %.2f", g.ID, h, wh)
		}
		if n := len(g.Utilization.Samples[0].GPU); float64(n) != w.GPU.Count {
			t.Errorf("%s: %d GPU series, want %v", g.ID, n, w.GPU.Count)
		}
	}
	for i := range got {
		if g := &got[i]; g.ID == "train-p4d-1" && r2(g.MonthlyHours()) != 260.71 {
			t.Errorf("train-p4d-1 runs %.2f hours a month, want 260.71", g.MonthlyHours())
		}
	}

	// Over two weeks the running hours are the same share of the window.
	got2, err := p.ListGPUInstances(context.Background(), scope)
	if err != nil {
		t.Fatal(err)
	}
	got2 = vmsOf(got2)
	if _, err := p.ReadUtilization(context.Background(), scope, got2, fleet.TimeRange{Start: simNow.AddDate(0, 0, -14), End: simNow}); err != nil {
		t.Fatal(err)
	}
	for i := range got2 {
		g := &got2[i]
		w := want[g.ID]
		if h, wh := g.MonthlyHours(), w.MonthlyHours(); r2(h) != r2(wh) {
			t.Errorf("14 days: %s runs %.2f hours a month, the file says %.2f", g.ID, h, wh)
		}
	}
}

// expectedSeries counts the series of a region's running instances under
// the metric contract: per GPU utilization, memory used and total; host
// memory for instances with the agent; CPU for every running instance.
func expectedSeries(f *fleet.Fleet, region string) int {
	n := 0
	for _, in := range f.Instances {
		if in.Provider != fleet.AWS || in.Region != region || in.State == fleet.Stopped {
			continue
		}
		n++ // CPUUtilization
		if in.Utilization != nil {
			n += 3*int(in.GPU.Count) + 1
		}
	}
	return n
}

func TestSimScanLarge(t *testing.T) {
	f := scanFleet(t, 1200)
	regions := []string{"eu-west-1", "us-east-1", "us-west-2"}
	srv, _ := scanSim(t, f, sim.Options{})
	p, retries := retryCountedProvider(t, srv.URL, regions...)
	week := fleet.TimeRange{Start: simNow.AddDate(0, 0, -7), End: simNow}
	res, err := providers.Collect(context.Background(), scanOnly(p), providers.CollectOptions{Window: week})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Failures) > 0 {
		t.Fatalf("failures: %v", res.Failures)
	}
	want := awsOnly(f)
	if len(res.Fleet.Instances) != len(want) {
		t.Fatalf("listed %d instances, want %d", len(res.Fleet.Instances), len(want))
	}
	noGPU := map[string]bool{}
	for _, in := range res.Fleet.Instances {
		w := want[in.ID]
		if in.GPU != w.GPU || in.Lifecycle != w.Lifecycle || in.State != w.State || in.Zone != w.Zone || in.Region != w.Region || in.Tags["Team"] != w.Tags["Team"] ||
			in.Name != w.Name || in.LaunchTime == nil || !in.LaunchTime.Equal(*w.LaunchTime) {
			t.Fatalf("%s = %+v\nwant %+v", in.ID, in, w)
		}
		switch {
		case in.State == fleet.Stopped:
			if in.Utilization != nil {
				t.Errorf("%s is stopped but has utilization", in.ID)
			}
		case w.Utilization == nil:
			noGPU[in.ID] = true
			if in.Utilization != nil {
				t.Errorf("%s has no GPU metrics but has utilization", in.ID)
			}
		default:
			if in.Utilization == nil || len(in.Utilization.Samples) != 168 {
				t.Errorf("%s: utilization %v, want 168 hourly samples", in.ID, in.Utilization)
			}
		}
	}
	for _, note := range res.Notes {
		id, _, _ := strings.Cut(note, ":")
		if !noGPU[id] || !strings.Contains(note, "no GPU metrics in CWAgent") {
			t.Errorf("unexpected note %q", note)
		}
		delete(noGPU, id)
	}
	if len(noGPU) != 0 {
		t.Errorf("no note for %d instances without GPU metrics", len(noGPU))
	}

	counts := retries.calls(t, simRequests(t, srv.URL))
	wantCalls := 0
	for _, r := range regions {
		wantCalls += (expectedSeries(f, r) + maxQueriesPerCall - 1) / maxQueriesPerCall
	}
	if got := counts["monitoring"]["GetMetricData"]; got != wantCalls {
		t.Errorf("GetMetricData calls = %d, want ⌈series/500⌉ per region = %d", got, wantCalls)
	}
	// us-east-1 has 1,020 instances: two pages of DescribeInstances, one page elsewhere.
	if got := counts["ec2"]["DescribeInstances"]; got != 4 {
		t.Errorf("DescribeInstances calls = %d, want 4 (two pages in us-east-1)", got)
	}
	if got := counts["ec2"]["DescribeInstanceTypes"]; got != 3 {
		t.Errorf("DescribeInstanceTypes calls = %d, want one per region", got)
	}
	t.Logf("requests: %v", counts)
}

func TestSimThrottledAndFailingRegion(t *testing.T) {
	f := scanFleet(t, 300)
	regions := []string{"eu-west-1", "us-east-1", "us-west-2"}
	week := fleet.TimeRange{Start: simNow.AddDate(0, 0, -7), End: simNow}

	srv, _ := scanSim(t, f, sim.Options{ThrottleRate: 0.3, Seed: 7})
	p := scanProvider(t, srv.URL, regions...)
	res, err := providers.Collect(context.Background(), scanOnly(p), providers.CollectOptions{Window: week})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Failures) > 0 || len(res.Fleet.Instances) != len(f.Instances) {
		t.Fatalf("with 30%% throttling: %d of %d instances, failures %v", len(res.Fleet.Instances), len(f.Instances), res.Failures)
	}
	withUtil := 0
	for _, in := range res.Fleet.Instances {
		if in.Utilization != nil {
			withUtil++
		}
	}
	if withUtil == 0 {
		t.Error("no utilization read under throttling")
	}

	srv, _ = scanSim(t, f, sim.Options{FailRegions: []string{"us-west-2"}})
	p = scanProvider(t, srv.URL, regions...)
	res, err = providers.Collect(context.Background(), scanOnly(p), providers.CollectOptions{Window: week})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Failures) != 1 || res.Failures[0].Scope.Region != "us-west-2" {
		t.Fatalf("failures %v, want us-west-2 only", res.Failures)
	}
	var se *providers.ScopeError
	if !errors.As(error(res.Failures[0]), &se) || !strings.Contains(se.Error(), "DescribeInstances") {
		t.Errorf("failure %v does not name the call", res.Failures[0])
	}
	for _, in := range res.Fleet.Instances {
		if in.Region == "us-west-2" {
			t.Fatalf("%s from the failing region", in.ID)
		}
	}
	if len(res.Fleet.Instances) == 0 {
		t.Fatal("the other regions were lost")
	}
}

func TestSimCancellation(t *testing.T) {
	f := scanFleet(t, 50)
	srv, _ := scanSim(t, f, sim.Options{})
	p := scanProvider(t, srv.URL, "us-east-1")
	scope := scopeOf(t, p, "us-east-1")
	instances, err := p.ListGPUInstances(context.Background(), scope)
	if err != nil {
		t.Fatal(err)
	}
	slow, _ := scanSim(t, f, sim.Options{Latency: 2 * time.Second})
	p = scanProvider(t, slow.URL, "us-east-1")
	for name, call := range map[string]func(ctx context.Context) error{
		"inventory": func(ctx context.Context) error { _, err := p.ListGPUInstances(ctx, scope); return err },
		"utilization": func(ctx context.Context) error {
			_, err := p.ReadUtilization(ctx, scope, instances, fleet.TimeRange{Start: simNow.AddDate(0, 0, -7), End: simNow})
			return err
		},
		"stop": func(ctx context.Context) error { _, err := p.Stop(ctx, scope, instances[0].ID, true); return err },
	} {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		start := time.Now()
		go func() { done <- call(ctx) }()
		time.Sleep(50 * time.Millisecond)
		cancel()
		select {
		case err := <-done:
			if !errors.Is(err, context.Canceled) {
				t.Errorf("%s: %v, want context.Canceled", name, err)
			}
			if d := time.Since(start); d > time.Second {
				t.Errorf("%s took %v after the cancel", name, d)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s ignored the cancelled context", name)
		}
	}
}

func TestSimStop(t *testing.T) {
	f := scanDemo(t)
	gen := scanFleet(t, 20)
	f.Instances = append(f.Instances, gen.Instances...)
	srv, _ := scanSim(t, f, sim.Options{})
	p := scanProvider(t, srv.URL, "us-east-1")
	scope := scopeOf(t, p, "us-east-1")
	ctx := context.Background()

	before := simStates(t, srv.URL)
	res, err := p.Stop(ctx, scope, "nb-g4dn-1", true)
	if err != nil || res.AlreadyStopped || res.CurrentState != "running" {
		t.Fatalf("dry run = %+v, %v", res, err)
	}
	if after := simStates(t, srv.URL); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Fatalf("the dry run changed state")
	}

	res, err = p.Stop(ctx, scope, "nb-g4dn-1", false)
	if err != nil || res.PreviousState != "running" || (res.CurrentState != "stopping" && res.CurrentState != "stopped") {
		t.Fatalf("stop = %+v, %v", res, err)
	}
	if s := simStates(t, srv.URL)["nb-g4dn-1"]; s != "stopped" && s != "stopping" {
		t.Fatalf("/_sim/state says %q after the stop", s)
	}
	res, err = p.Stop(ctx, scope, "nb-g4dn-1", false)
	if err != nil || !res.AlreadyStopped {
		t.Fatalf("second stop = %+v, %v; want AlreadyStopped", res, err)
	}

	var spot string
	for _, in := range gen.Instances {
		if in.Lifecycle == fleet.Spot && in.State == fleet.Running && in.Region == "us-east-1" {
			spot = in.ID
			break
		}
	}
	if _, err := p.Stop(ctx, scope, spot, false); !errors.Is(err, providers.ErrNotStoppable) {
		t.Errorf("one-time spot %s: %v, want ErrNotStoppable", spot, err)
	}
	if s := simStates(t, srv.URL)[spot]; s != "running" {
		t.Errorf("one-time spot is %q after the refused stop", s)
	}
	if _, err := p.Stop(ctx, scope, "i-0000000000doesnotexist", false); !errors.Is(err, providers.ErrNotFound) {
		t.Errorf("unknown instance: %v, want ErrNotFound", err)
	}
	// The inventory sees the stop.
	instances, err := p.ListGPUInstances(ctx, scope)
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range instances {
		if in.ID == "nb-g4dn-1" && in.State != fleet.Stopped {
			t.Errorf("nb-g4dn-1 listed as %s after the stop", in.State)
		}
	}
}

// TestSimConformance runs the whole conformance suite against the
// simulator; it may skip nothing.
func TestSimConformance(t *testing.T) {
	f := scanFleet(t, 120)
	sum := providertest.Run(t, providertest.Harness{
		Provider:     fleet.AWS,
		Fleet:        f,
		Regions:      []string{"ap-south-1", "eu-west-1", "us-east-1", "us-west-2"},
		Now:          simNow,
		New:          conformanceProvider,
		NotStoppable: func(in fleet.Instance) bool { return in.Lifecycle == fleet.Spot },
		UnknownID:    "i-0000000000doesnotexist",
		PriceCache:   true,
	})
	if len(sum.Skipped) > 0 {
		t.Errorf("the AWS adapter must pass every case; skipped: %q", sum.Skipped)
	}
}

// conformanceRole is the second account of providertest.Faults.FailAccount.
const conformanceRole = "arn:aws:iam::444455556666:role/gpufinops-read"

// conformanceProvider is the harness's New: a simulator serving s.Fleet with
// the faults as simulator options, fault hooks and a wrapper, and the
// adapter pointed at it with fast retries.
func conformanceProvider(t *testing.T, s providertest.Setup) (providers.Provider, error) {
	ft := s.Faults
	opts := simcat.Options(s.Fleet, scanCatalog(t))
	opts.ThrottleRate, opts.FailRegions, opts.Latency, opts.Regions, opts.Seed = ft.ThrottleRate, ft.FailRegions, ft.Latency, s.Regions, 3
	opts.Fault = func(service, op, region string) (int, string) {
		switch {
		case service == "monitoring" && slices.Contains(ft.FailMetricsRegions, region):
			return 500, "InternalFailure"
		case ft.FailPrices && (service == "pricing" || op == "DescribeSavingsPlansOfferingRates" || op == "DescribeSpotPriceHistory"):
			return 500, "InternalFailure"
		case ft.DenyList && op == "DescribeInstances":
			return 403, "UnauthorizedOperation"
		case ft.DenyStop && op == "StopInstances":
			return 403, "UnauthorizedOperation"
		}
		return 0, ""
	}
	var h http.Handler = sim.New(s.Fleet, withDefaults(t, s.Fleet, opts))
	var roles []string
	if ft.FailAccount {
		roles = []string{conformanceRole}
		h = denyAssumedRegions(h)
	}
	url := providertest.Backend(t, h, httptestServe(t))
	if ft.NoCredentials {
		t.Setenv("AWS_ACCESS_KEY_ID", "")
		t.Setenv("AWS_SECRET_ACCESS_KEY", "")
		t.Setenv("AWS_SESSION_TOKEN", "")
	} else {
		t.Setenv("AWS_ACCESS_KEY_ID", "test")
		t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	}
	now := simNow
	if !s.Now.IsZero() {
		now = s.Now
	}
	regions := s.Regions
	if ft.FailAccount {
		regions = nil // listed with DescribeRegions, which fails for the role
	}
	return New(context.Background(), providers.Options{
		Endpoint: url, Regions: regions, Adapter: providers.Values{OptRoleARNs: roles}, CacheDir: s.CacheDir,
		RetryMaxBackoff: time.Millisecond, Now: func() time.Time { return now },
	})
}

// withDefaults fills what scanSim fills.
func withDefaults(t testing.TB, f *fleet.Fleet, opts sim.Options) sim.Options {
	if opts.Types == nil {
		opts.Types = scanTypes(t, f)
	}
	if opts.Now == nil {
		opts.Now = func() time.Time { return simNow }
	}
	if opts.AccountID == "" {
		opts.AccountID = "111122223333"
	}
	return strict(t, opts)
}

// strict turns on the simulator's strict mode: every request the adapter
// sends and every answer it gets is checked against botocore's model, and a
// violation fails the test.
func strict(t testing.TB, opts sim.Options) sim.Options {
	opts.Strict = func(service, op string, err error) {
		t.Errorf("%s:%s breaks the botocore model: %v", service, op, err)
	}
	return opts
}

// denyAssumedRegions answers DescribeRegions signed with credentials
// AssumeRole issued (ASIA… keys) with UnauthorizedOperation: the assumed
// account's scopes cannot be listed.
func denyAssumedRegions(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		if strings.Contains(string(body), "Action=DescribeRegions") && strings.Contains(r.Header.Get("Authorization"), "Credential=ASIA") {
			w.Header().Set("Content-Type", "text/xml;charset=UTF-8")
			w.WriteHeader(http.StatusForbidden)
			_, _ = io.WriteString(w, `<?xml version="1.0" encoding="UTF-8"?>`+"\n"+
				`<Response><Errors><Error><Code>UnauthorizedOperation</Code><Message>You are not authorized to perform this operation.</Message></Error></Errors><RequestID>x</RequestID></Response>`)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// BenchmarkScan1000 scans 1,000 simulated instances in three regions
// (inventory and a week of utilization) and reports the requests per
// operation per scan.
func BenchmarkScan1000(b *testing.B) {
	f := scanFleet(b, 1000)
	regions := []string{"eu-west-1", "us-east-1", "us-west-2"}
	srv, s := scanSim(b, f, sim.Options{})
	p := scanProvider(b, srv.URL, regions...)
	week := fleet.TimeRange{Start: simNow.AddDate(0, 0, -7), End: simNow}
	s.ResetCounts()
	b.ResetTimer()
	for b.Loop() {
		p.typeMu.Lock()
		p.typeMap = map[string]*typeEntry{} // every scan starts cold
		p.typeMu.Unlock()
		res, err := providers.Collect(context.Background(), p, providers.CollectOptions{Window: week})
		if err != nil || len(res.Failures) > 0 {
			b.Fatal(err, res.Failures)
		}
	}
	b.StopTimer()
	counts := s.Counts()
	var ops []string
	for svc, byOp := range counts {
		for op, n := range byOp {
			ops = append(ops, svc+"."+op)
			b.ReportMetric(float64(n)/float64(b.N), op+"/scan")
		}
	}
	sort.Strings(ops)
	var sb strings.Builder
	for _, op := range ops {
		svc, name, _ := strings.Cut(op, ".")
		sb.WriteString(fmt.Sprintf("%-48s %8.1f per scan\n", op, float64(counts[svc][name])/float64(b.N)))
	}
	b.Logf("requests for %d instances (%s scans):\n%s", len(f.Instances), strconv.Itoa(b.N), sb.String())
}

// httptestServe starts a test server for the case and closes it at its end.
func httptestServe(t *testing.T) func(http.Handler) string {
	return func(h http.Handler) string {
		srv := httptest.NewServer(h)
		t.Cleanup(srv.Close)
		return srv.URL
	}
}

// throttleFirst throttles the first request of each operation in each
// region (with the simulator's throttling error), so that every operation
// is retried at least once whatever the order of concurrent requests.
func throttleFirst() func(service, op, region string) (int, string) {
	var mu sync.Mutex
	seen := map[string]bool{}
	return func(service, op, region string) (int, string) {
		k := service + "/" + op + "/" + region
		mu.Lock()
		first := !seen[k]
		seen[k] = true
		mu.Unlock()
		if !first {
			return 0, ""
		}
		return sim.Throttle(service)
	}
}

// TestRetryCounterTakesOffRetries: under 30 % throttling, and with the first
// request of each operation in each region throttled, the simulator
// counts the SDK's retries as requests; less the ones retryCounter saw by
// their attempt header, the calls are a clean scan's.
func TestRetryCounterTakesOffRetries(t *testing.T) {
	f := scanFleet(t, 300)
	regions := []string{"eu-west-1", "us-east-1", "us-west-2"}
	week := fleet.TimeRange{Start: simNow.AddDate(0, 0, -7), End: simNow}
	scan := func(o sim.Options) (raw, calls map[string]map[string]int) {
		srv, s := scanSim(t, f, o)
		p, retries := retryCountedProvider(t, srv.URL, regions...)
		s.ResetCounts()
		res, err := providers.Collect(context.Background(), scanOnly(p), providers.CollectOptions{Window: week})
		if err != nil || len(res.Failures) > 0 {
			t.Fatal(err, res.Failures)
		}
		raw = s.Counts()
		calls = retries.calls(t, s.Counts())
		return raw, calls
	}
	_, clean := scan(sim.Options{})
	raw, calls := scan(sim.Options{ThrottleRate: 0.3, Seed: 7, Fault: throttleFirst()})
	for _, op := range []string{"DescribeInstances", "GetMetricData", "ListMetrics"} {
		svc := "ec2"
		if op != "DescribeInstances" {
			svc = "monitoring"
		}
		if raw[svc][op] <= clean[svc][op] {
			t.Errorf("%s: %d requests throttled against %d clean: no retry to take off", op, raw[svc][op], clean[svc][op])
		}
		if calls[svc][op] != clean[svc][op] {
			t.Errorf("%s: %d calls less retries, want the clean scan's %d (%d requests)", op, calls[svc][op], clean[svc][op], raw[svc][op])
		}
	}
}
