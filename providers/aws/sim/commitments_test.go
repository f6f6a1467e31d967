package sim

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/savingsplans"
	sptypes "github.com/aws/aws-sdk-go-v2/service/savingsplans/types"
	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/fleet"
)

func heldFixture() *fleet.Fleet {
	f := fixtureFleet()
	at := func(y int, m time.Month) *time.Time { t := time.Date(y, m, 1, 0, 0, 0, 0, time.UTC); return &t }
	rate := func(s string) *decimal.Decimal { d := decimal.RequireFromString(s); return &d }
	f.Commitments = []fleet.Held{
		{ID: "ri-all", Provider: fleet.AWS, Kind: "standard-reserved-instance", Scope: fleet.HeldScope{Level: "region", Region: "us-east-1"}, Term: "1y", Payment: "all-upfront", Start: at(2026, 1), End: at(2027, 1), InstanceType: "p5.48xlarge", Count: 1, SizeFlexible: true, HourlyRate: rate("10")},
		{ID: "ri-partial", Provider: fleet.AWS, Kind: "standard-reserved-instance", Scope: fleet.HeldScope{Level: "region", Region: "us-east-1"}, Term: "3y", Payment: "partial-upfront", Start: at(2025, 1), End: at(2028, 1), InstanceType: "g5.xlarge", Count: 2, HourlyRate: rate("0.5")},
		{ID: "ri-none", Provider: fleet.AWS, Kind: "convertible-reserved-instance", Scope: fleet.HeldScope{Level: "zone", Region: "us-east-1", Zone: "us-east-1b"}, Term: "1y", Payment: "no-upfront", Start: at(2026, 1), End: at(2027, 1), InstanceType: "p4d.24xlarge", Count: 1, HourlyRate: rate("20.5")},
		{ID: "ri-old", Provider: fleet.AWS, Kind: "standard-reserved-instance", Scope: fleet.HeldScope{Level: "region", Region: "us-east-1"}, Term: "1y", Payment: "no-upfront", Start: at(2024, 1), End: at(2025, 1), InstanceType: "g5.xlarge", Count: 1, HourlyRate: rate("0.6")},
		{ID: "0a1b2c3d-0000-4000-8000-0000000000a1", Provider: fleet.AWS, Kind: "compute-savings-plan", Term: "1y", Payment: "no-upfront", Start: at(2024, 1), End: at(2025, 1), HourlyCommitment: rate("1")},
		{ID: "0a1b2c3d-0000-4000-8000-0000000000a2", Provider: fleet.AWS, Kind: "compute-savings-plan", Term: "1y", Payment: "all-upfront", Start: at(2026, 2), End: at(2027, 2), HourlyCommitment: rate("2")},
	}
	return f
}

// TestReservedInstancePrices holds the facts of FACTS.md on how EC2
// prices a Reserved Instance: an All Upfront RI is a fixed price and no
// hourly charge, a No Upfront RI an hourly recurring charge and no fixed
// price, a Partial Upfront RI both ("Reserved Instance pricing": payment
// options); the term is in seconds (31536000, 94608000); a regional RI is
// size-flexible only for Linux/UNIX ("Instance size flexibility");
// retired RIs stay listed unless the state filter drops them.
func TestReservedInstancePrices(t *testing.T) {
	_, srv := serveFixture(t, heldFixture(), Options{})
	c := ec2Client(srv, "us-east-1", signedCreds)
	out, err := c.DescribeReservedInstances(context.Background(), &ec2.DescribeReservedInstancesInput{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]ec2types.ReservedInstances{}
	for _, ri := range out.ReservedInstances {
		got[aws.ToString(ri.ReservedInstancesId)] = ri
	}
	hourly := func(ri ec2types.ReservedInstances) float64 {
		var h float64
		for _, rc := range ri.RecurringCharges {
			if rc.Frequency == ec2types.RecurringChargeFrequencyHourly {
				h += aws.ToFloat64(rc.Amount)
			}
		}
		return h
	}
	for id, want := range map[string]struct {
		fixed, hourly float64
		duration      int64
		offering      ec2types.OfferingTypeValues
		product       ec2types.RIProductDescription
		scope         ec2types.Scope
		state         ec2types.ReservedInstanceState
	}{
		"ri-all":     {87600, 0, 31536000, "All Upfront", "Linux/UNIX", ec2types.ScopeRegional, "active"},
		"ri-partial": {6570, 0.25, 94608000, "Partial Upfront", "Windows", ec2types.ScopeRegional, "active"},
		"ri-none":    {0, 20.5, 31536000, "No Upfront", "Linux/UNIX", ec2types.ScopeAvailabilityZone, "active"},
		"ri-old":     {0, 0.6, 31536000, "No Upfront", "Windows", ec2types.ScopeRegional, "retired"},
	} {
		ri, ok := got[id]
		if !ok {
			t.Errorf("%s not listed", id)
			continue
		}
		if f := aws.ToFloat32(ri.FixedPrice); float64(f) != want.fixed || hourly(ri) != want.hourly || aws.ToInt64(ri.Duration) != want.duration ||
			ri.OfferingType != want.offering || ri.ProductDescription != want.product || ri.Scope != want.scope || ri.State != want.state {
			t.Errorf("%s: fixed %v hourly %v duration %d %s %s %s %s, want %+v", id, f, hourly(ri), aws.ToInt64(ri.Duration),
				ri.OfferingType, ri.ProductDescription, ri.Scope, ri.State, want)
		}
	}
	out, err = c.DescribeReservedInstances(context.Background(), &ec2.DescribeReservedInstancesInput{
		Filters: []ec2types.Filter{{Name: aws.String("state"), Values: []string{"active"}}}})
	if err != nil || len(out.ReservedInstances) != 3 {
		t.Errorf("state=active: %d RIs (%v), want 3", len(out.ReservedInstances), err)
	}
	// OfferingType, a member of the model's request, selects by payment option.
	out, err = c.DescribeReservedInstances(context.Background(), &ec2.DescribeReservedInstancesInput{OfferingType: ec2types.OfferingTypeValuesNoUpfront})
	if err != nil || len(out.ReservedInstances) != 2 {
		t.Errorf("OfferingType No Upfront: %d RIs (%v), want 2 (ri-none, ri-old)", len(out.ReservedInstances), err)
	}
	if _, err := c.DescribeReservedInstances(context.Background(), &ec2.DescribeReservedInstancesInput{OfferingType: "Monthly"}); errorCode(t, err) != "InvalidParameterValue" {
		t.Errorf("OfferingType Monthly was not refused")
	}
	if _, err := c.DescribeReservedInstances(context.Background(), &ec2.DescribeReservedInstancesInput{
		Filters: []ec2types.Filter{{Name: aws.String("colour"), Values: []string{"x"}}}}); errorCode(t, err) != "InvalidParameterValue" {
		t.Errorf("an unknown filter was not refused")
	}
}

// TestSavingsPlansStates: DescribeSavingsPlans lists every plan of the
// account with its state, and states selects among them.
func TestSavingsPlansStates(t *testing.T) {
	_, srv := serveFixture(t, heldFixture(), Options{})
	c := savingsPlansClient(srv)
	all, err := c.DescribeSavingsPlans(context.Background(), &savingsplans.DescribeSavingsPlansInput{})
	if err != nil {
		t.Fatal(err)
	}
	if len(all.SavingsPlans) != 2 {
		t.Fatalf("%d plans, want 2", len(all.SavingsPlans))
	}
	active, err := c.DescribeSavingsPlans(context.Background(), &savingsplans.DescribeSavingsPlansInput{States: []sptypes.SavingsPlanState{"active"}})
	if err != nil || len(active.SavingsPlans) != 1 {
		t.Fatalf("active: %v %v", active, err)
	}
	sp := active.SavingsPlans[0]
	if aws.ToString(sp.Commitment) != "2" || aws.ToString(sp.UpfrontPaymentAmount) != "17520" || aws.ToString(sp.RecurringPaymentAmount) != "0" ||
		sp.TermDurationInSeconds != 31536000 || sp.PaymentOption != "All Upfront" || sp.SavingsPlanType != "Compute" {
		t.Errorf("plan %+v", sp)
	}
}

// TestCommitmentFiltersAreTheDocumented holds FACTS.md's filter lists:
// every filter EC2's API reference documents for DescribeReservedInstances
// and DescribeCapacityReservations is served (the model types a filter's
// name as any string), one it does not is refused.
func TestCommitmentFiltersAreTheDocumented(t *testing.T) {
	f := contractFleet()
	_, srv := serveFixture(t, f, Options{})
	c := ec2Client(srv, "us-east-1", signedCreds)
	ctx := context.Background()
	filter := func(name, value string) []ec2types.Filter {
		return []ec2types.Filter{{Name: aws.String(name), Values: []string{value}}}
	}
	ris := func(name, value string) ([]string, error) {
		out, err := c.DescribeReservedInstances(ctx, &ec2.DescribeReservedInstancesInput{Filters: filter(name, value)})
		if err != nil {
			return nil, err
		}
		var ids []string
		for _, ri := range out.ReservedInstances {
			ids = append(ids, aws.ToString(ri.ReservedInstancesId))
		}
		return ids, nil
	}
	crs := func(name, value string) ([]string, error) {
		out, err := c.DescribeCapacityReservations(ctx, &ec2.DescribeCapacityReservationsInput{Filters: filter(name, value)})
		if err != nil {
			return nil, err
		}
		var ids []string
		for _, cr := range out.CapacityReservations {
			ids = append(ids, aws.ToString(cr.CapacityReservationId))
		}
		return ids, nil
	}
	// DescribeReservedInstances' filters (API reference, Filter.N).
	for _, c := range []struct {
		name, value string
		want        int
	}{
		{"availability-zone", "us-east-1b", 1}, {"availability-zone-id", "use1-az1", 0}, {"duration", "94608000", 1},
		{"end", "2027-01-01T00:00:00.000Z", 2}, {"fixed-price", "87600", 1}, {"instance-type", "g5.xlarge", 2},
		{"scope", "Availability Zone", 1}, {"product-description", "Linux/UNIX", 2}, {"reserved-instances-id", "ri-old", 1},
		{"start", "2026-01-01T00:00:00.000Z", 2}, {"state", "retired", 1}, {"tag:team", "ml", 0}, {"tag-key", "team", 0},
		{"usage-price", "0.0", 4},
	} {
		ids, err := ris(c.name, c.value)
		if err != nil || len(ids) != c.want {
			t.Errorf("DescribeReservedInstances %s=%s: %v (%v), want %d", c.name, c.value, ids, err, c.want)
		}
	}
	// DescribeCapacityReservations' filters.
	for _, c := range []struct {
		name, value string
		want        int
	}{
		{"instance-type", "p5.48xlarge", 2}, {"owner-id", fixtureAccount, 3}, {"instance-platform", "Linux/UNIX", 3},
		{"availability-zone", "us-east-1c", 1}, {"tenancy", "default", 3}, {"outpost-arn", "*", 0}, {"state", "expired", 1},
		{"start-date", "2026-01-01T00:00:00.000Z", 2}, {"end-date", "2027-01-01T00:00:00.000Z", 1}, {"end-date-type", "unlimited", 1},
		{"instance-match-criteria", "targeted", 1}, {"placement-group-arn", "*", 0},
	} {
		ids, err := crs(c.name, c.value)
		if err != nil || len(ids) != c.want {
			t.Errorf("DescribeCapacityReservations %s=%s: %v (%v), want %d", c.name, c.value, ids, err, c.want)
		}
	}
	if _, err := ris("offering-type", "No Upfront"); errorCode(t, err) != "InvalidParameterValue" {
		t.Error("DescribeReservedInstances: the undocumented filter offering-type was not refused")
	}
	if _, err := crs("capacity-reservation-id", "cr-0000000000000000a"); errorCode(t, err) != "InvalidParameterValue" {
		t.Error("DescribeCapacityReservations: the undocumented filter capacity-reservation-id was not refused")
	}
}
