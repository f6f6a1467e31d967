package aws

import (
	"context"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/gpufinops/gpufinops/providers/ratelimit"
)

// The APIs the adapter paces, each bucket per account and region. The
// figures are AWS's (../shared/research/cloud-apis.md §1.8): EC2's request
// token buckets per account and region (non-mutating 100 burst refilling
// 20 a second; mutating 50 refilling 5), CloudWatch's per-region TPS
// quotas (GetMetricData 50, ListMetrics 25). The Price List, Savings Plans,
// SageMaker and STS do not document theirs: their buckets count and honour
// Retry-After only. providers.aws.rate_limits overrides any of them.
const (
	APIEC2Read       = "ec2-read"
	APIEC2Mutating   = "ec2-mutating"
	APIGetMetricData = "cloudwatch-getmetricdata"
	APIListMetrics   = "cloudwatch-listmetrics"
	APICloudWatch    = "cloudwatch"
	APIPricing       = "pricing"
	APISavingsPlans  = "savingsplans"
	APISTS           = "sts"
	APISageMaker     = "sagemaker"
)

// Quotas are the buckets' documented defaults.
var Quotas = map[string]ratelimit.Quota{
	APIEC2Read:       ratelimit.PerSecond(20, 100),
	APIEC2Mutating:   ratelimit.PerSecond(5, 50),
	APIGetMetricData: ratelimit.PerSecond(50, 50),
	APIListMetrics:   ratelimit.PerSecond(25, 25),
	APICloudWatch:    {},
	APIPricing:       {},
	APISavingsPlans:  {},
	APISTS:           {},
	APISageMaker:     {},
}

// apiOf names the bucket of an operation of a service (its SDK ServiceID).
// EC2's non-mutating bucket holds its Describe, List, Get and Search calls;
// everything else EC2 does (StopInstances) is mutating.
func apiOf(service, op string) string {
	switch service {
	case "EC2":
		for _, p := range []string{"Describe", "List", "Get", "Search"} {
			if strings.HasPrefix(op, p) {
				return APIEC2Read
			}
		}
		return APIEC2Mutating
	case "CloudWatch":
		switch op {
		case "GetMetricData":
			return APIGetMetricData
		case "ListMetrics":
			return APIListMetrics
		}
		return APICloudWatch
	case "Pricing":
		return APIPricing
	case "savingsplans":
		return APISavingsPlans
	case "SageMaker":
		return APISageMaker
	}
	return APISTS
}

// throttles is the SDK's own test of a throttling answer: the codes the
// standard retryer treats as throttles (RequestLimitExceeded, Throttling,
// ThrottlingException, TooManyRequestsException, SlowDown, …) and HTTP 429.
var throttles = retry.IsErrorThrottles(retry.DefaultThrottles)

// limitMiddleware paces every attempt of the calls of one account through
// its bucket (API and region). It sits right after the retryer in the
// finalize step, so each retry takes a token of its own and each answer
// adapts the bucket.
type limitMiddleware struct {
	set     *ratelimit.Set
	account string
}

func (limitMiddleware) ID() string { return "gpufinopsRateLimit" }

func (m limitMiddleware) HandleFinalize(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
	b := m.set.Bucket(apiOf(awsmiddleware.GetServiceID(ctx), awsmiddleware.GetOperationName(ctx)), m.account+"/"+awsmiddleware.GetRegion(ctx))
	sent, err := b.Wait(ctx)
	if err != nil {
		return middleware.FinalizeOutput{}, middleware.Metadata{}, err
	}
	out, md, err := next.HandleFinalize(ctx, in)
	switch {
	case err == nil:
		b.OK()
	case throttles.IsErrorThrottle(err) == aws.TrueTernary:
		var after string
		if resp, ok := awsmiddleware.GetRawResponse(md).(*smithyhttp.Response); ok {
			after = resp.Header.Get("Retry-After")
		}
		b.Throttled(sent, ratelimit.RetryAfter(after))
	}
	return out, md, err
}

// withLimits returns cfg with its calls paced as account's.
func (p *Provider) withLimits(cfg aws.Config, account string) aws.Config {
	if p.limits == nil {
		return cfg
	}
	m := limitMiddleware{set: p.limits, account: account}
	cfg.APIOptions = append(cfg.APIOptions[:len(cfg.APIOptions):len(cfg.APIOptions)], func(s *middleware.Stack) error {
		if err := s.Finalize.Insert(m, "Retry", middleware.After); err != nil {
			// A client without the retryer: paced per call.
			return s.Finalize.Add(m, middleware.After)
		}
		return nil
	})
	return cfg
}
