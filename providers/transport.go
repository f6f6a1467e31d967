package providers

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"time"
)

// DefaultConnectTimeout bounds opening a connection to a cloud endpoint
// (TCP and TLS) when Options.ConnectTimeout is zero.
const DefaultConnectTimeout = 10 * time.Second

// ConnectError is a connection to a cloud endpoint that could not be
// opened: refused, no such host, or no answer within the connect timeout.
// It is never retried: an endpoint that refuses now refuses a second later.
type ConnectError struct {
	// Host is the endpoint's host:port.
	Host string
	// Cause says why, in a few words.
	Cause string
}

func (e *ConnectError) Error() string { return "cannot connect to " + e.Host + ": " + e.Cause }

// RetryableError tells the AWS SDK's retryer not to retry.
func (e *ConnectError) RetryableError() bool { return false }

// RequestTimeoutError is a request to a cloud endpoint that had no complete
// answer within the request timeout. It is not retried: a hung call fails
// after one timeout, not after one per attempt.
type RequestTimeoutError struct {
	// Host is the endpoint's host:port, or the gRPC method.
	Host string
	// Limit is the request timeout that passed.
	Limit time.Duration
}

func (e *RequestTimeoutError) Error() string {
	return fmt.Sprintf("no answer from %s within the request timeout of %v (timeouts.request, --request-timeout)", e.Host, e.Limit)
}

// Timeout reports true, as a net.Error's does: the call may have been
// carried out (a stop is then of unknown outcome, not failed).
func (e *RequestTimeoutError) Timeout() bool { return true }

// RetryableError tells the AWS SDK's retryer not to retry.
func (e *RequestTimeoutError) RetryableError() bool { return false }

// Unreachable reports whether err is a ConnectError or a
// RequestTimeoutError: a call not to retry.
func Unreachable(err error) bool {
	var ce *ConnectError
	var te *RequestTimeoutError
	return errors.As(err, &ce) || errors.As(err, &te)
}

// NewTransport returns the HTTP transport every adapter sends its calls
// through when no HTTP client is given: connections are opened within
// connect (zero is DefaultConnectTimeout), each request with its answer's
// body is bounded by request (zero leaves it to the caller's context), and
// a connection that cannot be opened or a request past its timeout fails
// with a ConnectError or a RequestTimeoutError, which the adapters do not
// retry (AWS's retryer reads RetryableError; Azure's and GCP's check
// Unreachable).
func NewTransport(connect, request time.Duration) http.RoundTripper {
	if connect <= 0 {
		connect = DefaultConnectTimeout
	}
	base := http.DefaultTransport.(*http.Transport).Clone()
	base.DialContext = (&net.Dialer{Timeout: connect, KeepAlive: 30 * time.Second}).DialContext
	base.TLSHandshakeTimeout = connect
	base.MaxIdleConnsPerHost = 64
	return &transport{base: base, request: request}
}

type transport struct {
	base    http.RoundTripper
	request time.Duration
}

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	parent := req.Context()
	ctx, cancel := parent, context.CancelFunc(func() {})
	if t.request > 0 {
		ctx, cancel = context.WithTimeout(parent, t.request)
		req = req.WithContext(ctx)
	}
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		cancel()
		return nil, TransportError(req.URL.Host, t.request, parent, ctx, err)
	}
	resp.Body = &boundBody{ReadCloser: resp.Body, cancel: cancel, t: t, req: req, parent: parent, ctx: ctx}
	return resp, nil
}

// TransportError turns the error of one attempt at host into a
// ConnectError when the connection could not be opened, or into a
// RequestTimeoutError when the attempt's context (ctx, bounded by request)
// ended before the caller's (parent); any other error is returned as it
// is. Adapters whose SDK owns the transport call it from their own hook.
func TransportError(host string, request time.Duration, parent, ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	if parent.Err() == nil && ctx.Err() == context.DeadlineExceeded {
		return &RequestTimeoutError{Host: host, Limit: request}
	}
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return &ConnectError{Host: host, Cause: "no such host"}
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		switch {
		case errors.Is(err, syscall.ECONNREFUSED):
			return &ConnectError{Host: host, Cause: "connection refused (nothing listens there)"}
		case op.Timeout():
			return &ConnectError{Host: host, Cause: "no answer within the connect timeout (timeouts.connect)"}
		}
		return &ConnectError{Host: host, Cause: oneLineCause(op.Err)}
	}
	return err
}

func oneLineCause(err error) string {
	if err == nil {
		return "dial failed"
	}
	return strings.Join(strings.Fields(err.Error()), " ")
}

// boundBody ends the request's timeout when the body is closed, and names a
// timeout that passed while the body was read.
type boundBody struct {
	io.ReadCloser
	cancel      context.CancelFunc
	t           *transport
	req         *http.Request
	parent, ctx context.Context
}

func (b *boundBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil && err != io.EOF {
		err = TransportError(b.req.URL.Host, b.t.request, b.parent, b.ctx, err)
	}
	return n, err
}

func (b *boundBody) Close() error {
	defer b.cancel()
	return b.ReadCloser.Close()
}

// Brief is err's text in one line with an SDK's wrapping (the operation
// error, its retry count, the request's method and URL) replaced by the
// cause when the cause is a ConnectError, a RequestTimeoutError or an AWS
// service's error answer: what the caller said, the operation, and why,
// e.g. "us-east-1: DescribeInstances: no answer from … within the request
// timeout of 30s".
// Other errors keep their text as it is.
func Brief(err error) string {
	if err == nil {
		return ""
	}
	var cause error
	var ce *ConnectError
	var te *RequestTimeoutError
	var api apiError
	switch {
	case errors.As(err, &ce):
		cause = ce
	case errors.As(err, &te):
		cause = te
	case errors.As(err, &api) && hasOperation(err):
		// an AWS operation error around the service's answer: its code
		// and message, without the retry count, status line and request ID
		cause = errors.New(strings.TrimSuffix(api.ErrorCode()+": "+api.ErrorMessage(), ": "))
	default:
		return err.Error()
	}
	msg := strings.Join(strings.Fields(err.Error()), " ")
	// The outermost SDK error in the chain: an AWS operation error (it
	// names its service and operation) or the HTTP client's *url.Error.
	var op string
	for e := err; e != nil; e = errors.Unwrap(e) {
		sdk := false
		if o, ok := e.(interface {
			Service() string
			Operation() string
		}); ok {
			op, sdk = o.Service()+" "+o.Operation(), true
		}
		if _, ok := e.(*url.Error); ok {
			sdk = true
		}
		if !sdk {
			continue
		}
		text := strings.Join(strings.Fields(e.Error()), " ")
		i := strings.LastIndex(msg, text)
		if i < 0 {
			break
		}
		prefix := msg[:i]
		if o, ok := e.(interface{ Operation() string }); ok && strings.HasSuffix(prefix, o.Operation()+": ") {
			op = "" // the caller named it already
		}
		if op != "" {
			prefix += op + ": "
		}
		return prefix + cause.Error() + msg[i+len(text):]
	}
	return cause.Error()
}

// apiError is an AWS service's error answer (smithy.APIError), named by
// its methods so that this package imports no SDK.
type apiError interface {
	error
	ErrorCode() string
	ErrorMessage() string
}

// hasOperation reports whether err's chain holds an AWS operation error.
func hasOperation(err error) bool {
	var op interface {
		error
		Service() string
		Operation() string
	}
	return errors.As(err, &op)
}
