// Package prometheus reads GPU utilization from a Prometheus-compatible store
// (Prometheus, Amazon/Azure/Google Managed Prometheus, Mimir, Thanos) holding
// the series of NVIDIA's DCGM exporter, and host CPU and memory from
// node-exporter when present.
//
// A read is a handful of range queries for the whole fleet, aggregated
// server-side by the mapping labels (never one query per machine):
//
//   - GPU: the busiest GPU of each instance, per step, of the step's average
//     of DCGM_FI_PROF_GR_ENGINE_ACTIVE × 100 where that series exists (the
//     share of time the graphics engine was busy, better than GPU_UTIL), else
//     of DCGM_FI_DEV_GPU_UTIL;
//   - GPU memory: the fullest GPU of FB_USED / (FB_USED + FB_FREE) × 100;
//   - host CPU: 100 × (1 − the idle rate of node_cpu_seconds_total);
//   - host memory: 100 × (1 − MemAvailable / MemTotal).
//
// Only the busiest GPU is kept: every sample carries one GPU value and one
// GPU memory value (what gpufinops means by GPU utilization), not one per GPU.
//
// Each sample is the average over one step [t, t+step), timed at t. Series are
// mapped to instances by the instance-ID label, then by host name (the
// instance's name or its Hostname tag, a ":port" suffix ignored), then by the
// Kubernetes node label: a providerID value ("aws:///us-east-1a/i-0abc",
// "gce://project/zone/name", "azure:///subscriptions/…/virtualMachines/name")
// or a node name resolved through kube-state-metrics' kube_node_info.
//
// Running hours: an instance whose usage the fleet does not give gets
// Usage.HoursPerMonth = hours with GPU data / window hours × 730, as the
// cloud sources do; an instance with its own usage keeps it.
package prometheus

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/prometheus/client_golang/api"

	"github.com/gpufinops/gpufinops/pkg/metrics"
)

// Name is the source's name, as reported in coverage.
const Name = "prometheus"

// Default label names of the mapping from series to instances.
const (
	DefaultInstanceLabel = "instance_id"
	DefaultHostLabel     = "Hostname"
	DefaultNodeLabel     = "node"
)

// DefaultLookback is the window read when Read is given a zero window.
const DefaultLookback = 14 * 24 * time.Hour

// Options configure a Source.
type Options struct {
	// URL is the Prometheus HTTP API base, e.g. http://prometheus:9090 or a
	// managed service's query endpoint (without /api/v1).
	URL string
	// BearerToken, or the first line of BearerTokenFile, is sent as
	// "Authorization: Bearer …".
	BearerToken     string
	BearerTokenFile string
	// Username and Password are sent as basic auth.
	Username, Password string
	// CAFile is a PEM bundle of CAs to trust in addition to the system's.
	CAFile string
	// InsecureSkipVerify turns off TLS certificate checks.
	InsecureSkipVerify bool
	// Headers are extra request headers (e.g. X-Scope-OrgID for Mimir).
	Headers map[string]string
	// InstanceLabel holds the cloud instance ID (default "instance_id").
	InstanceLabel string
	// HostLabel holds the host name (default "Hostname").
	HostLabel string
	// NodeLabel holds the Kubernetes node (default "node").
	NodeLabel string
	// Step is the query resolution; 0 picks it from the window (see StepFor).
	Step time.Duration
	// Now is the clock for a zero window; nil is time.Now.
	Now func() time.Time
	// Transport, when set, carries the requests instead of one built from
	// CAFile and InsecureSkipVerify (tests count requests through it).
	Transport http.RoundTripper
}

// Source reads DCGM utilization from Prometheus; it implements metrics.Source.
type Source struct {
	opts   Options
	client api.Client
}

var _ metrics.Source = (*Source)(nil)

// New checks the options and builds a Source; it makes no request.
func New(opts Options) (*Source, error) {
	if strings.TrimSpace(opts.URL) == "" {
		return nil, fmt.Errorf("prometheus: no URL; set --prometheus-url")
	}
	u, err := url.Parse(opts.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("prometheus: URL %q is not an http(s) address", opts.URL)
	}
	if opts.InstanceLabel == "" {
		opts.InstanceLabel = DefaultInstanceLabel
	}
	if opts.HostLabel == "" {
		opts.HostLabel = DefaultHostLabel
	}
	if opts.NodeLabel == "" {
		opts.NodeLabel = DefaultNodeLabel
	}
	for _, l := range []string{opts.InstanceLabel, opts.HostLabel, opts.NodeLabel} {
		if !validLabel(l) {
			return nil, fmt.Errorf("prometheus: %q is not a label name", l)
		}
	}
	if opts.Step < 0 {
		return nil, fmt.Errorf("prometheus: step %s is negative", opts.Step)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.BearerToken != "" && opts.Username != "" {
		return nil, fmt.Errorf("prometheus: give a bearer token or basic auth, not both")
	}
	if opts.BearerTokenFile != "" {
		b, err := os.ReadFile(opts.BearerTokenFile)
		if err != nil {
			return nil, fmt.Errorf("prometheus: bearer token file: %w", err)
		}
		opts.BearerToken = strings.TrimSpace(strings.SplitN(string(b), "\n", 2)[0])
		if opts.BearerToken == "" {
			return nil, fmt.Errorf("prometheus: bearer token file %s is empty", opts.BearerTokenFile)
		}
	}
	base := opts.Transport
	if base == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		if opts.CAFile != "" || opts.InsecureSkipVerify {
			cfg := &tls.Config{InsecureSkipVerify: opts.InsecureSkipVerify} //nolint:gosec // the user asked for it
			if opts.CAFile != "" {
				pem, err := os.ReadFile(opts.CAFile)
				if err != nil {
					return nil, fmt.Errorf("prometheus: CA file: %w", err)
				}
				pool, err := x509.SystemCertPool()
				if err != nil || pool == nil {
					pool = x509.NewCertPool()
				}
				if !pool.AppendCertsFromPEM(pem) {
					return nil, fmt.Errorf("prometheus: CA file %s holds no PEM certificate", opts.CAFile)
				}
				cfg.RootCAs = pool
			}
			t.TLSClientConfig = cfg
		}
		base = t
	}
	client, err := api.NewClient(api.Config{Address: opts.URL, RoundTripper: &authTransport{opts: &opts, base: base}})
	if err != nil {
		return nil, fmt.Errorf("prometheus: %w", err)
	}
	return &Source{opts: opts, client: client}, nil
}

// Name is "prometheus".
func (s *Source) Name() string { return Name }

// validLabel reports whether l is a Prometheus label name.
func validLabel(l string) bool {
	for i, r := range l {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return l != ""
}

// authTransport adds the credentials and headers, and turns 401 and 403
// into errUnauthorized.
type authTransport struct {
	opts *Options
	base http.RoundTripper
}

// RoundTrip implements http.RoundTripper.
func (t *authTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	for k, v := range t.opts.Headers {
		req.Header.Set(k, v)
	}
	switch {
	case t.opts.BearerToken != "":
		req.Header.Set("Authorization", "Bearer "+t.opts.BearerToken)
	case t.opts.Username != "":
		req.SetBasicAuth(t.opts.Username, t.opts.Password)
	}
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
		resp.Body.Close()
		return nil, &statusError{code: resp.StatusCode}
	}
	return resp, nil
}

// statusError is a 401 or 403 answer.
type statusError struct{ code int }

func (e *statusError) Error() string { return fmt.Sprintf("HTTP %d", e.code) }

// ErrFailed is wrapped by every error that means the whole source failed
// (unreachable, unauthorized, a server or query error, nothing matched), so
// the caller can report partial results (exit 3).
var ErrFailed = errors.New("prometheus source failed")

// Error is a failed read: one line naming the server and the cause.
type Error struct {
	URL string
	Msg string
	Err error
}

// Error is "prometheus at URL: cause".
func (e *Error) Error() string { return "prometheus at " + e.URL + ": " + e.Msg }

// Unwrap gives the underlying error.
func (e *Error) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrFailed) true.
func (e *Error) Is(target error) bool { return target == ErrFailed }

// fail builds an Error with a one-line message.
func (s *Source) fail(msg string, err error) error {
	return &Error{URL: s.opts.URL, Msg: msg, Err: err}
}

// callError turns a client error into one line.
func (s *Source) callError(ctx context.Context, what string, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	var se *statusError
	var ae *apiError
	var msg string
	switch {
	case errors.As(err, &se) && se.code == http.StatusForbidden:
		msg = "forbidden (check the credentials' permissions)"
	case errors.As(err, &se):
		msg = "unauthorized (check the bearer token)"
		if s.opts.Username != "" {
			msg = "unauthorized (check the user name and password)"
		}
	case isRefused(err):
		msg = "connection refused"
	case isDNS(err):
		msg = "host not found"
	case isTimeout(err):
		msg = "timed out"
	case errors.As(err, &ae):
		msg = what + ": " + firstLine(ae.Error())
	default:
		msg = what + ": " + firstLine(err.Error())
	}
	return s.fail(msg, err)
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}
