package azure

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/arm"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/cloud"
	azfake "github.com/Azure/azure-sdk-for-go/sdk/azcore/fake"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/compute/armcompute/v7"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/resourcegraph/armresourcegraph"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/resources/armsubscriptions"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/providers"
	"github.com/gpufinops/gpufinops/providers/ratelimit"
)

// DefaultLookback is how far back utilization is read.
const DefaultLookback = 14 * 24 * time.Hour

// armAudience is the token audience of Azure Resource Manager.
const armAudience = "https://management.azure.com"

// Provider reads one or more Azure subscriptions.
type Provider struct {
	opts  providers.Options
	az    options
	cred  azcore.TokenCredential
	arm   *arm.ClientOptions
	plain *policy.ClientOptions // for the metrics and price pipelines
	// limits paces every call (nil: off).
	limits *ratelimit.Set

	graph *armresourcegraph.Client
	subs  *armsubscriptions.Client

	mu        sync.Mutex
	listed    []string                  // subscriptions of the last Scopes
	pending   map[string]*regionListing // region → one Resource Graph read for every subscription
	skus      map[string]map[string]*skuInfo
	skuReads  map[string]*skuRead // region → its Resource SKUs read in flight
	allocated map[string]bool     // IDs listed stopped but still allocated
	// resourceIDs are the listed VMs' ARM IDs by subscription and fleet ID.
	resourceIDs map[string]string
	computes    map[string]*armcompute.ClientFactory
	endpoints   endpoints
	// orRefused is set once the Retail Prices API refused an or query;
	// pendingNotes are notes of the scan not tied to a scope, which
	// providers.Collect takes when the scan ends (TakeScanNotes).
	orRefused    atomic.Bool
	pendingNotes []string
	// amlSubs are the subscriptions' Azure ML workspaces (aml.go).
	amlSubs map[string]*amlSub
}

// endpoints are the URLs of the services that are not ARM.
type endpoints struct {
	// metrics is the batch metrics host of a region ("" → regional Azure host).
	metrics string
	prices  string
}

var _ providers.Provider = (*Provider)(nil)

// credentialFunc builds the credential; tests replace it.
var credentialFunc = func(o *policy.ClientOptions) (azcore.TokenCredential, error) {
	return azidentity.NewDefaultAzureCredential(&azidentity.DefaultAzureCredentialOptions{ClientOptions: azcore.ClientOptions{Transport: o.Transport}})
}

// New builds the adapter with DefaultAzureCredential (environment, workload
// identity, managed identity, Azure CLI). The subscriptions come from
// opts.Adapter (OptSubscriptions), else from what the credential can list;
// with opts.Endpoint every service is that URL (a simulator).
func New(ctx context.Context, opts providers.Options) (providers.Provider, error) {
	return newProvider(ctx, opts, nil)
}

func newProvider(ctx context.Context, opts providers.Options, cred azcore.TokenCredential) (*Provider, error) {
	if opts.Lookback <= 0 {
		opts.Lookback = DefaultLookback
	}
	if opts.Concurrency <= 0 {
		opts.Concurrency = 8
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	p := &Provider{opts: opts, az: optionsFrom(opts.Adapter), pending: map[string]*regionListing{},
		skus: map[string]map[string]*skuInfo{}, skuReads: map[string]*skuRead{}, computes: map[string]*armcompute.ClientFactory{}, allocated: map[string]bool{}, resourceIDs: map[string]string{}}
	if err := validateSubscriptions(p.az.subscriptions); err != nil {
		return nil, fmt.Errorf("providers.azure.subscriptions (--subscription): %w", err)
	}
	limits, err := ratelimit.NewSet(Quotas, p.az.rateLimits)
	if err != nil {
		return nil, fmt.Errorf("providers.azure.%s: %w", OptRateLimits, err)
	}
	if !slices.Contains(p.az.rateLimits, "off") {
		p.limits = limits
	}
	co := p.clientOptions()
	p.plain = &co
	p.arm = &arm.ClientOptions{ClientOptions: co, DisableRPRegistration: true}
	if opts.Endpoint != "" {
		e := strings.TrimRight(opts.Endpoint, "/")
		p.arm.Cloud = cloud.Configuration{ActiveDirectoryAuthorityHost: e + "/", Services: map[cloud.ServiceName]cloud.ServiceConfiguration{
			cloud.ResourceManager: {Endpoint: e, Audience: armAudience},
		}}
		p.endpoints = endpoints{metrics: e, prices: e + "/api/retail/prices"}
	} else {
		p.endpoints = endpoints{prices: "https://prices.azure.com/api/retail/prices"}
	}
	if cred == nil && p.az.testCredential {
		if opts.Endpoint == "" {
			return nil, fmt.Errorf("providers.azure.test_credential: true without providers.azure.endpoint; a test token only works against a simulator")
		}
		cred = &azfake.TokenCredential{}
	}
	if cred == nil {
		var err error
		if cred, err = credentialFunc(&co); err != nil {
			return nil, providers.WithFix(fmt.Errorf("azure: %w: %v", providers.ErrCredentials, err), missingCredentialsFix, err)
		}
	}
	p.cred = cred
	if p.graph, err = armresourcegraph.NewClient(cred, p.arm); err != nil {
		return nil, fmt.Errorf("azure: %w", err)
	}
	if p.subs, err = armsubscriptions.NewClient(cred, p.arm); err != nil {
		return nil, fmt.Errorf("azure: %w", err)
	}
	return p, nil
}

// maxAttempts bounds the tries of one call, as the AWS and GCP adapters
// bound theirs: at a third of the requests throttled, six tries left one
// call in 1,400 failed, ten one in 170,000.
const maxAttempts = 10

// clientOptions are the pipeline options every client shares: retries that
// honour Retry-After, the request timeout, the request counter, the rate
// limits, and plain HTTP allowed for a local endpoint.
func (p *Provider) clientOptions() policy.ClientOptions {
	co := policy.ClientOptions{
		Retry:     policy.RetryOptions{MaxRetries: maxAttempts - 1, RetryDelay: 800 * time.Millisecond, MaxRetryDelay: 8 * time.Second, ShouldRetry: shouldRetry},
		Telemetry: policy.TelemetryOptions{Disabled: true},
	}
	if b := p.opts.RetryMaxBackoff; b > 0 {
		co.Retry.RetryDelay, co.Retry.MaxRetryDelay = b, max(b, time.Second)
	}
	switch {
	case p.opts.HTTPClient != nil:
		co.Transport = p.opts.HTTPClient
	default:
		// Connections open within the connect timeout, each attempt is
		// bounded by the request timeout, and neither a refused
		// connection nor a timeout is retried (providers.NewTransport).
		co.Transport = &http.Client{Transport: providers.NewTransport(p.opts.ConnectTimeout, p.opts.RequestTimeout)}
	}
	if strings.HasPrefix(p.opts.Endpoint, "http://") {
		co.InsecureAllowCredentialWithHTTP = true
	}
	if on := p.opts.OnRequest; on != nil {
		co.PerRetryPolicies = append(co.PerRetryPolicies, countPolicy{on})
	}
	if p.limits != nil {
		co.PerRetryPolicies = append(co.PerRetryPolicies, limitPolicy{p.limits})
	}
	return co
}

// retryStatus are the answers retried: azcore's defaults.
var retryStatus = []int{http.StatusRequestTimeout, http.StatusTooManyRequests, http.StatusInternalServerError,
	http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout}

// shouldRetry retries azcore's status codes and transport errors, but not
// a connection refused or a request past its timeout
// (providers.Unreachable): an unreachable or hung endpoint fails in
// seconds instead of after ten attempts and their backoff.
func shouldRetry(resp *http.Response, err error) bool {
	if err != nil {
		return !providers.Unreachable(err)
	}
	return slices.Contains(retryStatus, resp.StatusCode)
}

// countPolicy tells OnRequest of every attempt.
type countPolicy struct{ on func() }

func (c countPolicy) Do(req *policy.Request) (*http.Response, error) {
	c.on()
	return req.Next()
}

// compute returns the subscription's Compute client factory, built once.
func (p *Provider) compute(sub string) (*armcompute.ClientFactory, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if f, ok := p.computes[sub]; ok {
		return f, nil
	}
	f, err := armcompute.NewClientFactory(sub, p.cred, p.arm)
	if err != nil {
		return nil, err
	}
	p.computes[sub] = f
	return f, nil
}

// MetricsSource implements providers.MetricsSourceNamer.
func (p *Provider) MetricsSource() string { return "azure-monitor" }

// Name implements providers.Provider.
func (p *Provider) Name() fleet.Provider { return fleet.Azure }

// Scopes lists subscription × region for every subscription.
func (p *Provider) Scopes(ctx context.Context) ([]providers.Scope, error) {
	return providers.AllScopes(ctx, p, func(f *providers.ScopeError) string { return "azure subscription " + f.Scope.Account })
}

// PartialScopes implements providers.PartialScoper. Each configured
// subscription is read (Subscriptions Get); when none is configured the
// enabled ones the credential lists are taken as read. One that cannot be
// read is a failure without a region and the others are scanned.
// The regions are the configured ones, else those where Resource Graph
// finds VMs of the subscriptions (one query for all of them). Missing or
// rejected credentials fail the whole call.
func (p *Provider) PartialScopes(ctx context.Context) ([]providers.Scope, []*providers.ScopeError, error) {
	subs := p.az.subscriptions
	configured := len(subs) > 0
	if !configured {
		pager := p.subs.NewListPager(nil)
		for pager.More() {
			page, err := pager.NextPage(ctx)
			if err != nil {
				return nil, nil, fmt.Errorf("azure: listing subscriptions: %w", classify(err))
			}
			for _, s := range page.Value {
				if s.SubscriptionID != nil && (s.State == nil || *s.State == armsubscriptions.SubscriptionStateEnabled) {
					subs = append(subs, *s.SubscriptionID)
				}
			}
		}
		if len(subs) == 0 {
			return nil, nil, fmt.Errorf("azure: the credential can list no enabled subscription; name one with --subscription")
		}
	}
	var ok []string
	var failed []*providers.ScopeError
	for _, s := range subs {
		if !configured {
			// Listed enabled: the listing already read it (Get answers
			// the same object), and Resource Graph, which leaves out what
			// it cannot read, is asked only of what was read.
			ok = append(ok, s)
			continue
		}
		if _, err := p.subs.Get(ctx, s, nil); err != nil {
			err = classify(err)
			if ctx.Err() != nil || errors.Is(err, providers.ErrCredentials) {
				return nil, nil, fmt.Errorf("azure subscription %s: %w", s, err)
			}
			failed = append(failed, &providers.ScopeError{Scope: providers.Scope{Provider: fleet.Azure, Account: s}, Err: fmt.Errorf("reading the subscription: %w", err)})
			continue
		}
		ok = append(ok, s)
	}
	if len(ok) == 0 {
		return nil, nil, fmt.Errorf("azure subscription %s: %w", failed[0].Scope.Account, failed[0].Err)
	}
	p.mu.Lock()
	p.listed = ok
	p.mu.Unlock()
	var out []providers.Scope
	if len(p.opts.Regions) > 0 {
		for _, s := range ok {
			for _, r := range p.opts.Regions {
				out = append(out, providers.Scope{Provider: fleet.Azure, Account: s, Region: strings.ToLower(r)})
			}
		}
		return out, failed, nil
	}
	found, err := p.regionsWithVMs(ctx, ok)
	if err != nil {
		return nil, nil, fmt.Errorf("azure: finding the regions with VMs: %w", err)
	}
	if p.az.managedAI {
		// The regions of Azure ML workspaces, which hold no VM of the
		// subscription.
		for _, s := range ok {
			for _, r := range p.amlRegions(ctx, s) {
				if !slices.Contains(found[s], r) {
					found[s] = append(found[s], r)
				}
			}
			sort.Strings(found[s])
		}
	}
	for _, s := range ok {
		for _, r := range found[s] {
			out = append(out, providers.Scope{Provider: fleet.Azure, Account: s, Region: r})
		}
	}
	return out, failed, nil
}

// subscriptionsForLocked are the subscriptions one Resource Graph read
// covers: those of the last Scopes, with the scope's own; p.mu is held.
func (p *Provider) subscriptionsForLocked(scope providers.Scope) []string {
	subs := append([]string(nil), p.listed...)
	for _, s := range subs {
		if strings.EqualFold(s, scope.Account) {
			return subs
		}
	}
	subs = append(subs, scope.Account)
	sort.Strings(subs)
	return subs
}

// classify maps Azure errors to the providers sentinels, keeping the message.
func classify(err error) error {
	if err == nil {
		return nil
	}
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		msg := re.ErrorCode
		if msg == "" {
			msg = http.StatusText(re.StatusCode)
		}
		msg = fmt.Sprintf("%s (HTTP %d)", msg, re.StatusCode)
		if r := re.RawResponse; r != nil && r.Request != nil {
			msg += " from " + r.Request.Method + " " + r.Request.URL.Path
		}
		switch {
		case re.StatusCode == http.StatusUnauthorized || re.ErrorCode == "InvalidAuthenticationToken" || re.ErrorCode == "ExpiredAuthenticationToken" || re.ErrorCode == "AuthenticationFailed":
			return providers.WithFix(fmt.Errorf("%w: %s", providers.ErrCredentials, msg), rejectedCredentialsFix, err)
		case re.StatusCode == http.StatusForbidden || re.ErrorCode == "AuthorizationFailed":
			return fmt.Errorf("%w: %s", providers.ErrPermission, msg)
		case re.StatusCode == http.StatusTooManyRequests:
			return fmt.Errorf("%w: %s", providers.ErrThrottled, msg)
		case re.StatusCode == http.StatusNotFound && (re.ErrorCode == "ResourceNotFound" || re.ErrorCode == "NotFound"):
			return fmt.Errorf("%w: %s", providers.ErrNotFound, msg)
		}
		return &armError{msg: msg, err: err}
	}
	var authFailed *azidentity.AuthenticationFailedError
	var unavailable interface{ NonRetriable() }
	if errors.As(err, &authFailed) || errors.As(err, &unavailable) || strings.Contains(err.Error(), "DefaultAzureCredential") || strings.Contains(err.Error(), "credential") {
		return providers.WithFix(fmt.Errorf("%w: no Azure credentials found", providers.ErrCredentials), missingCredentialsFix, err)
	}
	return err
}

// armError is an Azure error in one line (the SDK's spans a dozen), with
// the SDK's error beneath it.
type armError struct {
	msg string
	err error
}

func (e *armError) Error() string { return e.msg }
func (e *armError) Unwrap() error { return e.err }

// missingCredentialsFix and rejectedCredentialsFix say what to do when
// DefaultAzureCredential finds nothing, or Azure refuses what it found.
const (
	missingCredentialsFix = `Give gpufinops Azure credentials in one of these ways, then check them with 'gpufinops doctor --provider azure':
  az login                                               # the Azure CLI's account
  export AZURE_TENANT_ID=… AZURE_CLIENT_ID=… AZURE_CLIENT_SECRET=…   # a service principal
On Azure VMs, AKS or App Service, use a managed identity (workload identity on AKS).
The least-privilege role: 'gpufinops iam-policy azure'. The SDK's own message: GPUFINOPS_DEBUG=1.`
	rejectedCredentialsFix = `Azure rejected the credentials: they are expired, revoked or for another tenant.
Sign in again ('az login', a new client secret), then check them with
'gpufinops doctor --provider azure'.`
)
