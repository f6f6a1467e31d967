package gcp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	billing "cloud.google.com/go/billing/apiv1"
	compute "cloud.google.com/go/compute/apiv1"
	monitoring "cloud.google.com/go/monitoring/apiv3/v2"
	resourcemanager "cloud.google.com/go/resourcemanager/apiv3"
	"cloud.google.com/go/resourcemanager/apiv3/resourcemanagerpb"
	"github.com/googleapis/gax-go/v2/callctx"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/google"
	"golang.org/x/sync/singleflight"
	"google.golang.org/api/googleapi"
	"google.golang.org/api/iterator"
	"google.golang.org/api/option"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/providers"
	"github.com/gpufinops/gpufinops/providers/ratelimit"
)

// DefaultLookback is how far back utilization is read.
const DefaultLookback = 14 * 24 * time.Hour

// TokenEnv holds a ready access token; gcloud reads the same variable. It
// wins over Application Default Credentials, and is how a simulator is
// reached (any non-empty value).
const TokenEnv = "CLOUDSDK_AUTH_ACCESS_TOKEN"

// scopes are the OAuth scopes the adapter asks for.
var scopes = []string{"https://www.googleapis.com/auth/cloud-platform"}

// maxAttempts bounds the tries of one call; maxBackoff the wait between two.
const (
	maxAttempts = 10
	maxBackoff  = 2 * time.Second
)

// Provider reads the GPU VMs of one or more GCP projects.
type Provider struct {
	// calls are the contexts of the REST list calls in flight, by the id
	// withCall gives them (see there).
	calls    sync.Map
	callSeq  atomic.Uint64
	opts     providers.Options
	projects []string
	ts       oauth2.TokenSource
	http     *http.Client
	// limits paces every call (nil: off).
	limits *ratelimit.Set

	instances    *compute.InstancesClient
	regions      *compute.RegionsClient
	machineTypes *compute.MachineTypesClient
	zoneOps      *compute.ZoneOperationsClient
	policies     *compute.ResourcePoliciesClient
	catalog      *billing.CloudCatalogClient
	metrics      *monitoring.MetricClient

	listMu sync.Mutex
	lists  map[string]*listing // project → its latest aggregated listing

	typeMu sync.Mutex
	types  map[string]machineInfo // machine type → its hardware
	// typeReads joins the scopes asking machineTypes.get for one type.
	typeReads singleflight.Group

	idMu sync.Mutex
	ids  map[string]string // project/name → numeric instance ID

	priceMu     sync.Mutex
	skus        *skuTable
	vertexRates *vertexTable

	scanMu sync.Mutex
	scan   *scanState // what the current scan's scopes share

	// held are the clients of the commitment reads (commitments.go).
	held heldClients

	noteMu sync.Mutex
	notes  []string // the scan's notes (TakeScanNotes)

	// vertex are the Vertex AI and Workbench clients (vertex.go).
	vertex vertexClients
}

// Compile-time checks of the capabilities the adapter offers.
var (
	_ providers.Provider           = (*Provider)(nil)
	_ providers.PartialScoper      = (*Provider)(nil)
	_ providers.UtilizationReader  = (*Provider)(nil)
	_ providers.MetricsSourceNamer = (*Provider)(nil)
	_ providers.PriceReader        = (*Provider)(nil)
	_ providers.Stopper            = (*Provider)(nil)
	_ providers.Doctor             = (*Provider)(nil)
	_ providers.ScanNoter          = (*Provider)(nil)
)

// New finds credentials (TokenEnv, else Application Default Credentials)
// and the projects to scan (OptProjects, else every active project the
// credentials can list), and builds the REST clients of Compute Engine and
// the Billing Catalog and the gRPC client of Cloud Monitoring, all pointed
// at opts.Endpoint when it is set. Missing credentials are
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
	p := &Provider{opts: opts, lists: map[string]*listing{}, types: map[string]machineInfo{}, ids: map[string]string{}, scan: newScan()}
	limits := opts.Adapter.Strings(OptRateLimits)
	set, err := ratelimit.NewSet(Quotas, limits)
	if err != nil {
		return nil, fmt.Errorf("providers.gcp.%s: %w", OptRateLimits, err)
	}
	if !slices.Contains(limits, "off") {
		p.limits = set
	}
	ts, defaultProject, err := findCredentials(ctx)
	if err != nil {
		return nil, err
	}
	p.ts = ts
	if _, err := ts.Token(); err != nil {
		return nil, fmt.Errorf("gcp: %w", classify(&tokenError{err}))
	}
	p.http = p.httpClient()
	rest := p.restOptions()
	if p.instances, err = compute.NewInstancesRESTClient(ctx, rest...); err != nil {
		return nil, fmt.Errorf("gcp: compute client: %w", err)
	}
	if p.regions, err = compute.NewRegionsRESTClient(ctx, rest...); err != nil {
		return nil, fmt.Errorf("gcp: compute client: %w", err)
	}
	if p.machineTypes, err = compute.NewMachineTypesRESTClient(ctx, rest...); err != nil {
		return nil, fmt.Errorf("gcp: compute client: %w", err)
	}
	if p.zoneOps, err = compute.NewZoneOperationsRESTClient(ctx, rest...); err != nil {
		return nil, fmt.Errorf("gcp: compute client: %w", err)
	}
	if p.policies, err = compute.NewResourcePoliciesRESTClient(ctx, rest...); err != nil {
		return nil, fmt.Errorf("gcp: compute client: %w", err)
	}
	if p.catalog, err = billing.NewCloudCatalogRESTClient(ctx, rest...); err != nil {
		return nil, fmt.Errorf("gcp: billing client: %w", err)
	}
	if p.metrics, err = monitoring.NewMetricClient(ctx, p.grpcOptions()...); err != nil {
		return nil, fmt.Errorf("gcp: monitoring client: %w", err)
	}
	p.projects = opts.Adapter.Strings(OptProjects)
	if len(p.projects) == 0 {
		if p.projects, err = p.searchProjects(ctx, rest); err != nil {
			return nil, err
		}
		if len(p.projects) == 0 && defaultProject != "" {
			p.projects = []string{defaultProject}
		}
		if len(p.projects) == 0 {
			return nil, fmt.Errorf("gcp: the credentials list no project: give one with --project (providers.gcp.projects)")
		}
	}
	return p, nil
}

// findCredentials returns the token source and the credentials' default
// project, if any.
func findCredentials(ctx context.Context) (oauth2.TokenSource, string, error) {
	project := os.Getenv("CLOUDSDK_CORE_PROJECT")
	if project == "" {
		project = os.Getenv("GOOGLE_CLOUD_PROJECT")
	}
	if tok := os.Getenv(TokenEnv); tok != "" {
		return oauth2.StaticTokenSource(&oauth2.Token{AccessToken: tok, TokenType: "Bearer"}), project, nil
	}
	creds, err := google.FindDefaultCredentials(ctx, scopes...)
	if err != nil {
		return nil, "", providers.WithFix(fmt.Errorf("gcp: %w: no Application Default Credentials found", providers.ErrCredentials), missingCredentialsFix, err)
	}
	if project == "" {
		project = creds.ProjectID
	}
	return creds.TokenSource, project, nil
}

// searchProjects lists the active projects the credentials can see.
func (p *Provider) searchProjects(ctx context.Context, rest []option.ClientOption) ([]string, error) {
	c, err := resourcemanager.NewProjectsRESTClient(ctx, rest...)
	if err != nil {
		return nil, fmt.Errorf("gcp: resource manager client: %w", err)
	}
	defer c.Close()
	var out []string
	ctx, done := p.withCall(ctx)
	defer done()
	it := c.SearchProjects(ctx, &resourcemanagerpb.SearchProjectsRequest{Query: "state:ACTIVE"})
	for {
		pr, err := it.Next()
		if errors.Is(err, iterator.Done) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("gcp: listing projects (give them with --project instead): %w", callError(ctx, err))
		}
		out = append(out, pr.GetProjectId())
	}
	sort.Strings(out)
	return out, nil
}

// restOptions point the REST clients at the endpoint, through the
// adapter's HTTP client (which adds the token and retries).
func (p *Provider) restOptions() []option.ClientOption {
	out := []option.ClientOption{option.WithHTTPClient(p.http)}
	if p.opts.Endpoint != "" {
		out = append(out, option.WithEndpoint(strings.TrimRight(p.opts.Endpoint, "/")))
	}
	return out
}

// grpcOptions point the Monitoring client at the endpoint: a plain-text
// HTTP/2 connection to a simulator's host:port (the token sent as
// metadata), else Google's with the token source.
func (p *Provider) grpcOptions() []option.ClientOption {
	connect := p.opts.ConnectTimeout
	if connect <= 0 {
		connect = providers.DefaultConnectTimeout
	}
	out := []option.ClientOption{option.WithGRPCDialOption(grpc.WithChainUnaryInterceptor(p.unaryRetry)),
		option.WithGRPCDialOption(grpc.WithConnectParams(grpc.ConnectParams{Backoff: backoff.DefaultConfig, MinConnectTimeout: connect}))}
	if p.opts.Endpoint == "" {
		return append(out, option.WithTokenSource(p.ts))
	}
	host := p.opts.Endpoint
	if u, err := url.Parse(p.opts.Endpoint); err == nil && u.Host != "" {
		host = u.Host
		if u.Port() == "" {
			host += map[bool]string{true: ":443", false: ":80"}[u.Scheme == "https"]
		}
	}
	out = append(out, option.WithEndpoint(host), option.WithoutAuthentication(), option.WithGRPCDialOption(grpc.WithTransportCredentials(insecure.NewCredentials())),
		option.WithGRPCDialOption(grpc.WithChainUnaryInterceptor(p.unaryToken)))
	return out
}

// unaryToken sends the access token on a plain-text connection, where gRPC
// refuses per-call credentials.
func (p *Provider) unaryToken(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	tok, err := p.ts.Token()
	if err != nil {
		return &tokenError{err}
	}
	ctx = metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+tok.AccessToken)
	return invoker(ctx, method, req, reply, cc, opts...)
}

// unaryRetry paces, counts and retries gRPC calls: RESOURCE_EXHAUSTED (the
// GAPIC defaults retry only UNAVAILABLE), UNAVAILABLE and INTERNAL. It
// decodes ListTimeSeries answers with timeSeriesCodec.
func (p *Provider) unaryRetry(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	if method == listTimeSeriesMethod {
		// first, so that a caller's own (reusing) codec wins
		opts = append([]grpc.CallOption{grpc.ForceCodecV2(timeSeriesCodec{})}, opts...)
	}
	b := p.limits.Bucket(grpcBucket(method, req))
	for attempt := 1; ; attempt++ {
		sent, err := b.Wait(ctx)
		if err != nil {
			return err
		}
		if p.opts.OnRequest != nil {
			p.opts.OnRequest()
		}
		actx, cancel := ctx, context.CancelFunc(func() {})
		if p.opts.RequestTimeout > 0 {
			actx, cancel = context.WithTimeout(ctx, p.opts.RequestTimeout)
		}
		err = invoker(actx, method, req, reply, cc, opts...)
		timedOut := err != nil && ctx.Err() == nil && actx.Err() == context.DeadlineExceeded
		cancel()
		observeGRPC(b, sent, err)
		switch {
		case timedOut:
			// a hung call fails after one timeout, not one per attempt
			return &providers.RequestTimeoutError{Host: method, Limit: p.opts.RequestTimeout}
		case refused(err):
			return &providers.ConnectError{Host: cc.Target(), Cause: "connection refused (nothing listens there)"}
		}
		if err == nil || ctx.Err() != nil || attempt >= maxAttempts {
			return err
		}
		switch status.Code(err) {
		case codes.ResourceExhausted, codes.Unavailable, codes.Internal:
		default:
			return err
		}
		if err := p.sleep(ctx, attempt); err != nil {
			return err
		}
	}
}

// refused reports whether a gRPC call failed because its connection was
// refused: an endpoint that refuses now refuses a second later, so the call
// is not retried.
func refused(err error) bool {
	return status.Code(err) == codes.Unavailable && strings.Contains(status.Convert(err).Message(), "connection refused")
}

// backoff is the wait before retry attempt n (1-based): exponential with
// full jitter, capped.
func (p *Provider) backoff(attempt int) time.Duration {
	ceiling := maxBackoff
	if p.opts.RetryMaxBackoff > 0 {
		ceiling = p.opts.RetryMaxBackoff
	}
	d := min(100*time.Millisecond<<min(attempt-1, 10), ceiling)
	return time.Duration(rand.Int64N(int64(d)) + 1)
}

func (p *Provider) sleep(ctx context.Context, attempt int) error {
	t := time.NewTimer(p.backoff(attempt))
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// httpClient is the REST clients' HTTP client: the token on every request,
// each request counted, and throttling and server errors retried.
func (p *Provider) httpClient() *http.Client {
	base := http.DefaultTransport
	if p.opts.HTTPClient != nil && p.opts.HTTPClient.Transport != nil {
		base = p.opts.HTTPClient.Transport
	} else {
		// Connections open within the connect timeout, each attempt is
		// bounded by the request timeout, and neither a refused
		// connection nor a timeout is retried (providers.NewTransport).
		base = providers.NewTransport(p.opts.ConnectTimeout, p.opts.RequestTimeout)
	}
	return &http.Client{Transport: &transport{p: p, base: base}}
}

// callHeader carries a REST call's id from withCall to the transport.
const callHeader = "x-gpufinops-call"

// withCall returns ctx for a REST list call (AggregatedList, List,
// ListSkus, SearchProjects): the SDK makes their requests without the
// call's context (http.NewRequest, unlike its other methods), so neither a
// deadline nor a cancellation would reach them. The context carries an id
// in a call header (gax copies the context's call headers onto the
// request), through which the transport finds the context again and sends
// the request under it, without the header. done forgets the call.
func (p *Provider) withCall(ctx context.Context) (_ context.Context, done func()) {
	id := strconv.FormatUint(p.callSeq.Add(1), 10)
	p.calls.Store(id, ctx)
	return callctx.SetHeaders(ctx, callHeader, id), func() { p.calls.Delete(id) }
}

// transport adds the token, paces, counts and retries.
type transport struct {
	p    *Provider
	base http.RoundTripper
}

// RoundTrip implements http.RoundTripper.
func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil {
		var err error
		if body, err = io.ReadAll(req.Body); err != nil {
			return nil, err
		}
		req.Body.Close()
	}
	ctx := req.Context()
	// gax writes the header's key as given (lower case), not canonical.
	id := req.Header.Get(callHeader)
	if v := req.Header[callHeader]; id == "" && len(v) > 0 {
		id = v[0]
	}
	if c, ok := t.p.calls.Load(id); ok && id != "" {
		ctx = c.(context.Context)
	}
	b := t.p.limits.Bucket(restBucket(req.Method, req.URL))
	for attempt := 1; ; attempt++ {
		tok, err := t.p.ts.Token()
		if err != nil {
			return nil, &tokenError{err}
		}
		r := req.Clone(ctx)
		r.Header.Del(callHeader)
		delete(r.Header, callHeader)
		if body != nil {
			r.Body = io.NopCloser(bytes.NewReader(body))
			r.ContentLength = int64(len(body))
		}
		r.Header.Set("Authorization", "Bearer "+tok.AccessToken)
		sent, err := b.Wait(ctx)
		if err != nil {
			return nil, err
		}
		if t.p.opts.OnRequest != nil {
			t.p.opts.OnRequest()
		}
		resp, err := t.base.RoundTrip(r)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, err
		}
		switch {
		case restThrottled(resp):
			b.Throttled(sent, ratelimit.RetryAfter(resp.Header.Get("Retry-After")))
		case resp.StatusCode < 400:
			b.OK()
		}
		if attempt >= maxAttempts || !retryable(resp) {
			return resp, nil
		}
		if err := t.p.sleep(ctx, attempt); err != nil {
			return nil, err
		}
	}
}

// retryable reports whether a response is throttling (429, or 403 with a
// rate-limit reason, which Compute Engine answers over quota) or a server
// error; a 403 that is not is given back with its body intact.
func retryable(resp *http.Response) bool {
	switch resp.StatusCode {
	case http.StatusTooManyRequests, http.StatusInternalServerError, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		return true
	case http.StatusForbidden:
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		if rateLimited(b) {
			return true
		}
		resp.Body = io.NopCloser(bytes.NewReader(b))
		return false
	}
	return false
}

// rateLimited reports whether a 403 body names a rate limit.
func rateLimited(body []byte) bool {
	return bytes.Contains(body, []byte(`"rateLimitExceeded"`)) || bytes.Contains(body, []byte(`"userRateLimitExceeded"`)) || bytes.Contains(body, []byte("RATE_LIMIT_EXCEEDED"))
}

// tokenError is a failure to get an access token.
type tokenError struct{ err error }

func (e *tokenError) Error() string { return "getting an access token: " + e.err.Error() }
func (e *tokenError) Unwrap() error { return e.err }

// MetricsSource implements providers.MetricsSourceNamer.
func (p *Provider) MetricsSource() string { return "cloud-monitoring" }

// Name implements providers.Provider.
func (p *Provider) Name() fleet.Provider { return fleet.GCP }

// Scopes lists every region (or the configured ones) of every project.
func (p *Provider) Scopes(ctx context.Context) ([]providers.Scope, error) {
	return providers.AllScopes(ctx, p, func(f *providers.ScopeError) string { return "gcp " + f.Scope.Account })
}

// PartialScopes implements providers.PartialScoper and starts a scan (what
// its scopes share is read anew): a project whose regions cannot be listed
// is a failure without a region, and the other projects are scanned. With --region the regions are not listed, so every project
// gets them.
func (p *Provider) PartialScopes(ctx context.Context) ([]providers.Scope, []*providers.ScopeError, error) {
	p.startScan()
	projects := make([]providers.Scope, len(p.projects))
	for i, project := range p.projects {
		projects[i] = providers.Scope{Provider: fleet.GCP, Account: project}
	}
	return providers.RegionScopes(ctx, projects, p.opts.Regions, func(ctx context.Context, s providers.Scope) ([]string, error) {
		return p.listRegions(ctx, s.Account)
	})
}

// listRegions lists a project's regions (regions.list), sorted.
func (p *Provider) listRegions(ctx context.Context, project string) ([]string, error) {
	ctx, done := p.withCall(ctx)
	defer done()
	it := p.regions.List(ctx, regionsRequest(project))
	var out []string
	for {
		r, err := it.Next()
		if errors.Is(err, iterator.Done) {
			break
		}
		if err != nil {
			return nil, callError(ctx, err)
		}
		out = append(out, r.GetName())
	}
	sort.Strings(out)
	return out, nil
}

// classify maps GCP errors to the providers sentinels, keeping the message.
func classify(err error) error {
	var te *tokenError
	if errors.As(err, &te) {
		return providers.WithFix(fmt.Errorf("%w: %v", providers.ErrCredentials, te), missingCredentialsFix, nil)
	}
	var gerr *googleapi.Error
	if errors.As(err, &gerr) {
		msg := gerr.Message
		if msg == "" {
			msg = strings.TrimSpace(gerr.Body)
		}
		switch {
		case gerr.Code == http.StatusUnauthorized:
			return providers.WithFix(fmt.Errorf("%w: %s", providers.ErrCredentials, msg), rejectedCredentialsFix, nil)
		case gerr.Code == http.StatusTooManyRequests, gerr.Code == http.StatusForbidden && rateLimited([]byte(gerr.Body)):
			return fmt.Errorf("%w: %s", providers.ErrThrottled, msg)
		case gerr.Code == http.StatusForbidden:
			return fmt.Errorf("%w: %s", providers.ErrPermission, msg)
		case gerr.Code == http.StatusNotFound:
			return fmt.Errorf("%w: %s", providers.ErrNotFound, msg)
		}
		return err
	}
	if st, ok := status.FromError(err); ok && st.Code() != codes.OK && st.Code() != codes.Unknown {
		switch st.Code() {
		case codes.Unauthenticated:
			return providers.WithFix(fmt.Errorf("%w: %s", providers.ErrCredentials, st.Message()), rejectedCredentialsFix, nil)
		case codes.PermissionDenied:
			return fmt.Errorf("%w: %s", providers.ErrPermission, st.Message())
		case codes.ResourceExhausted:
			return fmt.Errorf("%w: %s", providers.ErrThrottled, st.Message())
		case codes.NotFound:
			return fmt.Errorf("%w: %s", providers.ErrNotFound, st.Message())
		}
	}
	return err
}

// callError maps err to a sentinel; a cancelled or expired ctx is returned
// as ctx.Err() itself.
func callError(ctx context.Context, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return ctxErr
	}
	return classify(err)
}

// missingCredentialsFix and rejectedCredentialsFix say what to do when no
// credentials are found, or GCP refuses them.
const (
	missingCredentialsFix = `Give gpufinops Google Cloud credentials in one of these ways, then check them with 'gpufinops doctor --provider gcp':
  gcloud auth application-default login       # your user, for a workstation
  export GOOGLE_APPLICATION_CREDENTIALS=key.json   # a service account key
  export CLOUDSDK_AUTH_ACCESS_TOKEN=$(gcloud auth print-access-token)
On Compute Engine, GKE or Cloud Run, attach a service account to the VM, node pool or service.
The least-privilege role: 'gpufinops iam-policy gcp'.`
	rejectedCredentialsFix = `Google Cloud rejected the credentials: the token expired or the key was revoked. Refresh them
('gcloud auth application-default login', a new key, or a fresh CLOUDSDK_AUTH_ACCESS_TOKEN),
then check them with 'gpufinops doctor --provider gcp'.`
)
