package sim

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/fleet"
)

// describeAll pages through DescribeInstances and returns the instances with
// their owners, and the number of pages.
func describeAll(t *testing.T, c *ec2.Client, in *ec2.DescribeInstancesInput) (ids []string, owners map[string]string, pages int) {
	t.Helper()
	owners = map[string]string{}
	p := ec2.NewDescribeInstancesPaginator(c, in)
	for p.HasMorePages() {
		out, err := p.NextPage(context.Background())
		if err != nil {
			t.Fatalf("DescribeInstances page %d: %v", pages+1, err)
		}
		pages++
		for _, r := range out.Reservations {
			for _, i := range r.Instances {
				ids = append(ids, aws.ToString(i.InstanceId))
				owners[aws.ToString(i.InstanceId)] = aws.ToString(r.OwnerId)
			}
		}
	}
	return ids, owners, pages
}

// expect lists the IDs of the fleet's instances that keep selects.
func idsWhere(f *fleet.Fleet, keep func(fleet.Instance) bool) []string {
	var ids []string
	for _, in := range f.Instances {
		if keep(in) {
			ids = append(ids, in.ID)
		}
	}
	return ids
}

func ec2Filter(name string, values ...string) types.Filter {
	return types.Filter{Name: aws.String(name), Values: values}
}

func TestDescribeInstancesPaginatedWithFilters(t *testing.T) {
	f := generatedFleet(1200)
	_, srv := serveFixture(t, f, Options{})
	c := ec2Client(srv, "us-east-1", signedCreds)
	mine := func(in fleet.Instance) bool { return in.Region == "us-east-1" && in.Account == "" }

	cases := []struct {
		name    string
		filters []types.Filter
		keep    func(fleet.Instance) bool
	}{
		{"all", nil, func(fleet.Instance) bool { return true }},
		{"wildcard type", []types.Filter{ec2Filter("instance-type", "p4d.*", "p5.*")},
			func(in fleet.Instance) bool { return strings.HasPrefix(in.InstanceType, "p") }},
		{"running", []types.Filter{ec2Filter("instance-state-name", "running")},
			func(in fleet.Instance) bool { return in.State == fleet.Running }},
		{"stopped by code", []types.Filter{ec2Filter("instance-state-code", "80")},
			func(in fleet.Instance) bool { return in.State == fleet.Stopped }},
		{"spot", []types.Filter{ec2Filter("instance-lifecycle", "spot")},
			func(in fleet.Instance) bool { return in.Lifecycle == fleet.Spot }},
		{"tag value", []types.Filter{ec2Filter("tag:team", "ml-1")},
			func(in fleet.Instance) bool { return in.Tags["team"] == "ml-1" }},
		{"tag key", []types.Filter{ec2Filter("tag-key", "env")},
			func(in fleet.Instance) bool { return in.Tags["env"] != "" }},
		{"instance id", []types.Filter{ec2Filter("instance-id", "i-00000000000001000", "i-0000000000000100?")},
			func(in fleet.Instance) bool { return strings.HasPrefix(in.ID, "i-0000000000000100") }},
		{"and of filters", []types.Filter{ec2Filter("instance-type", "g5.*"), ec2Filter("instance-state-name", "running"), ec2Filter("tag:team", "ml-0", "ml-2")},
			func(in fleet.Instance) bool {
				return strings.HasPrefix(in.InstanceType, "g5.") && in.State == fleet.Running && in.Tags["team"] != "ml-1"
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, owners, pages := describeAll(t, c, &ec2.DescribeInstancesInput{Filters: tc.filters, MaxResults: aws.Int32(100)})
			want := idsWhere(f, func(in fleet.Instance) bool { return mine(in) && tc.keep(in) })
			if len(want) == 0 {
				t.Fatal("fixture selects nothing")
			}
			if strings.Join(got, ",") != strings.Join(want, ",") {
				t.Fatalf("got %d instances, want %d\ngot  %v\nwant %v", len(got), len(want), firstFew(got), firstFew(want))
			}
			if wantPages := (len(want) + 99) / 100; pages != wantPages {
				t.Errorf("pages = %d, want %d", pages, wantPages)
			}
			for id, o := range owners {
				if o != fixtureAccount {
					t.Fatalf("%s owner %s, want %s", id, o, fixtureAccount)
				}
			}
		})
	}

	// The whole region unpaginated is one answer.
	out, err := c.DescribeInstances(context.Background(), &ec2.DescribeInstancesInput{})
	if err != nil {
		t.Fatal(err)
	}
	if n, want := len(out.Reservations), len(idsWhere(f, mine)); n != want || out.NextToken != nil {
		t.Errorf("unpaginated: %d reservations (next %v), want %d", n, out.NextToken, want)
	}
	// Another region.
	west, _, _ := describeAll(t, ec2Client(srv, "us-west-2", signedCreds), &ec2.DescribeInstancesInput{MaxResults: aws.Int32(1000)})
	if want := idsWhere(f, func(in fleet.Instance) bool { return in.Region == "us-west-2" && in.Account == "" }); len(west) != len(want) {
		t.Errorf("us-west-2: %d instances, want %d", len(west), len(want))
	}
}

func firstFew(s []string) []string {
	if len(s) > 5 {
		return s[:5]
	}
	return s
}

func TestDescribeInstancesFields(t *testing.T) {
	_, srv := serveFixture(t, fixtureFleet(), Options{})
	c := ec2Client(srv, "us-east-1", signedCreds)
	out, err := c.DescribeInstances(context.Background(), &ec2.DescribeInstancesInput{InstanceIds: []string{"i-0a1", "i-0a2", "i-0a3"}})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]types.Instance{}
	for _, r := range out.Reservations {
		if aws.ToString(r.OwnerId) != fixtureAccount || !strings.HasPrefix(aws.ToString(r.ReservationId), "r-") {
			t.Errorf("reservation %s owner %s", aws.ToString(r.ReservationId), aws.ToString(r.OwnerId))
		}
		for _, i := range r.Instances {
			got[aws.ToString(i.InstanceId)] = i
		}
	}
	if len(got) != 3 {
		t.Fatalf("got %d instances, want 3", len(got))
	}
	a1 := got["i-0a1"]
	if a1.InstanceType != "p4d.24xlarge" || aws.ToString(a1.Placement.AvailabilityZone) != "us-east-1b" ||
		a1.State.Name != types.InstanceStateNameRunning || aws.ToInt32(a1.State.Code) != 16 || a1.InstanceLifecycle != "" {
		t.Errorf("i-0a1: %+v", a1)
	}
	if !aws.ToTime(a1.LaunchTime).Equal(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)) {
		t.Errorf("launch time %v", a1.LaunchTime)
	}
	tags := map[string]string{}
	for _, tg := range a1.Tags {
		tags[aws.ToString(tg.Key)] = aws.ToString(tg.Value)
	}
	if tags["Name"] != "train-1" || tags["team"] != "research" || len(tags) != 2 {
		t.Errorf("tags %v", tags)
	}
	if dns := aws.ToString(a1.PrivateDnsName); !strings.HasSuffix(dns, ".ec2.internal") {
		t.Errorf("private DNS %q", dns)
	}
	a2 := got["i-0a2"]
	if a2.InstanceLifecycle != types.InstanceLifecycleTypeSpot || !strings.HasPrefix(aws.ToString(a2.SpotInstanceRequestId), "sir-") {
		t.Errorf("spot instance: lifecycle %q request %q", a2.InstanceLifecycle, aws.ToString(a2.SpotInstanceRequestId))
	}
	if aws.ToString(a2.Placement.AvailabilityZone) != "us-east-1a" {
		t.Errorf("default zone %q", aws.ToString(a2.Placement.AvailabilityZone))
	}
	if a3 := got["i-0a3"]; a3.State.Name != types.InstanceStateNameStopped || aws.ToInt32(a3.State.Code) != 80 {
		t.Errorf("stopped instance state %+v", a3.State)
	}
}

func TestDescribeInstancesErrors(t *testing.T) {
	_, srv := serveFixture(t, fixtureFleet(), Options{})
	c := ec2Client(srv, "us-east-1", signedCreds)
	ctx := context.Background()
	cases := []struct {
		name string
		in   *ec2.DescribeInstancesInput
		code string
	}{
		{"max too small", &ec2.DescribeInstancesInput{MaxResults: aws.Int32(4)}, "InvalidParameterValue"},
		{"max too large", &ec2.DescribeInstancesInput{MaxResults: aws.Int32(1001)}, "InvalidParameterValue"},
		{"ids with max", &ec2.DescribeInstancesInput{MaxResults: aws.Int32(5), InstanceIds: []string{"i-0a1"}}, "InvalidParameterCombination"},
		{"unknown id", &ec2.DescribeInstancesInput{InstanceIds: []string{"i-0a1", "i-nope"}}, "InvalidInstanceID.NotFound"},
		{"other account's id", &ec2.DescribeInstancesInput{InstanceIds: []string{"i-0b1"}}, "InvalidInstanceID.NotFound"},
		{"other region's id", &ec2.DescribeInstancesInput{InstanceIds: []string{"i-0a4"}}, "InvalidInstanceID.NotFound"},
		{"unknown filter", &ec2.DescribeInstancesInput{Filters: []types.Filter{ec2Filter("gpu-count", "8")}}, "InvalidParameterValue"},
		{"bad token", &ec2.DescribeInstancesInput{MaxResults: aws.Int32(5), NextToken: aws.String("nope")}, "InvalidPaginationToken"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.DescribeInstances(ctx, tc.in)
			if code := errorCode(t, err); code != tc.code {
				t.Errorf("code %s (%v), want %s", code, err, tc.code)
			}
		})
	}
	// A token only continues the query that issued it.
	out, err := c.DescribeInstances(ctx, &ec2.DescribeInstancesInput{MaxResults: aws.Int32(5), Filters: []types.Filter{ec2Filter("instance-type", "*")}})
	if err != nil {
		t.Fatal(err)
	}
	if out.NextToken != nil {
		t.Fatalf("3 instances on a page of 5 yet a token")
	}
}

func TestDescribeRegions(t *testing.T) {
	_, srv := serveFixture(t, fixtureFleet(), Options{})
	c := ec2Client(srv, "us-east-1", aws.AnonymousCredentials{})
	out, err := c.DescribeRegions(context.Background(), &ec2.DescribeRegionsInput{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range out.Regions {
		names = append(names, aws.ToString(r.RegionName))
		if aws.ToString(r.OptInStatus) != "opt-in-not-required" || aws.ToString(r.Endpoint) != "ec2."+aws.ToString(r.RegionName)+".amazonaws.com" {
			t.Errorf("region %+v", r)
		}
	}
	if strings.Join(names, ",") != "us-east-1,us-west-2" {
		t.Errorf("regions %v (the fleet's AWS regions)", names)
	}

	_, srv = serveFixture(t, fixtureFleet(), Options{Regions: []string{"eu-west-1", "us-east-1", "us-west-2"}})
	out, err = ec2Client(srv, "us-east-1", aws.AnonymousCredentials{}).DescribeRegions(context.Background(),
		&ec2.DescribeRegionsInput{Filters: []types.Filter{ec2Filter("region-name", "us-*")}})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Regions) != 2 {
		t.Errorf("filtered regions %d, want 2", len(out.Regions))
	}
}

func TestDescribeInstanceTypes(t *testing.T) {
	_, srv := serveFixture(t, fixtureFleet(), Options{})
	c := ec2Client(srv, "us-east-1", aws.AnonymousCredentials{})
	ctx := context.Background()
	out, err := c.DescribeInstanceTypes(ctx, &ec2.DescribeInstanceTypesInput{
		InstanceTypes: []types.InstanceType{"p4d.24xlarge", "inf2.xlarge", "g6f.large", "m5.large"},
	})
	if err != nil {
		t.Fatal(err)
	}
	got := map[types.InstanceType]types.InstanceTypeInfo{}
	for _, it := range out.InstanceTypes {
		got[it.InstanceType] = it
	}
	p4d := got["p4d.24xlarge"]
	if p4d.GpuInfo == nil || len(p4d.GpuInfo.Gpus) != 1 || p4d.NeuronInfo != nil {
		t.Fatalf("p4d: %+v", p4d)
	}
	g := p4d.GpuInfo.Gpus[0]
	if aws.ToString(g.Name) != "A100" || aws.ToString(g.Manufacturer) != "NVIDIA" || aws.ToInt32(g.Count) != 8 ||
		aws.ToInt32(g.MemoryInfo.SizeInMiB) != 40960 || aws.ToInt32(p4d.GpuInfo.TotalGpuMemoryInMiB) != 8*40960 {
		t.Errorf("p4d GPU %+v total %d", g, aws.ToInt32(p4d.GpuInfo.TotalGpuMemoryInMiB))
	}
	if aws.ToInt32(p4d.VCpuInfo.DefaultVCpus) != 96 || aws.ToInt64(p4d.MemoryInfo.SizeInMiB) != 1179648 {
		t.Errorf("p4d host %+v %+v", p4d.VCpuInfo, p4d.MemoryInfo)
	}
	inf := got["inf2.xlarge"]
	if inf.GpuInfo != nil || inf.NeuronInfo == nil || len(inf.NeuronInfo.NeuronDevices) != 1 ||
		aws.ToString(inf.NeuronInfo.NeuronDevices[0].Name) != "Inferentia2" || aws.ToInt32(inf.NeuronInfo.NeuronDevices[0].Count) != 1 ||
		aws.ToInt32(inf.NeuronInfo.TotalNeuronDeviceMemoryInMiB) != 32768 {
		t.Errorf("inf2: %+v", inf.NeuronInfo)
	}
	frac := got["g6f.large"].GpuInfo
	if frac == nil || aws.ToFloat64(frac.Gpus[0].GpuPartitionSize) != 0.125 || aws.ToInt32(frac.Gpus[0].Count) != 1 ||
		aws.ToInt32(frac.Gpus[0].MemoryInfo.SizeInMiB) != 2861 {
		t.Errorf("g6f: %+v", frac)
	}
	if m5 := got["m5.large"]; m5.GpuInfo != nil || m5.NeuronInfo != nil {
		t.Errorf("m5.large has accelerators")
	}

	// Listing, paginated.
	var all []string
	pages := 0
	p := ec2.NewDescribeInstanceTypesPaginator(c, &ec2.DescribeInstanceTypesInput{MaxResults: aws.Int32(5)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		for _, it := range page.InstanceTypes {
			all = append(all, string(it.InstanceType))
		}
	}
	if len(all) != len(fixtureTypes) || pages != 2 || !sort.StringsAreSorted(all) {
		t.Errorf("listed %v in %d pages", all, pages)
	}
	out, err = c.DescribeInstanceTypes(ctx, &ec2.DescribeInstanceTypesInput{Filters: []types.Filter{ec2Filter("instance-type", "g5.*")}})
	if err != nil || len(out.InstanceTypes) != 2 {
		t.Errorf("g5.* filter: %v, %d types", err, len(out.InstanceTypes))
	}
	_, err = c.DescribeInstanceTypes(ctx, &ec2.DescribeInstanceTypesInput{InstanceTypes: []types.InstanceType{"g5.xlarge", "x9.huge"}})
	if code := errorCode(t, err); code != "InvalidInstanceType" || !strings.Contains(err.Error(), "x9.huge") {
		t.Errorf("unknown type: %v", err)
	}
}

func TestDescribeSpotPriceHistory(t *testing.T) {
	_, srv := serveFixture(t, fixtureFleet(), Options{})
	c := ec2Client(srv, "us-east-1", signedCreds)
	ctx := context.Background()

	// Thirty days of g5.xlarge history in two zones, read in small pages.
	in := &ec2.DescribeSpotPriceHistoryInput{
		InstanceTypes:       []types.InstanceType{"g5.xlarge"},
		ProductDescriptions: []string{"Linux/UNIX"},
		StartTime:           aws.Time(fixtureNow.Add(-30 * 24 * time.Hour)),
		EndTime:             aws.Time(fixtureNow),
		MaxResults:          aws.Int32(4),
	}
	series := map[string][]types.SpotPrice{}
	pages := 0
	p := ec2.NewDescribeSpotPriceHistoryPaginator(c, in)
	var last time.Time
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		for _, sp := range page.SpotPriceHistory {
			ts := aws.ToTime(sp.Timestamp)
			if !last.IsZero() && ts.After(last) {
				t.Fatalf("history not newest first: %v after %v", ts, last)
			}
			last = ts
			if sp.InstanceType != "g5.xlarge" || sp.ProductDescription != "Linux/UNIX" {
				t.Fatalf("unexpected point %+v", sp)
			}
			z := aws.ToString(sp.AvailabilityZone)
			series[z] = append(series[z], sp)
		}
	}
	if len(series) != 2 || pages < 5 {
		t.Fatalf("zones %d, pages %d", len(series), pages)
	}
	for z, pts := range series {
		// 11 points over 30 days plus the one in effect at the start.
		if len(pts) < 11 {
			t.Errorf("%s: %d points", z, len(pts))
		}
		lo, hi := decimal.RequireFromString(aws.ToString(pts[0].SpotPrice)), decimal.Zero
		for _, sp := range pts {
			v := decimal.RequireFromString(aws.ToString(sp.SpotPrice))
			lo, hi = decimal.Min(lo, v), decimal.Max(hi, v)
		}
		if !lo.LessThan(hi) {
			t.Errorf("%s: flat history %s", z, lo)
		}
		cur := decimal.RequireFromString(fixturePrices[0].Spot[z])
		if !decimal.RequireFromString(aws.ToString(pts[0].SpotPrice)).Equal(cur) {
			t.Errorf("%s: newest %s, want the current %s", z, aws.ToString(pts[0].SpotPrice), cur)
		}
		if hi.GreaterThan(cur.Mul(decimal.NewFromFloat(1.15))) || lo.LessThan(cur.Mul(decimal.NewFromFloat(0.85))) {
			t.Errorf("%s: range %s–%s too wide around %s", z, lo, hi, cur)
		}
	}

	// StartTime now: the price in effect, one per zone and type.
	out, err := c.DescribeSpotPriceHistory(ctx, &ec2.DescribeSpotPriceHistoryInput{StartTime: aws.Time(fixtureNow)})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.SpotPriceHistory) != 3 { // g5.xlarge ×2 zones, p4d ×1
		t.Errorf("current prices: %d points, want 3", len(out.SpotPriceHistory))
	}
	// Another region, one zone.
	out, err = ec2Client(srv, "us-west-2", signedCreds).DescribeSpotPriceHistory(ctx, &ec2.DescribeSpotPriceHistoryInput{
		StartTime: aws.Time(fixtureNow), AvailabilityZone: aws.String("us-west-2a"),
	})
	if err != nil || len(out.SpotPriceHistory) != 1 || aws.ToString(out.SpotPriceHistory[0].SpotPrice) != "0.450000" {
		t.Errorf("us-west-2: %v %+v", err, out)
	}
	// Windows is not simulated.
	out, err = c.DescribeSpotPriceHistory(ctx, &ec2.DescribeSpotPriceHistoryInput{ProductDescriptions: []string{"Windows"}})
	if err != nil || len(out.SpotPriceHistory) != 0 {
		t.Errorf("windows: %v, %d points", err, len(out.SpotPriceHistory))
	}
}

func TestStopInstances(t *testing.T) {
	s, srv := serveFixture(t, fixtureFleet(), Options{})
	c := ec2Client(srv, "us-east-1", signedCreds)
	ctx := context.Background()

	// Dry run: HTTP 412 DryRunOperation, nothing changes.
	_, err := c.StopInstances(ctx, &ec2.StopInstancesInput{InstanceIds: []string{"i-0a1"}, DryRun: aws.Bool(true)})
	if code := errorCode(t, err); code != "DryRunOperation" {
		t.Fatalf("dry run: %v", err)
	}
	var re *awshttp.ResponseError
	if !errors.As(err, &re) || re.HTTPStatusCode() != http.StatusPreconditionFailed {
		t.Errorf("dry run status: %v", err)
	}
	if st := s.stateOf("i-0a1"); st != "running" {
		t.Fatalf("dry run stopped the instance: %s", st)
	}

	// A one-time spot instance cannot be stopped.
	_, err = c.StopInstances(ctx, &ec2.StopInstancesInput{InstanceIds: []string{"i-0a2"}})
	if code := errorCode(t, err); code != "UnsupportedOperation" || !strings.Contains(err.Error(), "one-time Spot Instance request") {
		t.Errorf("spot: %v", err)
	}
	// Unknown, other account's and other region's IDs are not found; nothing stops.
	for _, id := range []string{"i-nope", "i-0b1", "i-0a4"} {
		_, err = c.StopInstances(ctx, &ec2.StopInstancesInput{InstanceIds: []string{"i-0a1", id}})
		if code := errorCode(t, err); code != "InvalidInstanceID.NotFound" {
			t.Errorf("%s: %v", id, err)
		}
	}
	if st := s.stateOf("i-0a1"); st != "running" {
		t.Fatalf("a failed call stopped the instance: %s", st)
	}

	// Stop: running → stopping in the answer, stopped afterwards.
	out, err := c.StopInstances(ctx, &ec2.StopInstancesInput{InstanceIds: []string{"i-0a1", "i-0a3"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.StoppingInstances) != 2 {
		t.Fatalf("answer %+v", out.StoppingInstances)
	}
	a1, a3 := out.StoppingInstances[0], out.StoppingInstances[1]
	if aws.ToString(a1.InstanceId) != "i-0a1" || a1.CurrentState.Name != "stopping" || aws.ToInt32(a1.CurrentState.Code) != 64 || a1.PreviousState.Name != "running" {
		t.Errorf("i-0a1: %+v → %+v", a1.PreviousState, a1.CurrentState)
	}
	if a3.CurrentState.Name != "stopped" || a3.PreviousState.Name != "stopped" {
		t.Errorf("already stopped i-0a3: %+v → %+v", a3.PreviousState, a3.CurrentState)
	}
	var state struct{ Instances []InstanceState }
	getControl(t, srv.URL+"/_sim/state", &state)
	for _, is := range state.Instances {
		if is.ID == "i-0a1" && is.State != "stopped" {
			t.Errorf("/_sim/state says %s", is.State)
		}
	}
	desc, err := c.DescribeInstances(ctx, &ec2.DescribeInstancesInput{InstanceIds: []string{"i-0a1"}})
	if err != nil {
		t.Fatal(err)
	}
	if st := desc.Reservations[0].Instances[0].State; st.Name != "stopped" || aws.ToInt32(st.Code) != 80 {
		t.Errorf("after stop Describe says %+v", st)
	}
	// The stopped waiter is satisfied at once.
	w := ec2.NewInstanceStoppedWaiter(c, func(o *ec2.InstanceStoppedWaiterOptions) {
		o.MinDelay = time.Millisecond
		o.MaxDelay = 10 * time.Millisecond
	})
	if err := w.Wait(ctx, &ec2.DescribeInstancesInput{InstanceIds: []string{"i-0a1"}}, 5*time.Second); err != nil {
		t.Errorf("stopped waiter: %v", err)
	}

	// Idempotent.
	out, err = c.StopInstances(ctx, &ec2.StopInstancesInput{InstanceIds: []string{"i-0a1"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := out.StoppingInstances[0]; got.CurrentState.Name != "stopped" || got.PreviousState.Name != "stopped" || aws.ToInt32(got.CurrentState.Code) != 80 {
		t.Errorf("second stop: %+v → %+v", got.PreviousState, got.CurrentState)
	}
	_, err = c.StopInstances(ctx, &ec2.StopInstancesInput{})
	if err == nil {
		t.Errorf("stop without IDs succeeded")
	}
}

// SageMaker machines run in the service's account: DescribeInstances of the
// demo lists its EC2 instances only, never a SageMaker endpoint or notebook.
func TestDescribeInstancesLeavesSageMakerOut(t *testing.T) {
	f := cwDemo(t)
	_, srv := cwServe(t, f, Options{})
	ids, _, _ := describeAll(t, ec2Client(srv, "us-east-1", signedCreds), &ec2.DescribeInstancesInput{})
	want := idsWhere(f, func(in fleet.Instance) bool { return in.Provider == fleet.AWS && !in.IsManaged() })
	managed := idsWhere(f, func(in fleet.Instance) bool { return in.Provider == fleet.AWS && in.IsManaged() })
	if len(managed) == 0 {
		t.Fatal("the demo has no SageMaker item to leave out")
	}
	slices.Sort(ids)
	slices.Sort(want)
	if !slices.Equal(ids, want) {
		t.Errorf("described %v, want the EC2 instances %v (not %v)", ids, want, managed)
	}
}
