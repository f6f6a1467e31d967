package aws

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pricing"
	"github.com/gpufinops/gpufinops/providers"
	"github.com/gpufinops/gpufinops/providers/aws/sim"
	"github.com/gpufinops/gpufinops/providers/aws/simcat"
)

const managedFixture = "../../testdata/fleets/managed-ai.yaml"

// managedFleet is the shared fixture of managed AI items, completed from
// the catalog as a scan's fleet is.
func managedFleet(t testing.TB) *fleet.Fleet {
	t.Helper()
	b, err := os.ReadFile(managedFixture)
	if err != nil {
		t.Fatal(err)
	}
	f, err := fleet.Parse(managedFixture, b)
	if err != nil {
		t.Fatal(err)
	}
	if err := pricing.Complete(f, scanCatalog(t)); err != nil {
		t.Fatal(err)
	}
	return f
}

// managedProvider is the adapter on the simulator with managed_ai on.
func managedProvider(t testing.TB, url string, regions ...string) *Provider {
	t.Helper()
	if tt, ok := t.(*testing.T); ok {
		tt.Setenv("AWS_ACCESS_KEY_ID", "test")
		tt.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	}
	ri := Registration()
	vals := ri.Defaults()
	p, err := New(context.Background(), providers.Options{Endpoint: url, Regions: regions, Now: func() time.Time { return simNow },
		RetryMaxBackoff: time.Millisecond, Adapter: vals})
	if err != nil {
		t.Fatal(err)
	}
	return p.(*Provider)
}

// sageMakerOf is the fixture's SageMaker items by ID.
func sageMakerOf(f *fleet.Fleet) map[string]fleet.Instance {
	out := map[string]fleet.Instance{}
	for _, in := range f.Instances {
		if in.Provider == fleet.AWS && in.Managed != nil && in.Managed.Service == fleet.SageMaker {
			out[in.ID] = in
		}
	}
	return out
}

func ptrString[T any](p *T) string {
	if p == nil {
		return "nil"
	}
	return fmt.Sprint(*p)
}

// sameGPU: model and count equal, memory per GPU within 10 %. SageMaker
// reports no GPU facts; they are the catalog's, whose memory is what
// DescribeInstanceTypes reports (A10G: 22,888 MiB, 22.35 GiB) where the
// fixture gives the nominal 24 GiB.
func sameGPU(a, b fleet.GPU) bool {
	return a.Model == b.Model && a.Count == b.Count && math.Abs(a.MemoryGiB-b.MemoryGiB) <= 0.1*b.MemoryGiB
}

// managedString is every field of a managed block, pointers by value.
func managedString(m *fleet.Managed) string {
	if m == nil {
		return "nil"
	}
	return fmt.Sprintf("%s %s ws=%q ep=%q dep=%q replicas=%d/%s/%s serverless=%v async=%v ic=%d s2z=%v idle=%s req=%s jobs=%s price=%q",
		m.Service, m.Kind, m.Workspace, m.Endpoint, m.Deployment, m.CurrentReplicas(), ptrString(m.MinReplicas()), ptrString(m.MaxReplicas()),
		m.Serverless, m.Async, m.InferenceComponents, m.ScaleToZero, ptrString(m.IdleShutdownMinutes), ptrString(m.Requests), ptrString(m.Jobs), m.PriceType)
}

// The AWS items of the shared fixture, served by the simulator, read back
// through the real SDK equal to the file: the SageMaker items with every
// managed field, and the one EC2 VM beside them, listed once.
func TestSimSageMakerInventory(t *testing.T) {
	f := managedFleet(t)
	srv, _ := scanSim(t, f, sim.Options{})
	p := managedProvider(t, srv.URL, "us-east-1")
	got, err := p.ListGPUInstances(context.Background(), scopeOf(t, p, "us-east-1"))
	if err != nil {
		t.Fatal(err)
	}
	want := sageMakerOf(f)
	var ids []string
	for _, g := range got {
		ids = append(ids, g.ID)
		if g.Managed == nil {
			if g.ID != "i-0managed0000vm01" {
				t.Errorf("EC2 lists %s", g.ID)
			}
			continue
		}
		w, ok := want[g.ID]
		if !ok {
			t.Errorf("%s is not in the fixture", g.ID)
			continue
		}
		delete(want, g.ID)
		if g.Name != w.Name || g.Account != w.Account || g.Region != w.Region || g.InstanceType != w.InstanceType || !sameGPU(g.GPU, w.GPU) ||
			g.State != w.State || g.Lifecycle != w.Lifecycle || g.Zone != "" {
			t.Errorf("%s = %q %s %s %s %+v %s %s\nwant %q %s %s %s %+v %s %s", g.ID, g.Name, g.Account, g.Region, g.InstanceType, g.GPU, g.State, g.Lifecycle,
				w.Name, w.Account, w.Region, w.InstanceType, w.GPU, w.State, w.Lifecycle)
		}
		if g.LaunchTime == nil || !g.LaunchTime.Equal(*w.LaunchTime) {
			t.Errorf("%s launch %v, want %v", g.ID, g.LaunchTime, w.LaunchTime)
		}
		wantTags := map[string]string{}
		for k, v := range w.Tags {
			wantTags[k] = v
		}
		for k, v := range fleet.WorkloadTags(w.Workload, w.Tags) {
			wantTags[k] = v
		}
		if fmt.Sprint(g.Tags) != fmt.Sprint(wantTags) {
			t.Errorf("%s tags %v, want %v", g.ID, g.Tags, wantTags)
		}
		if !reflect.DeepEqual(g.Workload, w.Workload) {
			t.Errorf("%s workload %+v, want %+v", g.ID, g.Workload, w.Workload)
		}
		// Requests come from CloudWatch (the metrics reader), not the
		// inventory.
		wm := *w.Managed
		wm.Requests = nil
		if a, b := managedString(g.Managed), managedString(&wm); a != b {
			t.Errorf("%s managed\n got %s\nwant %s", g.ID, a, b)
		}
	}
	for id := range want {
		t.Errorf("%s not listed", id)
	}
	if !slices.Contains(ids, "i-0managed0000vm01") {
		t.Errorf("the EC2 VM is missing: %v", ids)
	}
}

// A scan without the SageMaker permissions keeps its EC2 instances and
// says which permission is missing and how to turn the reads off.
func TestSimSageMakerDenied(t *testing.T) {
	f := managedFleet(t)
	srv, _ := scanSim(t, f, sim.Options{Fault: func(service, op, region string) (int, string) {
		if service == "sagemaker" && op == "ListNotebookInstances" {
			return http.StatusBadRequest, "AccessDeniedException"
		}
		return 0, ""
	}})
	p := managedProvider(t, srv.URL, "us-east-1")
	res, err := providers.Collect(context.Background(), p, providers.CollectOptions{SkipPrices: true})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, in := range res.Fleet.Instances {
		ids = append(ids, in.ID)
	}
	if strings.Join(ids, " ") != "i-0managed0000vm01" {
		t.Errorf("instances %v, want the EC2 VM only", ids)
	}
	notes := strings.Join(res.Notes, "\n")
	for _, want := range []string{"sagemaker:ListNotebookInstances", "permission denied", "providers.aws.managed_ai=false"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes do not say %q:\n%s", want, notes)
		}
	}
	if len(res.Failures) != 0 {
		t.Errorf("failures %v: a denied SageMaker read is a note", res.Failures)
	}
}

// More endpoints and notebooks than one page each: every one is read.
func TestSimSageMakerPaging(t *testing.T) {
	f := &fleet.Fleet{APIVersion: fleet.APIVersion, Kind: fleet.Kind}
	launch := simNow.Add(-48 * time.Hour)
	for i := range 230 {
		kind, id := fleet.KindNotebook, fmt.Sprintf("arn:aws:sagemaker:us-east-1:111122223333:notebook-instance/nb-%03d", i)
		m := fleet.Managed{Service: fleet.SageMaker, Kind: kind}
		if i%2 == 0 {
			m = fleet.Managed{Service: fleet.SageMaker, Kind: fleet.KindEndpoint, Replicas: &fleet.Replicas{Current: 1}}
			id = fmt.Sprintf("arn:aws:sagemaker:us-east-1:111122223333:endpoint/ep-%03d/variant/AllTraffic", i)
		}
		f.Instances = append(f.Instances, fleet.Instance{ID: id, Name: fmt.Sprintf("x-%03d", i), Provider: fleet.AWS, Account: "111122223333", Region: "us-east-1",
			InstanceType: "ml.g5.xlarge", Lifecycle: fleet.OnDemand, State: fleet.Running, LaunchTime: &launch, Managed: &m})
	}
	srv, s := scanSim(t, f, sim.Options{})
	p := managedProvider(t, srv.URL, "us-east-1")
	got, err := p.ListGPUInstances(context.Background(), scopeOf(t, p, "us-east-1"))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 230 {
		t.Errorf("%d items, want 230", len(got))
	}
	c := s.Counts()["sagemaker"]
	if c["ListEndpoints"] != 2 || c["ListNotebookInstances"] != 2 || c["DescribeEndpoint"] != 115 || c["DescribeEndpointConfig"] != 115 || c["ListTags"] != 230 {
		t.Errorf("SageMaker calls %v; want 2 pages of each list, 115 endpoint descriptions and 230 ListTags", c)
	}
}

// managed_ai=false reads no SageMaker at all.
func TestSimSageMakerOff(t *testing.T) {
	f := managedFleet(t)
	srv, s := scanSim(t, f, sim.Options{})
	p := managedProvider(t, srv.URL, "us-east-1")
	p.aws.managedAI = false
	got, err := p.ListGPUInstances(context.Background(), scopeOf(t, p, "us-east-1"))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].ID != "i-0managed0000vm01" {
		t.Errorf("listed %d items", len(got))
	}
	if n := len(s.Counts()["sagemaker"]); n != 0 {
		t.Errorf("%d SageMaker operations called", n)
	}
}

// SageMaker's metrics read back as the fixture gives them: endpoint and
// training GPU utilization per GPU (CloudWatch's figure is the sum over
// GPUs), requests from Invocations, and no utilization for notebooks and
// Studio apps, each named in the notes.
func TestSimSageMakerUtilization(t *testing.T) {
	f := managedFleet(t)
	srv, _ := scanSim(t, f, sim.Options{})
	p := managedProvider(t, srv.URL, "us-east-1")
	scope := scopeOf(t, p, "us-east-1")
	got, err := p.ListGPUInstances(context.Background(), scope)
	if err != nil {
		t.Fatal(err)
	}
	week := fleet.TimeRange{Start: simNow.AddDate(0, 0, -7), End: simNow}
	notes, err := p.ReadUtilization(context.Background(), scope, got, week)
	if err != nil {
		t.Fatal(err)
	}
	want := sageMakerOf(f)
	r2 := func(v float64) float64 { return math.Round(v*100) / 100 }
	for i := range got {
		g := &got[i]
		w, ok := want[g.ID]
		if !ok {
			continue
		}
		if g.Managed.Kind == fleet.KindNotebook || g.Managed.Kind == fleet.KindStudioApp {
			if g.Utilization != nil {
				t.Errorf("%s: utilization from CloudWatch, which publishes none for it", g.ID)
			}
			if !slices.Contains(notes, g.ID+": "+NoSageMakerMetricNote) {
				t.Errorf("%s not named in the notes %q", g.ID, notes)
			}
			continue
		}
		if ptrString(g.Managed.Requests) != ptrString(w.Managed.Requests) {
			t.Errorf("%s requests %s, want %s", g.ID, ptrString(g.Managed.Requests), ptrString(w.Managed.Requests))
		}
		if g.Utilization == nil {
			t.Errorf("%s: no utilization", g.ID)
			continue
		}
		gs, ws := g.Utilization.Summarize(), w.Utilization.Summarize()
		for _, m := range []struct {
			name string
			a, b *fleet.Stats
		}{{"gpu", gs.GPU, ws.GPU}, {"gpuMemory", gs.GPUMemory, ws.GPUMemory}} {
			if (m.a == nil) != (m.b == nil) || (m.a != nil && (r2(m.a.Avg) != r2(m.b.Avg) || r2(m.a.P95) != r2(m.b.P95) || r2(m.a.Max) != r2(m.b.Max))) {
				t.Errorf("%s %s: %+v from CloudWatch, the file says %+v", g.ID, m.name, m.a, m.b)
			}
		}
		if n := len(g.Utilization.Samples[0].GPU); float64(n) != w.GPU.Count {
			t.Errorf("%s: %d GPU values a sample, want %v", g.ID, n, w.GPU.Count)
		}
		if c := g.Utilization.Coverage; c == nil || *c != 1 {
			t.Errorf("%s: coverage %s, want 1", g.ID, ptrString(c))
		}
	}
}

// Stop of a notebook instance goes through SageMaker: a dry run changes
// nothing, the stop leaves it Stopping then Stopped, a second stop is
// AlreadyStopped; endpoints, apps and jobs are refused; an unknown notebook
// is not found.
func TestSimSageMakerStop(t *testing.T) {
	f := managedFleet(t)
	srv, s := scanSim(t, f, sim.Options{})
	p := managedProvider(t, srv.URL, "us-east-1")
	scope := scopeOf(t, p, "us-east-1")
	ctx := context.Background()
	nb := "arn:aws:sagemaker:us-east-1:111122223333:notebook-instance/nb-research-a"
	res, err := p.Stop(ctx, scope, nb, true)
	if err != nil || res.AlreadyStopped || res.CurrentState != "InService" {
		t.Fatalf("dry run: %+v %v", res, err)
	}
	if c := s.Counts()["sagemaker"]; c["StopNotebookInstance"] != 0 {
		t.Errorf("a dry run called StopNotebookInstance")
	}
	res, err = p.Stop(ctx, scope, nb, false)
	if err != nil || res.PreviousState != "InService" || res.CurrentState != "Stopping" {
		t.Fatalf("stop: %+v %v", res, err)
	}
	got, err := p.ListGPUInstances(ctx, scope)
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range got {
		if in.ID == nb && in.State != fleet.Stopped {
			t.Errorf("after the stop the notebook is %s", in.State)
		}
	}
	res, err = p.Stop(ctx, scope, nb, false)
	if err != nil || !res.AlreadyStopped || res.CurrentState != "Stopped" {
		t.Errorf("second stop: %+v %v", res, err)
	}
	for _, id := range []string{
		"arn:aws:sagemaker:us-east-1:111122223333:endpoint/chat-demo/variant/AllTraffic",
		"arn:aws:sagemaker:us-east-1:111122223333:app/d-abc123def456/bob/JupyterLab/default",
		"arn:aws:sagemaker:us-east-1:111122223333:training-job/llama-ft-1128",
	} {
		if _, err := p.Stop(ctx, scope, id, false); !errors.Is(err, providers.ErrNotStoppable) {
			t.Errorf("%s: %v, want ErrNotStoppable", id, err)
		}
	}
	if _, err := p.Stop(ctx, scope, "arn:aws:sagemaker:us-east-1:111122223333:notebook-instance/nb-gone", false); !errors.Is(err, providers.ErrNotFound) {
		t.Errorf("unknown notebook: %v", err)
	}
	if st := simStates(t, srv.URL)[nb]; st != "stopped" {
		t.Errorf("/_sim/state says %q", st)
	}
}

// ml.* types are priced from the Price List's AmazonSageMaker offer (the
// simulator serves the vendored cross-check file): Hosting where it is
// priced, else Training; no spot or Savings Plans price; EC2 types beside
// them keep theirs.
func TestSimSageMakerPrices(t *testing.T) {
	f := managedFleet(t)
	opts := simcat.Options(f, scanCatalog(t))
	// The Price List's own rows (the vendored cross-check file, every
	// component), not simcat's one row per item at the catalog's estimate.
	opts.SageMakerPrices = nil
	srv, s := scanSim(t, f, opts)
	p := managedProvider(t, srv.URL, "us-east-1")
	scope := scopeOf(t, p, "us-east-1")
	prices, err := p.ReadPrices(context.Background(), scope, []string{"ml.g5.xlarge", "ml.g5.12xlarge", "ml.p5.4xlarge", "g5.xlarge"})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, pr := range prices {
		got[pr.InstanceType+" "+string(pr.Option)] = pr.Hourly.String() + " " + pr.Source
	}
	for k, want := range map[string]string{
		"ml.g5.xlarge on-demand":   "1.408 " + sourceSageMaker,
		"ml.g5.12xlarge on-demand": "7.09 " + sourceSageMaker,
	} {
		if got[k] != want {
			t.Errorf("%s: %q, want %q", k, got[k], want)
		}
	}
	for k := range got {
		if strings.HasPrefix(k, "ml.") && !strings.HasSuffix(k, " on-demand") {
			t.Errorf("%s priced: SageMaker sells no such option", k)
		}
		if strings.HasPrefix(k, "ml.p5.4xlarge") {
			t.Errorf("ml.p5.4xlarge priced (the file has no price for it): %s", got[k])
		}
	}
	if _, ok := got["g5.xlarge on-demand"]; !ok {
		t.Errorf("the EC2 type lost its price: %v", got)
	}
	if c := s.Counts(); c["ec2"]["DescribeSpotPriceHistory"] == 0 || c["pricing"]["GetProducts"] != 4 {
		t.Errorf("calls %v: want one GetProducts per type and the EC2 spot history", c)
	}
}

// A SageMaker Savings Plan the account holds is read as a held commitment
// of its own kind (never a Compute Savings Plan): it covers SageMaker
// usage only.
func TestSimSageMakerSavingsPlan(t *testing.T) {
	f := managedFleet(t)
	start, end := simNow.AddDate(-1, 0, 0), simNow.AddDate(2, 0, 0)
	commit := decimal.RequireFromString("3.5")
	f.Commitments = []fleet.Held{
		{ID: "arn:aws:savingsplans::111122223333:savingsplan/0a1b2c3d-0000-4000-8000-00000000005a", Provider: fleet.AWS, Kind: KindSageMakerSavingsPlan, Scope: fleet.HeldScope{Level: "account"},
			Term: "3y", Payment: "no-upfront", Start: &start, End: &end, HourlyCommitment: &commit},
	}
	srv, _ := scanSim(t, f, sim.Options{})
	p := scanProvider(t, srv.URL, "us-east-1")
	res, err := providers.Collect(context.Background(), p, providers.CollectOptions{SkipPrices: true})
	if err != nil {
		t.Fatal(err)
	}
	want := activeHeld(f, fleet.AWS, awsSource)
	want[0].Account = "111122223333"
	sameHeld(t, res.Fleet.Commitments, want)
}

// doctor checks the SageMaker reads with one cheap call each, and says how
// to turn them off when one is denied; coverage and the stop check are the
// EC2 instances' alone.
func TestSimSageMakerDoctor(t *testing.T) {
	f := managedFleet(t)
	srv, _ := scanSim(t, f, sim.Options{Fault: func(service, op, region string) (int, string) {
		if service == "sagemaker" && op == "ListApps" {
			return http.StatusBadRequest, "AccessDeniedException"
		}
		return 0, ""
	}})
	p := managedProvider(t, srv.URL, "us-east-1")
	scope := scopeOf(t, p, "us-east-1")
	cs := checksBy(p.CheckPermissions(context.Background(), scope))
	for _, a := range []string{"sagemaker:ListEndpoints", "sagemaker:ListNotebookInstances", "sagemaker:ListTrainingJobs", "sagemaker:ListProcessingJobs",
		"sagemaker:DescribeEndpoint", "sagemaker:DescribeEndpointConfig", "sagemaker:DescribeNotebookInstance", "sagemaker:DescribeTrainingJob",
		"sagemaker:DescribeProcessingJob", "sagemaker:ListTags"} {
		if cs[a].Status != providers.CheckOK {
			t.Errorf("%s: %+v", a, cs[a])
		}
	}
	if c := cs["sagemaker:ListApps"]; c.Status != providers.CheckMissing || !strings.Contains(c.Fix, "providers.aws.managed_ai=false") {
		t.Errorf("denied ListApps: %+v", c)
	}
	stopChecked := false
	for _, c := range p.CheckCoverage(context.Background(), scope) {
		if c.Action == "sagemaker:StopNotebookInstance" {
			stopChecked = strings.HasPrefix(c.Detail, "not checked: SageMaker has no dry run")
			continue
		}
		if strings.Contains(c.Detail, "arn:aws:sagemaker") {
			t.Errorf("%s check names a SageMaker item: %s", c.Name, c.Detail)
		}
	}
	if !stopChecked {
		t.Error("doctor does not say why sagemaker:StopNotebookInstance is not checked")
	}
	// Every SageMaker action of the policies has its check.
	checked := map[string]bool{}
	for _, c := range append(p.CheckPermissions(context.Background(), scope), p.CheckCoverage(context.Background(), scope)...) {
		checked[c.Action] = true
	}
	for _, perm := range append(IAMAnalyze, IAMIdleStop...) {
		if strings.HasPrefix(perm.Action, "sagemaker:") && !checked[perm.Action] {
			t.Errorf("%s is not checked", perm.Action)
		}
	}
}
