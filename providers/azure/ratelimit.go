package azure

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"

	"github.com/gpufinops/gpufinops/providers/ratelimit"
)

// The APIs the adapter paces. The figures are Azure's
// (../shared/research/cloud-apis.md §2.9, §4): ARM's token buckets per
// subscription and principal (reads 250 refilling 25 a second, writes and
// deletes 200 refilling 10), Resource Graph's "about 15 queries per 5 s per
// user", and for metrics:getBatch the ARM read limits the metrics calls are
// documented to use. ARM counts its buckets in the ARM region that serves
// the call, which for one client is one region, so its buckets are per
// subscription (calls outside a subscription: "tenant", ARM's tenant
// buckets having the same values); getBatch, served per region, has a
// bucket per subscription and region. The Retail Prices API documents no
// limit: its bucket counts and honours Retry-After only.
// providers.azure.rate_limits overrides any of them.
const (
	APIARMRead       = "arm-read"
	APIARMWrite      = "arm-write"
	APIARMDelete     = "arm-delete"
	APIResourceGraph = "resourcegraph"
	APIMetricsBatch  = "monitor-metrics"
	APIRetailPrices  = "retail-prices"
)

// Quotas are the buckets' documented defaults.
var Quotas = map[string]ratelimit.Quota{
	APIARMRead:       ratelimit.PerSecond(25, 250),
	APIARMWrite:      ratelimit.PerSecond(10, 200),
	APIARMDelete:     ratelimit.PerSecond(10, 200),
	APIResourceGraph: {Requests: 15, Per: 5 * time.Second, Burst: 15},
	APIMetricsBatch:  ratelimit.PerSecond(25, 250),
	APIRetailPrices:  {},
}

// bucketOf names a request's API and the scope of its bucket from its URL:
// Resource Graph's queries, metrics:getBatch (region from its regional
// host), the Retail Prices API, else ARM by method.
func bucketOf(method string, u *url.URL) (api, scope string) {
	path := strings.ToLower(u.Path)
	sub := subscriptionOf(path)
	switch {
	case strings.Contains(path, "/providers/microsoft.resourcegraph/"):
		return APIResourceGraph, ""
	case strings.HasSuffix(path, "/metrics:getbatch"):
		if region, ok := strings.CutSuffix(strings.ToLower(u.Hostname()), ".metrics.monitor.azure.com"); ok {
			return APIMetricsBatch, sub + "/" + region
		}
		return APIMetricsBatch, sub
	case strings.HasPrefix(path, "/api/retail/prices"):
		return APIRetailPrices, ""
	}
	if sub == "" {
		sub = "tenant"
	}
	switch method {
	case http.MethodGet, http.MethodHead:
		return APIARMRead, sub
	case http.MethodDelete:
		return APIARMDelete, sub
	}
	return APIARMWrite, sub
}

// limitPolicy paces every attempt (it is a per-retry policy) through its
// API's bucket: a 429 lowers the bucket and pauses it for the answer's
// Retry-After, and Resource Graph's spent user quota
// (x-ms-user-quota-remaining: 0) pauses it until the quota resets.
type limitPolicy struct{ set *ratelimit.Set }

func (l limitPolicy) Do(req *policy.Request) (*http.Response, error) {
	r := req.Raw()
	b := l.set.Bucket(bucketOf(r.Method, r.URL))
	sent, err := b.Wait(r.Context())
	if err != nil {
		return nil, err
	}
	resp, err := req.Next()
	if err != nil {
		return resp, err
	}
	switch {
	case resp.StatusCode == http.StatusTooManyRequests:
		b.Throttled(sent, retryAfter(resp.Header))
	case resp.StatusCode < 400:
		b.OK()
	}
	if resp.Header.Get("x-ms-user-quota-remaining") == "0" {
		b.Pause(quotaResetsAfter(resp.Header.Get("x-ms-user-quota-resets-after")))
	}
	return resp, nil
}

// retryAfter is a 429's wait: retry-after-ms, x-ms-retry-after-ms
// (milliseconds) or Retry-After (seconds or a date), as azcore reads them.
func retryAfter(h http.Header) time.Duration {
	for _, k := range []string{"retry-after-ms", "x-ms-retry-after-ms"} {
		if ms, err := strconv.Atoi(h.Get(k)); err == nil && ms > 0 {
			return time.Duration(ms) * time.Millisecond
		}
	}
	return ratelimit.RetryAfter(h.Get("Retry-After"))
}

// quotaResetsAfter reads Resource Graph's hh:mm:ss until its quota resets.
func quotaResetsAfter(v string) time.Duration {
	parts := strings.Split(v, ":")
	if len(parts) != 3 {
		return 0
	}
	var d time.Duration
	for i, unit := range []time.Duration{time.Hour, time.Minute, time.Second} {
		n, err := strconv.ParseFloat(parts[i], 64)
		if err != nil || n < 0 {
			return 0
		}
		d += time.Duration(n * float64(unit))
	}
	return d
}
