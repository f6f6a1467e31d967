package gcp

import (
	"bytes"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/gpufinops/gpufinops/providers/ratelimit"
)

// The APIs the adapter paces, each bucket per project. GCP counts its rate
// quotas per project and minute (../shared/research/cloud-apis.md §3.7):
// Compute Engine's reads (the older docs' 1,500 read requests a minute; the
// current default is unconfirmed, read it in Cloud Quotas) and Cloud
// Monitoring's "Time series queries per minute" (often cited as 6,000,
// unconfirmed). Compute's mutations, the Billing Catalog, Resource
// Manager, Vertex AI and Workbench document no figure: their buckets count
// and honour Retry-After only. providers.gcp.rate_limits overrides any of
// them.
const (
	APIComputeRead     = "compute-read"
	APIComputeWrite    = "compute-write"
	APIMonitoringQuery = "monitoring-query"
	APIMonitoring      = "monitoring"
	APIBillingCatalog  = "billing-catalog"
	APIResourceManager = "resourcemanager"
	APIVertexAI        = "vertex-ai"
	APIWorkbench       = "workbench"
)

// Quotas are the buckets' documented defaults; per-minute quotas are
// ratelimit.PerMinute's (no minute holds more than the quota).
var Quotas = map[string]ratelimit.Quota{
	APIComputeRead:     ratelimit.PerMinute(1500),
	APIComputeWrite:    {},
	APIMonitoringQuery: ratelimit.PerMinute(6000),
	APIMonitoring:      {},
	APIBillingCatalog:  {},
	APIResourceManager: {},
	APIVertexAI:        {},
	APIWorkbench:       {},
}

// restBucket names a REST request's API and project: Compute Engine's
// /compute/v1/projects/P/… (a POST other than testIamPermissions or an
// operation's wait, or a DELETE, is a mutation), the Billing Catalog's
// /v1/services/…, else Resource Manager's project search.
func restBucket(method string, u *url.URL) (api, project string) {
	path := u.Path
	rest, ok := strings.CutPrefix(path, "/compute/v1/projects/")
	if !ok {
		if strings.HasPrefix(path, "/v1/services/") {
			return APIBillingCatalog, ""
		}
		for prefix, api := range map[string]string{"/v1/projects/": APIVertexAI, "/v2/projects/": APIWorkbench} {
			if rest, ok := strings.CutPrefix(path, prefix); ok {
				project, _, _ = strings.Cut(rest, "/")
				return api, project
			}
		}
		return APIResourceManager, ""
	}
	project, _, _ = strings.Cut(rest, "/")
	switch {
	case method == http.MethodDelete,
		method == http.MethodPost && !strings.HasSuffix(path, "/testIamPermissions") && !strings.HasSuffix(path, "/wait"):
		return APIComputeWrite, project
	}
	return APIComputeRead, project
}

// grpcBucket names a Monitoring call's API and project (its request's
// name, projects/P).
func grpcBucket(method string, req any) (api, project string) {
	if n, ok := req.(interface{ GetName() string }); ok {
		project = strings.TrimPrefix(n.GetName(), "projects/")
	}
	if method == listTimeSeriesMethod {
		return APIMonitoringQuery, project
	}
	return APIMonitoring, project
}

// restThrottled reports whether an answer is throttling: 429, or 403 with
// a rate-limit reason (Compute Engine's over-quota answer), whose body it
// reads and puts back.
func restThrottled(resp *http.Response) bool {
	switch resp.StatusCode {
	case http.StatusTooManyRequests:
		return true
	case http.StatusForbidden:
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		resp.Body = struct {
			io.Reader
			io.Closer
		}{io.MultiReader(bytes.NewReader(b), resp.Body), resp.Body}
		return rateLimited(b)
	}
	return false
}

// observeGRPC tells b how a gRPC attempt sent at sent ended:
// RESOURCE_EXHAUSTED is throttling, with the wait of its RetryInfo.
func observeGRPC(b *ratelimit.Bucket, sent time.Time, err error) {
	if err == nil {
		b.OK()
		return
	}
	st, ok := status.FromError(err)
	if !ok || st.Code() != codes.ResourceExhausted {
		return
	}
	var wait time.Duration
	for _, d := range st.Details() {
		if ri, ok := d.(*errdetails.RetryInfo); ok && ri.GetRetryDelay() != nil {
			wait = ri.GetRetryDelay().AsDuration()
		}
	}
	b.Throttled(sent, wait)
}
