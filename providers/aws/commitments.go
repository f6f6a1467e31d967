package aws

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/savingsplans"
	sptypes "github.com/aws/aws-sdk-go-v2/service/savingsplans/types"
	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pricing"
	"github.com/gpufinops/gpufinops/providers"
)

var _ providers.CommitmentLister = (*Provider)(nil)

// The APIs the commitments are read with, as scan warnings and doctor name
// them.
const (
	apiReservedInstances    = "ec2:DescribeReservedInstances"
	apiSavingsPlans         = "savingsplans:DescribeSavingsPlans"
	apiCapacityReservations = "ec2:DescribeCapacityReservations"
)

// Kinds of held commitments that pricing has no constant for.
const (
	kindCapacityReservation = "capacity-reservation"
)

// commitmentPage is the page size asked of DescribeSavingsPlans and
// DescribeCapacityReservations (both allow up to 1,000); tests lower it.
var commitmentPage int32 = 1000

// rateDecimals is how many decimals an RI's effective hourly rate keeps:
// EC2 answers fixedPrice as a 32-bit float (FACTS.md), so what lies
// beyond a millionth of a dollar an hour is rounding noise.
const rateDecimals = 6

// ListCommitments implements providers.CommitmentLister. Per account of
// the scan: DescribeSavingsPlans (the global Savings Plans API, states
// active, paged); per account and region: DescribeReservedInstances
// (filter state=active; the API has no paging) and
// DescribeCapacityReservations (filter state=active, paged), capacity
// blocks included (reservationType capacity-block). Each call that fails
// is a ScopeError naming its API; the others are kept.
func (p *Provider) ListCommitments(ctx context.Context, scopes []providers.Scope) ([]fleet.Held, []*providers.ScopeError) {
	type job struct {
		scope providers.Scope
		api   string
	}
	var jobs []job
	seen := map[string]bool{}
	for _, sc := range scopes {
		acct := providers.Scope{Provider: sc.Provider, Account: sc.Account, Profile: sc.Profile}
		if k := acct.String() + "|" + acct.Profile; !seen[k] {
			seen[k] = true
			jobs = append(jobs, job{acct, apiSavingsPlans})
		}
		if sc.Region != "" {
			jobs = append(jobs, job{sc, apiReservedInstances}, job{sc, apiCapacityReservations})
		}
	}
	var (
		mu     sync.Mutex
		held   []fleet.Held
		failed []*providers.ScopeError
		wg     sync.WaitGroup
	)
	sem := make(chan struct{}, max(p.opts.Concurrency, 1))
	for _, j := range jobs {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			var (
				got []fleet.Held
				err error
			)
			switch j.api {
			case apiSavingsPlans:
				got, err = p.savingsPlansHeld(ctx, j.scope)
			case apiReservedInstances:
				got, err = p.reservedInstances(ctx, j.scope)
			case apiCapacityReservations:
				got, err = p.capacityReservations(ctx, j.scope)
			}
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				failed = append(failed, &providers.ScopeError{Scope: j.scope, Commitments: true, Source: j.api, Err: classify(err)})
				return
			}
			held = append(held, got...)
		})
	}
	wg.Wait()
	return held, failed
}

// reservedInstances reads the active Reserved Instances of a region.
func (p *Provider) reservedInstances(ctx context.Context, scope providers.Scope) ([]fleet.Held, error) {
	c, err := p.ec2Client(scope)
	if err != nil {
		return nil, err
	}
	out, err := c.DescribeReservedInstances(ctx, &ec2.DescribeReservedInstancesInput{
		Filters: []ec2types.Filter{{Name: aws.String("state"), Values: []string{"active"}}},
	})
	if err != nil {
		return nil, err
	}
	var held []fleet.Held
	for _, ri := range out.ReservedInstances {
		if ri.State != ec2types.ReservedInstanceStateActive {
			continue
		}
		held = append(held, heldRI(scope, ri))
	}
	return held, nil
}

// heldRI is one Reserved Instance as a held commitment: its effective
// hourly rate is the upfront price spread over the term's hours plus the
// hourly usage price and recurring charges.
func heldRI(scope providers.Scope, ri ec2types.ReservedInstances) fleet.Held {
	h := fleet.Held{
		ID:           aws.ToString(ri.ReservedInstancesId),
		Provider:     fleet.AWS,
		Account:      scope.Account,
		Kind:         string(pricing.StandardRI),
		Term:         termOf(aws.ToInt64(ri.Duration)),
		Payment:      paymentOf(string(ri.OfferingType)),
		Start:        utc(ri.Start),
		End:          utc(ri.End),
		InstanceType: string(ri.InstanceType),
		Count:        float64(aws.ToInt32(ri.InstanceCount)),
		Source:       apiReservedInstances,
	}
	if ri.OfferingClass == ec2types.OfferingClassTypeConvertible {
		h.Kind = string(pricing.ConvertibleRI)
	}
	if ri.Scope == ec2types.ScopeAvailabilityZone {
		h.Scope = fleet.HeldScope{Level: "zone", Region: scope.Region, Zone: aws.ToString(ri.AvailabilityZone)}
	} else {
		h.Scope = fleet.HeldScope{Level: "region", Region: scope.Region}
		// Regional Linux/UNIX RIs of default tenancy apply across the
		// sizes of their family (FACTS.md).
		h.SizeFlexible = ri.ProductDescription == ec2types.RIProductDescriptionLinuxUnix &&
			(ri.InstanceTenancy == "" || ri.InstanceTenancy == ec2types.TenancyDefault)
	}
	hours := decimal.NewFromInt(aws.ToInt64(ri.Duration)).Div(decimal.NewFromInt(3600))
	rate := decimal.NewFromFloat32(aws.ToFloat32(ri.UsagePrice))
	if f := aws.ToFloat32(ri.FixedPrice); f != 0 && hours.IsPositive() {
		rate = rate.Add(decimal.NewFromFloat32(f).Div(hours))
	}
	for _, rc := range ri.RecurringCharges {
		if rc.Frequency == ec2types.RecurringChargeFrequencyHourly {
			rate = rate.Add(decimal.NewFromFloat(aws.ToFloat64(rc.Amount)))
		}
	}
	rate = rate.Round(rateDecimals)
	h.HourlyRate = &rate
	return h
}

// savingsPlansHeld reads the active Savings Plans of an account.
func (p *Provider) savingsPlansHeld(ctx context.Context, scope providers.Scope) ([]fleet.Held, error) {
	c, err := p.savingsPlansClient(scope)
	if err != nil {
		return nil, err
	}
	in := &savingsplans.DescribeSavingsPlansInput{States: []sptypes.SavingsPlanState{sptypes.SavingsPlanStateActive}, MaxResults: aws.Int32(commitmentPage)}
	var held []fleet.Held
	for {
		out, err := c.DescribeSavingsPlans(ctx, in)
		if err != nil {
			return nil, err
		}
		for _, sp := range out.SavingsPlans {
			if sp.State != sptypes.SavingsPlanStateActive {
				continue
			}
			h, ok, err := heldSavingsPlan(scope, sp)
			if err != nil {
				return nil, err
			}
			if ok {
				held = append(held, h)
			}
		}
		if aws.ToString(out.NextToken) == "" {
			return held, nil
		}
		in.NextToken = out.NextToken
	}
}

// KindSageMakerSavingsPlan is the held kind of a SageMaker (Machine
// Learning) Savings Plan: it covers SageMaker usage only (notebooks,
// Studio, training, processing, inference), in any region and family, and
// no EC2 instance.
const KindSageMakerSavingsPlan = fleet.HeldSageMakerSavingsPlan

// heldSavingsPlan is one Savings Plan as a held commitment; false for the
// plans that cover no GPU machine (Database).
func heldSavingsPlan(scope providers.Scope, sp sptypes.SavingsPlan) (fleet.Held, bool, error) {
	h := fleet.Held{
		ID:       aws.ToString(sp.SavingsPlanArn),
		Provider: fleet.AWS,
		Account:  scope.Account,
		Term:     termOf(sp.TermDurationInSeconds),
		Payment:  paymentOf(string(sp.PaymentOption)),
		Source:   apiSavingsPlans,
	}
	if h.ID == "" {
		h.ID = aws.ToString(sp.SavingsPlanId)
	}
	switch sp.SavingsPlanType {
	case sptypes.SavingsPlanTypeCompute:
		h.Kind = string(pricing.ComputeSavingsPlan)
		h.Scope = fleet.HeldScope{Level: "account"}
	case sptypes.SavingsPlanTypeEc2Instance:
		h.Kind = string(pricing.EC2InstanceSavingsPlan)
		h.Scope = fleet.HeldScope{Level: "region", Region: aws.ToString(sp.Region)}
		h.InstanceFamily = aws.ToString(sp.Ec2InstanceFamily)
	case sptypes.SavingsPlanTypeSagemaker:
		h.Kind = KindSageMakerSavingsPlan
		h.Scope = fleet.HeldScope{Level: "account"}
	default:
		return fleet.Held{}, false, nil
	}
	commit, err := decimal.NewFromString(aws.ToString(sp.Commitment))
	if err != nil {
		return fleet.Held{}, false, fmt.Errorf("savings plan %s: commitment %q: %w", h.ID, aws.ToString(sp.Commitment), err)
	}
	h.HourlyCommitment = &commit
	for _, t := range []struct {
		s   string
		dst **time.Time
	}{{aws.ToString(sp.Start), &h.Start}, {aws.ToString(sp.End), &h.End}} {
		if t.s == "" {
			continue
		}
		v, err := time.Parse(time.RFC3339, t.s)
		if err != nil {
			return fleet.Held{}, false, fmt.Errorf("savings plan %s: date %q: %w", h.ID, t.s, err)
		}
		v = v.UTC()
		*t.dst = &v
	}
	return h, true, nil
}

// capacityReservations reads the active Capacity Reservations and
// Capacity Blocks of a region.
func (p *Provider) capacityReservations(ctx context.Context, scope providers.Scope) ([]fleet.Held, error) {
	c, err := p.ec2Client(scope)
	if err != nil {
		return nil, err
	}
	pages := ec2.NewDescribeCapacityReservationsPaginator(c, &ec2.DescribeCapacityReservationsInput{
		Filters:    []ec2types.Filter{{Name: aws.String("state"), Values: []string{"active"}}},
		MaxResults: aws.Int32(commitmentPage),
	})
	var held []fleet.Held
	for pages.HasMorePages() {
		out, err := pages.NextPage(ctx)
		if err != nil {
			return nil, err
		}
		for _, cr := range out.CapacityReservations {
			if cr.State != ec2types.CapacityReservationStateActive {
				continue
			}
			h := fleet.Held{
				ID:           aws.ToString(cr.CapacityReservationId),
				Provider:     fleet.AWS,
				Account:      scope.Account,
				Kind:         kindCapacityReservation,
				Scope:        fleet.HeldScope{Level: "zone", Region: scope.Region, Zone: aws.ToString(cr.AvailabilityZone)},
				Start:        utc(cr.StartDate),
				InstanceType: aws.ToString(cr.InstanceType),
				Count:        float64(aws.ToInt32(cr.TotalInstanceCount)),
				Source:       apiCapacityReservations,
			}
			if cr.ReservationType == ec2types.CapacityReservationTypeCapacityBlock {
				h.Kind = string(pricing.CapacityBlock)
			}
			if cr.EndDateType != ec2types.EndDateTypeUnlimited {
				h.End = utc(cr.EndDate)
			}
			held = append(held, h)
		}
	}
	return held, nil
}

// termOf names a term of so many seconds: 1y (31,536,000) or 3y
// (94,608,000); another length is its whole years, else days.
func termOf(seconds int64) string {
	const year = 365 * 24 * 3600
	switch {
	case seconds <= 0:
		return ""
	case seconds%year == 0:
		return fmt.Sprintf("%dy", seconds/year)
	}
	return fmt.Sprintf("%dd", seconds/(24*3600))
}

// paymentOf maps an offering type or payment option ("All Upfront") to
// pricing's payment names; the old Heavy/Medium/Light Utilization types
// are kept as they are.
func paymentOf(s string) string {
	switch strings.ToLower(s) {
	case "all upfront":
		return pricing.PayAllUpfront
	case "partial upfront":
		return pricing.PayPartialUpfront
	case "no upfront":
		return pricing.PayNoUpfront
	}
	return s
}

func utc(t *time.Time) *time.Time {
	if t == nil || t.IsZero() {
		return nil
	}
	v := t.UTC()
	return &v
}

// commitmentProbes are doctor's checks of the commitment reads:
// account-wide savingsplans:DescribeSavingsPlans (one call of one result;
// the API has no dry run), per region ec2:DescribeReservedInstances and
// ec2:DescribeCapacityReservations with DryRun.
func (p *Provider) commitmentProbes(scope providers.Scope) []probe {
	if scope.Region == "" {
		spc, _ := p.savingsPlansClient(scope)
		return []probe{{apiSavingsPlans, "one call", func(ctx context.Context) error {
			_, err := spc.DescribeSavingsPlans(ctx, &savingsplans.DescribeSavingsPlansInput{MaxResults: aws.Int32(1)})
			return err
		}}}
	}
	ec2c, err := p.ec2Client(scope)
	if err != nil {
		return nil // the other regional checks say why
	}
	return []probe{
		{apiReservedInstances, "DryRun", func(ctx context.Context) error {
			_, err := ec2c.DescribeReservedInstances(ctx, &ec2.DescribeReservedInstancesInput{DryRun: aws.Bool(true)})
			return dryRun(err)
		}},
		{apiCapacityReservations, "DryRun", func(ctx context.Context) error {
			_, err := ec2c.DescribeCapacityReservations(ctx, &ec2.DescribeCapacityReservationsInput{DryRun: aws.Bool(true)})
			return dryRun(err)
		}},
	}
}
