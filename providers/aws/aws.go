// Package aws is the AWS adapter: GPU instances from EC2, their GPU
// utilization from CloudWatch agent metrics, live prices from the Price List,
// spot price history and Savings Plans, and stopping idle instances, all
// through aws-sdk-go-v2. AWS's quirks stay in this package.
package aws

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials/stscreds"
	"github.com/aws/aws-sdk-go-v2/feature/ec2/imds"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/pricing"
	"github.com/aws/aws-sdk-go-v2/service/sagemaker"
	"github.com/aws/aws-sdk-go-v2/service/savingsplans"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/logging"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"
	"net/http"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/providers"
	"github.com/gpufinops/gpufinops/providers/ratelimit"
)

// DefaultNamespace is where the CloudWatch agent publishes nvidia_smi metrics.
const DefaultNamespace = "CWAgent"

// DefaultLookback is how far back utilization is read.
const DefaultLookback = 14 * 24 * time.Hour

// account is one set of credentials and the account they reach.
type account struct {
	// label is the profile or role ARN, or "default".
	label string
	id    string
	cfg   aws.Config
	// role is set for an account reached by assuming a role.
	role bool
}

// Provider reads one or more AWS accounts.
type Provider struct {
	opts     providers.Options
	aws      options
	accounts []*account
	// limits paces every call of every account (nil: off).
	limits *ratelimit.Set

	mu      sync.Mutex
	ec2s    map[string]*ec2.Client        // account label + region
	cws     map[string]*cloudwatch.Client // account label + region
	sms     map[string]*sagemaker.Client  // account label + region
	typeMu  sync.Mutex
	typeMap map[string]*typeEntry // region + type
	// notes are the scan's notes not tied to a failed scope (TakeScanNotes).
	notes []string
}

// note keeps a note for the scan's end.
func (p *Provider) note(s string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.notes = append(p.notes, s)
}

// TakeScanNotes returns the scan's notes (providers.ScanNoter), once.
func (p *Provider) TakeScanNotes() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := p.notes
	p.notes = nil
	return out
}

// Compile-time checks of the capabilities the adapter offers.
var _ providers.Provider = (*Provider)(nil)

// New loads credentials (the default chain, each --profile, each role to
// assume, from opts.Adapter: OptProfiles, OptRoleARNs) and checks each with
// GetCallerIdentity, or for a role with the AssumeRole that names its
// account. Missing or rejected credentials are
// providers.ErrCredentials.
func New(ctx context.Context, opts providers.Options) (providers.Provider, error) {
	if opts.Lookback <= 0 {
		opts.Lookback = DefaultLookback
	}
	if opts.Concurrency <= 0 {
		opts.Concurrency = 8
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	p := &Provider{opts: opts, aws: optionsFrom(opts.Adapter), ec2s: map[string]*ec2.Client{}, cws: map[string]*cloudwatch.Client{}, sms: map[string]*sagemaker.Client{}, typeMap: map[string]*typeEntry{}}
	limits, err := ratelimit.NewSet(Quotas, p.aws.rateLimits)
	if err != nil {
		return nil, fmt.Errorf("providers.aws.%s: %w", OptRateLimits, err)
	}
	if !slices.Contains(p.aws.rateLimits, "off") {
		p.limits = limits
	}
	profiles := p.aws.profiles
	if len(profiles) == 0 {
		profiles = []string{""}
	}
	for _, prof := range profiles {
		base, err := p.loadConfig(ctx, prof)
		if err != nil {
			return nil, err
		}
		label := prof
		if label == "" {
			label = "default"
		}
		cfg := p.withLimits(base, label)
		p.accounts = append(p.accounts, &account{label: label, cfg: cfg})
		for _, arn := range p.aws.roleARNs {
			// AssumeRole is a call of the base account; the role's own
			// calls have buckets of their own.
			assumed := p.withLimits(base.Copy(), arn)
			assumed.Credentials = aws.NewCredentialsCache(stscreds.NewAssumeRoleProvider(sts.NewFromConfig(cfg, p.stsOptions), arn))
			p.accounts = append(p.accounts, &account{label: arn, cfg: assumed, role: true})
		}
	}
	for _, a := range p.accounts {
		if a.role {
			// AssumeRole, which the scan needs anyway, checks the
			// credentials and names the account (AssumedRoleUser's ARN).
			creds, err := a.cfg.Credentials.Retrieve(ctx)
			if err != nil {
				return nil, fmt.Errorf("aws %s: %w", a.label, classify(err))
			}
			if creds.AccountID != "" {
				a.id = creds.AccountID
				continue
			}
		}
		out, err := sts.NewFromConfig(a.cfg, p.stsOptions).GetCallerIdentity(ctx, &sts.GetCallerIdentityInput{})
		if err != nil {
			return nil, fmt.Errorf("aws %s: %w", a.label, classify(err))
		}
		a.id = aws.ToString(out.Account)
	}
	return p, nil
}

// loadConfig reads the shared config and credentials for a profile ("" is the
// default chain), pointed at the simulator when an endpoint is set.
func (p *Provider) loadConfig(ctx context.Context, profile string) (aws.Config, error) {
	var lo []func(*config.LoadOptions) error
	if profile != "" {
		lo = append(lo, config.WithSharedConfigProfile(profile))
	}
	switch {
	case p.opts.HTTPClient != nil:
		lo = append(lo, config.WithHTTPClient(p.opts.HTTPClient))
	default:
		// Connections open within the connect timeout (a
		// BuildableClient, which AWS_CA_BUNDLE needs); the request
		// timeout is boundAttempts'.
		connect := cmp.Or(p.opts.ConnectTimeout, providers.DefaultConnectTimeout)
		lo = append(lo, config.WithHTTPClient(awshttp.NewBuildableClient().
			WithDialerOptions(func(d *net.Dialer) { d.Timeout = connect }).
			WithTransportOptions(func(t *http.Transport) { t.TLSHandshakeTimeout = connect })))
	}
	lo = append(lo, config.WithAPIOptions([]func(*middleware.Stack) error{p.boundAttempts}))
	if p.opts.Endpoint != "" {
		// A simulator has no instance metadata service to ask for credentials.
		lo = append(lo, config.WithBaseEndpoint(p.opts.Endpoint), config.WithEC2IMDSClientEnableState(imds.ClientDisabled))
	}
	if onRequest := p.opts.OnRequest; onRequest != nil {
		// The deserialize step runs once per attempt, retries included.
		lo = append(lo, config.WithAPIOptions([]func(*middleware.Stack) error{func(s *middleware.Stack) error {
			return s.Deserialize.Add(middleware.DeserializeMiddlewareFunc("gpufinopsCountRequests",
				func(ctx context.Context, in middleware.DeserializeInput, next middleware.DeserializeHandler) (middleware.DeserializeOutput, middleware.Metadata, error) {
					onRequest()
					return next.HandleDeserialize(ctx, in)
				}), middleware.Before)
		}}))
	}
	// The SDK's own log lines (e.g. IMDS fallbacks) would land on stderr.
	lo = append(lo, config.WithLogger(logging.Nop{}), config.WithClientLogMode(0))
	// A region-wide scan makes many calls: with 5 attempts, 30 % throttling
	// failed one call in about 400 (0.3^5) and with it the whole region;
	// 10 attempts make that one in 170,000 at little cost in time, the
	// backoff being capped at 2 s.
	lo = append(lo, config.WithRetryer(func() aws.Retryer {
		return retry.NewStandard(func(o *retry.StandardOptions) {
			o.MaxAttempts = 10
			o.MaxBackoff = 2 * time.Second
			if p.opts.RetryMaxBackoff > 0 {
				o.MaxBackoff = p.opts.RetryMaxBackoff
				o.Backoff = retry.NewExponentialJitterBackoff(p.opts.RetryMaxBackoff)
			}
		})
	}))
	cfg, err := config.LoadDefaultConfig(ctx, lo...)
	if err != nil {
		return aws.Config{}, fmt.Errorf("aws profile %q: %w: %v", profile, providers.ErrCredentials, err)
	}
	if cfg.Region == "" {
		cfg.Region = "us-east-1"
	}
	return cfg, nil
}

func (p *Provider) stsOptions(o *sts.Options) {}

// boundAttempts bounds each attempt of a call, its answer read, by the
// request timeout, and turns a refused connection or a passed timeout into
// providers.ConnectError or providers.RequestTimeoutError, which the
// retryer does not retry (their RetryableError is false): an unreachable
// or hung endpoint fails in seconds, not after ten attempts. The caller's
// context bounds the attempts together.
func (p *Provider) boundAttempts(s *middleware.Stack) error {
	return s.Deserialize.Add(middleware.DeserializeMiddlewareFunc("gpufinopsBoundAttempt",
		func(ctx context.Context, in middleware.DeserializeInput, next middleware.DeserializeHandler) (middleware.DeserializeOutput, middleware.Metadata, error) {
			actx, cancel := ctx, context.CancelFunc(func() {})
			if p.opts.RequestTimeout > 0 {
				actx, cancel = context.WithTimeout(ctx, p.opts.RequestTimeout)
			}
			defer cancel()
			out, md, err := next.HandleDeserialize(actx, in)
			if err != nil {
				host := ""
				if r, ok := in.Request.(*smithyhttp.Request); ok && r.URL != nil {
					host = r.URL.Host
				}
				err = providers.TransportError(host, p.opts.RequestTimeout, ctx, actx, err)
			}
			return out, md, err
		}), middleware.Before)
}

// MetricsSource implements providers.MetricsSourceNamer.
func (p *Provider) MetricsSource() string { return "cloudwatch" }

// Name implements providers.Provider.
func (p *Provider) Name() fleet.Provider { return fleet.AWS }

// Scopes lists every enabled region (or the configured ones) of every account.
func (p *Provider) Scopes(ctx context.Context) ([]providers.Scope, error) {
	return providers.AllScopes(ctx, p, func(f *providers.ScopeError) string { return "aws " + f.Scope.Profile })
}

// PartialScopes implements providers.PartialScoper: an account whose
// regions cannot be listed is a failure without a region, and the other
// accounts are scanned. Missing or rejected credentials, or no account
// listed at all, fail the whole call.
func (p *Provider) PartialScopes(ctx context.Context) ([]providers.Scope, []*providers.ScopeError, error) {
	accounts := make([]providers.Scope, len(p.accounts))
	cfgs := make(map[string]aws.Config, len(p.accounts))
	for i, a := range p.accounts {
		accounts[i] = providers.Scope{Provider: fleet.AWS, Account: a.id, Profile: a.label}
		cfgs[a.label] = a.cfg
	}
	return providers.RegionScopes(ctx, accounts, p.opts.Regions, func(ctx context.Context, s providers.Scope) ([]string, error) {
		res, err := ec2.NewFromConfig(cfgs[s.Profile]).DescribeRegions(ctx, &ec2.DescribeRegionsInput{})
		if err != nil {
			return nil, classify(err)
		}
		regions := make([]string, 0, len(res.Regions))
		for _, r := range res.Regions {
			regions = append(regions, aws.ToString(r.RegionName))
		}
		sort.Strings(regions)
		return regions, nil
	})
}

func (p *Provider) account(scope providers.Scope) (*account, error) {
	for _, a := range p.accounts {
		if a.label == scope.Profile || (scope.Profile == "" && a.id == scope.Account) {
			return a, nil
		}
	}
	return nil, fmt.Errorf("no credentials for %s", scope)
}

// ec2Client returns the scope's EC2 client, built once.
func (p *Provider) ec2Client(scope providers.Scope) (*ec2.Client, error) {
	return cachedClient(p, p.ec2s, scope, func(cfg aws.Config) *ec2.Client {
		return ec2.NewFromConfig(cfg, func(o *ec2.Options) { o.Region = scope.Region })
	})
}

// cloudWatchClient returns the scope's CloudWatch client, built once, with
// GetMetricData's answers decoded by metricDataProtocol.
func (p *Provider) cloudWatchClient(scope providers.Scope) (*cloudwatch.Client, error) {
	return cachedClient(p, p.cws, scope, func(cfg aws.Config) *cloudwatch.Client {
		return cloudwatch.NewFromConfig(cfg, func(o *cloudwatch.Options) { o.Region = scope.Region }, withMetricDataDecoder)
	})
}

// cachedClient returns the regional client of a scope's account from cache,
// building it on first use.
func cachedClient[C any](p *Provider, cache map[string]C, scope providers.Scope, build func(aws.Config) C) (C, error) {
	var zero C
	a, err := p.account(scope)
	if err != nil {
		return zero, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	key := a.label + "|" + scope.Region
	if c, ok := cache[key]; ok {
		return c, nil
	}
	c := build(a.cfg)
	cache[key] = c
	return c, nil
}

// pricingClient returns a Price List client; the API lives in us-east-1.
func (p *Provider) pricingClient(scope providers.Scope) (*pricing.Client, error) {
	a, err := p.account(scope)
	if err != nil {
		return nil, err
	}
	return pricing.NewFromConfig(a.cfg, func(o *pricing.Options) { o.Region = "us-east-1" }), nil
}

// savingsPlansClient returns a Savings Plans client (a global service signed for us-east-1).
func (p *Provider) savingsPlansClient(scope providers.Scope) (*savingsplans.Client, error) {
	a, err := p.account(scope)
	if err != nil {
		return nil, err
	}
	return savingsplans.NewFromConfig(a.cfg, func(o *savingsplans.Options) { o.Region = "us-east-1" }), nil
}

// classify maps AWS errors to the providers sentinels, keeping the message.
func classify(err error) error {
	var apiErr smithy.APIError
	if errors.As(err, &apiErr) {
		switch apiErr.ErrorCode() {
		case "AuthFailure", "InvalidClientTokenId", "UnrecognizedClientException", "ExpiredToken", "SignatureDoesNotMatch", "InvalidAccessKeyId":
			return providers.WithFix(fmt.Errorf("%w: %s", providers.ErrCredentials, apiErr.ErrorMessage()), rejectedCredentialsFix, nil)
		case "UnauthorizedOperation", "AccessDenied", "AccessDeniedException":
			return fmt.Errorf("%w: %s", providers.ErrPermission, apiErr.ErrorMessage())
		case "RequestLimitExceeded", "Throttling", "ThrottlingException", "TooManyRequestsException":
			return fmt.Errorf("%w: %s", providers.ErrThrottled, apiErr.ErrorMessage())
		}
		return err
	}
	if msg := err.Error(); strings.Contains(msg, "failed to retrieve credentials") || strings.Contains(msg, "get credentials") || strings.Contains(msg, "no EC2 IMDS role found") {
		return providers.WithFix(fmt.Errorf("%w: no AWS credentials found", providers.ErrCredentials), missingCredentialsFix, err)
	}
	return err
}

// missingCredentialsFix and rejectedCredentialsFix say what to do when the
// SDK's credential chain finds nothing, or AWS refuses what it found.
const (
	missingCredentialsFix = `Give gpufinops AWS credentials in one of these ways, then check them with 'gpufinops doctor --provider aws':
  aws configure                        # access keys in ~/.aws/credentials
  aws sso login --profile NAME         # then --profile NAME or AWS_PROFILE=NAME
  export AWS_ACCESS_KEY_ID=… AWS_SECRET_ACCESS_KEY=…
On EC2, ECS or EKS, attach a role to the instance, task or service account.
The least-privilege policy: 'gpufinops iam-policy aws'. The SDK's own message: GPUFINOPS_DEBUG=1.`
	rejectedCredentialsFix = `AWS rejected the credentials: they are expired, revoked or mistyped. Refresh them
('aws sso login', new access keys, or AWS_PROFILE naming another profile), then check them
with 'gpufinops doctor --provider aws'.`
)

// instanceTypeInfo is what DescribeInstanceTypes says of a type's accelerators
// and host.
type instanceTypeInfo struct {
	// accelerator is false for types with no GPU and no Neuron device.
	accelerator  bool
	gpuModel     string
	gpuCount     float64
	gpuMemoryMiB int
	vcpus        int
	memoryMiB    int
	// instanceStoreGB is the type's local instance store (InstanceStorageInfo).
	instanceStoreGB int64
}
