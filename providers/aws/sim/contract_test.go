package sim

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	cwtypes "github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/pricing"
	pricingtypes "github.com/aws/aws-sdk-go-v2/service/pricing/types"
	"github.com/aws/aws-sdk-go-v2/service/savingsplans"
	sptypes "github.com/aws/aws-sdk-go-v2/service/savingsplans/types"
	"github.com/aws/aws-sdk-go-v2/service/sts"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/providers/simkit"
)

// Contract tests: every exchange with the simulator, driven by the real SDK,
// is checked against botocore's models (providers/aws/sim/models), and the
// checks are shown to fail on corrupted answers.

// contractRecorder checks each request and answer that passes through it
// and records which operations were checked and how.
type contractRecorder struct {
	h          http.Handler
	mu         sync.Mutex
	checked    map[string]map[string]int // "service:Op" → "request"/"answer"/"error" → count
	violations []string
	answers    map[string]recorded // "service:Op answer" or "service:Op error" → the last such answer
	cbor       map[string]recorded // CloudWatch operation → its last CBOR 2xx answer
}

func newContractRecorder(h http.Handler) *contractRecorder {
	return &contractRecorder{h: h, checked: map[string]map[string]int{}, answers: map[string]recorded{}, cbor: map[string]recorded{}}
}

func (c *contractRecorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	service, op, reqErr := CheckRequest(r, body)
	rec := httptest.NewRecorder()
	c.h.ServeHTTP(rec, r)
	ansErr := CheckAnswer(r, body, rec.Code, rec.Header(), rec.Body.Bytes())
	for k, v := range rec.Header() {
		w.Header()[k] = v
	}
	w.WriteHeader(rec.Code)
	w.Write(rec.Body.Bytes())

	key := service + ":" + op
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.checked[key] == nil {
		c.checked[key] = map[string]int{}
	}
	c.checked[key]["request"]++
	kind := "answer"
	if rec.Code >= 300 {
		kind = "error"
	}
	x := recorded{r: r, req: body, status: rec.Code, header: rec.Header(), body: rec.Body.Bytes()}
	c.answers[key+" "+kind] = x
	if _, cop, ok := strings.Cut(r.URL.Path, "/operation/"); ok && kind == "answer" {
		c.cbor[cop] = x
	}
	c.checked[key][kind]++
	if reqErr != nil {
		c.violations = append(c.violations, fmt.Sprintf("%s request: %v", key, reqErr))
	}
	if ansErr != nil {
		c.violations = append(c.violations, fmt.Sprintf("%s %s (HTTP %d): %v", key, kind, rec.Code, ansErr))
	}
}

// recorded is one request and its answer.
type recorded struct {
	r      *http.Request
	req    []byte
	status int
	header http.Header
	body   []byte
}

// checkPaging walks call in small pages and in one, and fails the test
// unless both see the same items through sound tokens.
func checkPaging(t *testing.T, name string, small, whole func(token *string) (int, *string, error)) {
	t.Helper()
	for _, p := range simkit.PagingProblems(name, small, whole) {
		t.Error(p)
	}
}

func TestContractEveryOperation(t *testing.T) {
	rec, strict := driveEveryOperation(t)
	for _, v := range rec.violations {
		t.Error(v)
	}
	for _, v := range strict {
		t.Errorf("strict mode: %s", v)
	}
	var covered []string
	for _, op := range Ops {
		c := rec.checked[op]
		if c["answer"] == 0 || c["error"] == 0 {
			t.Errorf("%s: %d answers and %d errors checked; want both", op, c["answer"], c["error"])
			continue
		}
		covered = append(covered, op)
	}
	var extra []string
	for op := range rec.checked {
		if !slices.Contains(Ops, op) {
			extra = append(extra, op)
		}
	}
	sort.Strings(extra)
	if len(extra) > 0 {
		t.Errorf("operations served but not in Ops: %v", extra)
	}
	t.Logf("AWS contract: %d of %d simulated operations checked against botocore (request, answer and error envelope): %s", len(covered), len(Ops), strings.Join(covered, " "))
	if len(covered) != len(Ops) {
		t.Errorf("%d operations checked, the simulator registers %d", len(covered), len(Ops))
	}
}

// driveEveryOperation serves a strict simulator behind a contract recorder
// and calls every operation through the SDK: each paginated one in small
// pages and with a broken token, each once throttled.
func driveEveryOperation(t *testing.T) (*contractRecorder, []string) {
	var strict []string
	var strictMu sync.Mutex
	var failNext atomic.Bool
	opts := Options{
		AccountID: fixtureAccount, Types: fixtureTypes, Prices: fixturePrices, Now: func() time.Time { return fixtureNow },
		Strict: func(service, op string, err error) {
			strictMu.Lock()
			defer strictMu.Unlock()
			strict = append(strict, fmt.Sprintf("%s:%s: %v", service, op, err))
		},
		Fault: func(service, op, region string) (int, string) {
			if failNext.CompareAndSwap(true, false) {
				return Throttle(service)
			}
			return 0, ""
		},
	}
	rec := newContractRecorder(New(contractFleet(), opts))
	srv := httptest.NewServer(rec)
	t.Cleanup(srv.Close)
	ctx := context.Background()
	ec := ec2Client(srv, "us-east-1", signedCreds)
	bad := aws.String("bm90LWEtdG9rZW4")
	wantErr := func(what string, err error) {
		t.Helper()
		if err == nil {
			t.Errorf("%s: no error", what)
		}
	}
	throttled := func(what string, call func() error) {
		t.Helper()
		failNext.Store(true)
		wantErr(what+" throttled", call())
	}

	// EC2.
	if _, err := ec.DescribeRegions(ctx, &ec2.DescribeRegionsInput{AllRegions: aws.Bool(true)}); err != nil {
		t.Fatal(err)
	}
	throttled("DescribeRegions", func() error { _, err := ec.DescribeRegions(ctx, &ec2.DescribeRegionsInput{}); return err })
	instances := func(max int32) func(*string) (int, *string, error) {
		return func(tok *string) (int, *string, error) {
			out, err := ec.DescribeInstances(ctx, &ec2.DescribeInstancesInput{MaxResults: aws.Int32(max), NextToken: tok,
				Filters: []ec2types.Filter{{Name: aws.String("instance-state-name"), Values: []string{"running", "stopped"}}}})
			if err != nil {
				return 0, nil, err
			}
			n := 0
			for _, r := range out.Reservations {
				n += len(r.Instances)
			}
			return n, out.NextToken, nil
		}
	}
	checkPaging(t, "DescribeInstances", instances(5), instances(1000))
	_, err := ec.DescribeInstances(ctx, &ec2.DescribeInstancesInput{NextToken: bad})
	wantErr("DescribeInstances bad token", err)
	types := func(max int32) func(*string) (int, *string, error) {
		return func(tok *string) (int, *string, error) {
			out, err := ec.DescribeInstanceTypes(ctx, &ec2.DescribeInstanceTypesInput{MaxResults: aws.Int32(max), NextToken: tok})
			if err != nil {
				return 0, nil, err
			}
			return len(out.InstanceTypes), out.NextToken, nil
		}
	}
	checkPaging(t, "DescribeInstanceTypes", types(5), types(100))
	_, err = ec.DescribeInstanceTypes(ctx, &ec2.DescribeInstanceTypesInput{NextToken: bad})
	wantErr("DescribeInstanceTypes bad token", err)
	spot := func(max int32) func(*string) (int, *string, error) {
		return func(tok *string) (int, *string, error) {
			out, err := ec.DescribeSpotPriceHistory(ctx, &ec2.DescribeSpotPriceHistoryInput{MaxResults: aws.Int32(max), NextToken: tok,
				StartTime: aws.Time(fixtureNow.Add(-72 * time.Hour)), EndTime: aws.Time(fixtureNow), ProductDescriptions: []string{"Linux/UNIX"}})
			if err != nil {
				return 0, nil, err
			}
			return len(out.SpotPriceHistory), out.NextToken, nil
		}
	}
	checkPaging(t, "DescribeSpotPriceHistory", spot(5), spot(1000))
	_, err = ec.DescribeSpotPriceHistory(ctx, &ec2.DescribeSpotPriceHistoryInput{NextToken: bad})
	wantErr("DescribeSpotPriceHistory bad token", err)
	requests := func(max int32) func(*string) (int, *string, error) {
		return func(tok *string) (int, *string, error) {
			out, err := ec.DescribeSpotInstanceRequests(ctx, &ec2.DescribeSpotInstanceRequestsInput{MaxResults: aws.Int32(max), NextToken: tok})
			if err != nil {
				return 0, nil, err
			}
			return len(out.SpotInstanceRequests), out.NextToken, nil
		}
	}
	checkPaging(t, "DescribeSpotInstanceRequests", requests(5), requests(1000))
	_, err = ec.DescribeSpotInstanceRequests(ctx, &ec2.DescribeSpotInstanceRequestsInput{NextToken: bad})
	wantErr("DescribeSpotInstanceRequests bad token", err)
	if _, err := ec.StopInstances(ctx, &ec2.StopInstancesInput{InstanceIds: []string{"i-0000000000000100a"}}); err != nil {
		t.Fatal(err)
	}
	_, err = ec.StopInstances(ctx, &ec2.StopInstancesInput{InstanceIds: []string{"i-0000000000000100a"}, DryRun: aws.Bool(true)})
	wantErr("StopInstances dry run", err)

	// STS.
	sc := stsClient(srv, signedCreds)
	if _, err := sc.GetCallerIdentity(ctx, &sts.GetCallerIdentityInput{}); err != nil {
		t.Fatal(err)
	}
	throttled("GetCallerIdentity", func() error { _, err := sc.GetCallerIdentity(ctx, &sts.GetCallerIdentityInput{}); return err })
	role := "arn:aws:iam::" + secondAccount + ":role/gpufinops-read"
	if _, err := sc.AssumeRole(ctx, &sts.AssumeRoleInput{RoleArn: aws.String(role), RoleSessionName: aws.String("contract"), DurationSeconds: aws.Int32(900)}); err != nil {
		t.Fatal(err)
	}
	throttled("AssumeRole", func() error {
		_, err := sc.AssumeRole(ctx, &sts.AssumeRoleInput{RoleArn: aws.String(role), RoleSessionName: aws.String("contract")})
		return err
	})

	// CloudWatch in each of its three protocols.
	for _, proto := range []string{"cbor", "json", "query"} {
		cw := cwClient(srv, proto)
		var metrics []cwtypes.Metric
		list := func(tok *string) (int, *string, error) {
			out, err := cw.ListMetrics(ctx, &cloudwatch.ListMetricsInput{Namespace: aws.String("AWS/EC2"), MetricName: aws.String("CPUUtilization"), NextToken: tok})
			if err != nil {
				return 0, nil, err
			}
			metrics = append(metrics, out.Metrics...)
			return len(out.Metrics), out.NextToken, nil
		}
		if _, _, problems := simkit.PageProblems(list, 100); len(problems) > 0 {
			t.Errorf("%s ListMetrics: %v", proto, problems)
		}
		if len(metrics) < 3 {
			t.Fatalf("%s ListMetrics: %d metrics", proto, len(metrics))
		}
		_, err := cw.ListMetrics(ctx, &cloudwatch.ListMetricsInput{NextToken: bad})
		wantErr(proto+" ListMetrics bad token", err)
		throttled(proto+" ListMetrics", func() error { _, err := cw.ListMetrics(ctx, &cloudwatch.ListMetricsInput{}); return err })
		var queries []cwtypes.MetricDataQuery
		for i, m := range metrics[:3] {
			queries = append(queries, cwtypes.MetricDataQuery{Id: aws.String(fmt.Sprintf("q%d", i)),
				MetricStat: &cwtypes.MetricStat{Metric: &m, Period: aws.Int32(300), Stat: aws.String("Average")}})
		}
		data := func(max int32) func(*string) (int, *string, error) {
			return func(tok *string) (int, *string, error) {
				out, err := cw.GetMetricData(ctx, &cloudwatch.GetMetricDataInput{MetricDataQueries: queries, NextToken: tok, MaxDatapoints: aws.Int32(max),
					StartTime: aws.Time(fixtureNow.Add(-6 * time.Hour)), EndTime: aws.Time(fixtureNow), ScanBy: cwtypes.ScanByTimestampAscending})
				if err != nil {
					return 0, nil, err
				}
				n := 0
				for _, r := range out.MetricDataResults {
					n += len(r.Values)
				}
				return n, out.NextToken, nil
			}
		}
		checkPaging(t, proto+" GetMetricData", data(100), data(100800))
		_, err = cw.GetMetricData(ctx, &cloudwatch.GetMetricDataInput{MetricDataQueries: queries, NextToken: bad,
			StartTime: aws.Time(fixtureNow.Add(-time.Hour)), EndTime: aws.Time(fixtureNow)})
		wantErr(proto+" GetMetricData bad token", err)
	}

	// Pricing.
	pc := pricingClient(srv)
	products := func(max int32) func(*string) (int, *string, error) {
		return func(tok *string) (int, *string, error) {
			out, err := pc.GetProducts(ctx, &pricing.GetProductsInput{ServiceCode: aws.String("AmazonEC2"), MaxResults: aws.Int32(max), NextToken: tok,
				Filters: []pricingtypes.Filter{{Type: pricingtypes.FilterTypeTermMatch, Field: aws.String("operatingSystem"), Value: aws.String("Linux")}}})
			if err != nil {
				return 0, nil, err
			}
			return len(out.PriceList), out.NextToken, nil
		}
	}
	checkPaging(t, "GetProducts", products(2), products(100))
	_, err = pc.GetProducts(ctx, &pricing.GetProductsInput{ServiceCode: aws.String("AmazonEC2"), NextToken: bad})
	wantErr("GetProducts bad token", err)
	if _, err := pc.DescribeServices(ctx, &pricing.DescribeServicesInput{ServiceCode: aws.String("AmazonEC2")}); err != nil {
		t.Fatal(err)
	}
	throttled("DescribeServices", func() error { _, err := pc.DescribeServices(ctx, &pricing.DescribeServicesInput{}); return err })

	// Savings Plans.
	spc := savingsPlansClient(srv)
	rates := func(max int32) func(*string) (int, *string, error) {
		return func(tok *string) (int, *string, error) {
			out, err := spc.DescribeSavingsPlansOfferingRates(ctx, &savingsplans.DescribeSavingsPlansOfferingRatesInput{MaxResults: max, NextToken: tok,
				SavingsPlanTypes: []sptypes.SavingsPlanType{sptypes.SavingsPlanTypeCompute}, Products: []sptypes.SavingsPlanProductType{sptypes.SavingsPlanProductTypeEc2}})
			if err != nil {
				return 0, nil, err
			}
			return len(out.SearchResults), out.NextToken, nil
		}
	}
	checkPaging(t, "DescribeSavingsPlansOfferingRates", rates(2), rates(1000))
	throttled("DescribeSavingsPlansOfferingRates", func() error {
		_, err := spc.DescribeSavingsPlansOfferingRates(ctx, &savingsplans.DescribeSavingsPlansOfferingRatesInput{})
		return err
	})

	// Commitments held.
	if _, err := ec.DescribeReservedInstances(ctx, &ec2.DescribeReservedInstancesInput{OfferingClass: ec2types.OfferingClassTypeStandard,
		Filters: []ec2types.Filter{{Name: aws.String("state"), Values: []string{"active", "retired"}}}}); err != nil {
		t.Fatal(err)
	}
	_, err = ec.DescribeReservedInstances(ctx, &ec2.DescribeReservedInstancesInput{DryRun: aws.Bool(true)})
	wantErr("DescribeReservedInstances dry run", err)
	reservations := func(max int32) func(*string) (int, *string, error) {
		return func(tok *string) (int, *string, error) {
			out, err := ec.DescribeCapacityReservations(ctx, &ec2.DescribeCapacityReservationsInput{MaxResults: aws.Int32(max), NextToken: tok,
				Filters: []ec2types.Filter{{Name: aws.String("instance-platform"), Values: []string{"Linux/UNIX"}}}})
			if err != nil {
				return 0, nil, err
			}
			return len(out.CapacityReservations), out.NextToken, nil
		}
	}
	checkPaging(t, "DescribeCapacityReservations", reservations(1), reservations(1000))
	_, err = ec.DescribeCapacityReservations(ctx, &ec2.DescribeCapacityReservationsInput{NextToken: bad})
	wantErr("DescribeCapacityReservations bad token", err)
	plans := func(max int32) func(*string) (int, *string, error) {
		return func(tok *string) (int, *string, error) {
			out, err := spc.DescribeSavingsPlans(ctx, &savingsplans.DescribeSavingsPlansInput{MaxResults: aws.Int32(max), NextToken: tok,
				States: []sptypes.SavingsPlanState{sptypes.SavingsPlanStateActive, sptypes.SavingsPlanStateRetired}})
			if err != nil {
				return 0, nil, err
			}
			return len(out.SavingsPlans), out.NextToken, nil
		}
	}
	checkPaging(t, "DescribeSavingsPlans", plans(1), plans(1000))
	_, err = spc.DescribeSavingsPlans(ctx, &savingsplans.DescribeSavingsPlansInput{NextToken: bad})
	wantErr("DescribeSavingsPlans bad token", err)

	driveSageMaker(t, srv, throttled, wantErr)

	strictMu.Lock()
	defer strictMu.Unlock()
	return rec, slices.Clone(strict)
}

// contractFleet is a generated fleet holding commitments of every kind the
// simulator serves: reserved instances, capacity reservations and blocks,
// and Savings Plans of both types.
func contractFleet() *fleet.Fleet {
	f := generatedFleet(40)
	f.Commitments = heldFixture().Commitments
	// More spot instances than a small page of DescribeSpotInstanceRequests
	// holds, of persistent requests and one-time ones, and hosts of a
	// placement group.
	spot := 0
	for i := range f.Instances {
		in := &f.Instances[i]
		if in.Region != "us-east-1" {
			continue
		}
		if spot < 4 && in.Lifecycle != fleet.Spot {
			in.Lifecycle, in.SpotInterruption = fleet.Spot, []fleet.SpotInterruption{fleet.SpotStop, ""}[spot%2]
			spot++
		}
		if i%3 == 0 {
			in.PlacementGroups = []string{"hpc-cluster"}
		}
	}
	at := func(y int, m time.Month) *time.Time { t := time.Date(y, m, 1, 0, 0, 0, 0, time.UTC); return &t }
	rate := func(s string) *decimal.Decimal { d := decimal.RequireFromString(s); return &d }
	f.Commitments = append(f.Commitments,
		fleet.Held{ID: "cr-0000000000000000a", Provider: fleet.AWS, Kind: "capacity-reservation", Scope: fleet.HeldScope{Level: "zone", Region: "us-east-1", Zone: "us-east-1a"}, Start: at(2026, 1), InstanceType: "p5.48xlarge", Count: 2},
		fleet.Held{ID: "cr-0000000000000000b", Provider: fleet.AWS, Kind: "capacity-block", Scope: fleet.HeldScope{Level: "zone", Region: "us-east-1", Zone: "us-east-1b"}, Start: at(2026, 1), End: at(2027, 1), InstanceType: "p5.48xlarge", Count: 1},
		fleet.Held{ID: "cr-0000000000000000c", Provider: fleet.AWS, Kind: "capacity-reservation", Scope: fleet.HeldScope{Level: "zone", Region: "us-east-1", Zone: "us-east-1c"}, Start: at(2024, 1), End: at(2024, 6), InstanceType: "g5.xlarge", Count: 3},
		fleet.Held{ID: "0a1b2c3d-0000-4000-8000-0000000000a3", Provider: fleet.AWS, Kind: "ec2-instance-savings-plan", Scope: fleet.HeldScope{Level: "region", Region: "us-east-1"}, Term: "3y", Payment: "partial-upfront", Start: at(2025, 1), End: at(2028, 1), InstanceFamily: "p5", HourlyCommitment: rate("12.5")},
	)
	f.Instances = append(f.Instances, sageMakerFleet(fixtureAccount, 12).Instances...)
	return f
}

func TestStrictModeRefusesWhatTheModelForbids(t *testing.T) {
	var mu sync.Mutex
	var heard []string
	s := New(fixtureFleet(), Options{AccountID: fixtureAccount, Types: fixtureTypes, Prices: fixturePrices, Now: func() time.Time { return fixtureNow },
		Strict: func(service, op string, err error) {
			mu.Lock()
			defer mu.Unlock()
			heard = append(heard, service+":"+op+": "+err.Error())
		}})
	got := func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(heard)
	}
	reset := func() {
		mu.Lock()
		defer mu.Unlock()
		heard = nil
	}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	for _, c := range []struct{ body, code string }{
		{"Action=DescribeInstanceTypes&Version=2016-11-15&MaxResults=4", "InvalidParameterValue"},
		{"Action=DescribeInstances&Version=2016-11-15&MaxResults=5&InstanceId.1=i-0a1", "InvalidParameterValue"},
		{"Action=GetCallerIdentity&Version=2011-06-15&Bogus=1", "ValidationError"},
	} {
		reset()
		resp, err := http.Post(srv.URL, "application/x-www-form-urlencoded", strings.NewReader(c.body))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(b), "<Code>"+c.code+"</Code>") {
			t.Errorf("%s: HTTP %d %s; want 400 %s", c.body, resp.StatusCode, b, c.code)
		}
		if h := got(); len(h) != 1 {
			t.Errorf("%s: Strict heard %q; want one violation", c.body, h)
		}
	}
	// A valid request is served and heard of by no one.
	reset()
	resp, err := http.Post(srv.URL, "application/x-www-form-urlencoded", strings.NewReader("Action=DescribeInstanceTypes&Version=2016-11-15&MaxResults=5"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if h := got(); resp.StatusCode != http.StatusOK || len(h) != 0 {
		t.Errorf("valid request: HTTP %d, violations %q", resp.StatusCode, h)
	}
}

// TestSimRefusesPagesBeyondTheModel: a page size outside the model's range
// (or the documented one) is refused by the simulator itself, not only by
// strict mode, and a token is good only for the query that issued it.
func TestSimRefusesPagesBeyondTheModel(t *testing.T) {
	_, srv := serveFixture(t, generatedFleet(20), Options{})
	ctx := context.Background()
	ec := ec2Client(srv, "us-east-1", signedCreds)
	if _, err := ec.DescribeInstanceTypes(ctx, &ec2.DescribeInstanceTypesInput{MaxResults: aws.Int32(101)}); err == nil {
		t.Error("DescribeInstanceTypes MaxResults 101 (model: 5 to 100) served")
	}
	if _, err := ec.DescribeInstanceTypes(ctx, &ec2.DescribeInstanceTypesInput{MaxResults: aws.Int32(4)}); err == nil {
		t.Error("DescribeInstanceTypes MaxResults 4 (model: 5 to 100) served")
	}
	if _, err := ec.DescribeInstances(ctx, &ec2.DescribeInstancesInput{MaxResults: aws.Int32(1001)}); err == nil {
		t.Error("DescribeInstances MaxResults 1001 (documented: 5 to 1000) served")
	}
	if _, err := pricingClient(srv).GetProducts(ctx, &pricing.GetProductsInput{ServiceCode: aws.String("AmazonEC2"), MaxResults: aws.Int32(101)}); err == nil {
		t.Error("GetProducts MaxResults 101 (model: 1 to 100) served")
	}
	if _, err := savingsPlansClient(srv).DescribeSavingsPlansOfferingRates(ctx, &savingsplans.DescribeSavingsPlansOfferingRatesInput{MaxResults: 1001}); err == nil {
		t.Error("DescribeSavingsPlansOfferingRates maxResults 1001 (model: 0 to 1000) served")
	}
	for _, n := range []int32{0, 1001} {
		if _, err := savingsPlansClient(srv).DescribeSavingsPlans(ctx, &savingsplans.DescribeSavingsPlansInput{MaxResults: aws.Int32(n)}); err == nil {
			t.Errorf("DescribeSavingsPlans maxResults %d (model: 1 to 1000) served", n)
		}
	}
	if _, err := ec.DescribeCapacityReservations(ctx, &ec2.DescribeCapacityReservationsInput{MaxResults: aws.Int32(1001)}); err == nil {
		t.Error("DescribeCapacityReservations MaxResults 1001 (model: 1 to 1000) served")
	}
	page, err := ec.DescribeInstances(ctx, &ec2.DescribeInstancesInput{MaxResults: aws.Int32(5)})
	if err != nil || page.NextToken == nil {
		t.Fatalf("first page: %v, token %v", err, page.NextToken)
	}
	_, err = ec.DescribeInstances(ctx, &ec2.DescribeInstancesInput{MaxResults: aws.Int32(5), NextToken: page.NextToken,
		Filters: []ec2types.Filter{{Name: aws.String("instance-state-name"), Values: []string{"running"}}}})
	if err == nil {
		t.Error("a DescribeInstances token served another query's next page")
	}
}
