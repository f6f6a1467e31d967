package providers

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"
)

// opError is an SDK's operation error: it names its service and operation
// and adds its own text around the cause, as AWS's does.
type opError struct{ err error }

func (e *opError) Error() string {
	return "operation error EC2: DescribeInstances, exceeded maximum number of attempts, 10, https response error StatusCode: 0, RequestID: , request send failed, " + e.err.Error()
}
func (e *opError) Unwrap() error     { return e.err }
func (e *opError) Service() string   { return "EC2" }
func (e *opError) Operation() string { return "DescribeInstances" }

type svcError struct{}

func (svcError) Error() string        { return "api error InternalError: We encountered an internal error." }
func (svcError) ErrorCode() string    { return "InternalError" }
func (svcError) ErrorMessage() string { return "We encountered an internal error." }

func TestBrief(t *testing.T) {
	refused := &ConnectError{Host: "127.0.0.1:9", Cause: "connection refused"}
	sent := &url.Error{Op: "Post", URL: "http://127.0.0.1:9/", Err: refused}
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"aws, the caller names the operation", fmt.Errorf("us-east-1: DescribeInstances: %w", &opError{sent}),
			"us-east-1: DescribeInstances: cannot connect to 127.0.0.1:9: connection refused"},
		{"aws, the caller does not", fmt.Errorf("aws default: %w", &opError{sent}),
			"aws default: EC2 DescribeInstances: cannot connect to 127.0.0.1:9: connection refused"},
		{"plain http", fmt.Errorf("azure: listing subscriptions: %w", &url.Error{Op: "Get", URL: "http://h/subscriptions", Err: &RequestTimeoutError{Host: "h:80", Limit: 5 * time.Second}}),
			"azure: listing subscriptions: no answer from h:80 within the request timeout of 5s (timeouts.request, --request-timeout)"},
		{"aws service error", fmt.Errorf("eu-west-1: %w", &opError{svcError{}}),
			"eu-west-1: EC2 DescribeInstances: InternalError: We encountered an internal error."},
		{"other errors keep their text", errors.New("line one\nline two"), "line one\nline two"},
	} {
		if got := Brief(tc.err); got != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, got, tc.want)
		}
	}
}

// TestTransportFailsFast: a closed port is a ConnectError at once; a
// server that never answers, or stops in the middle of its answer, is a
// RequestTimeoutError after the request timeout.
func TestTransportFailsFast(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + l.Addr().String()
	l.Close()
	client := &http.Client{Transport: NewTransport(time.Second, 200*time.Millisecond)}
	start := time.Now()
	_, err = client.Get(closed)
	var ce *ConnectError
	if !errors.As(err, &ce) || !strings.Contains(ce.Error(), "connection refused") || time.Since(start) > 5*time.Second {
		t.Errorf("closed port: %v after %s", err, time.Since(start))
	}

	release := make(chan struct{})
	hung := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/half" {
			w.Write([]byte("part of the answer"))
			w.(http.Flusher).Flush()
		}
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer hung.Close()
	defer close(release)
	var te *RequestTimeoutError
	start = time.Now()
	_, err = client.Get(hung.URL)
	if !errors.As(err, &te) || te.Limit != 200*time.Millisecond || time.Since(start) > 5*time.Second {
		t.Errorf("hung: %v after %s", err, time.Since(start))
	}
	resp, err := client.Get(hung.URL + "/half")
	if err != nil {
		t.Fatal(err)
	}
	_, err = io.ReadAll(resp.Body)
	resp.Body.Close()
	if !errors.As(err, &te) {
		t.Errorf("an answer cut by the timeout: %v", err)
	}
	// The caller's own deadline is the caller's, not a request timeout.
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, hung.URL, nil)
	if _, err = client.Do(req); errors.As(err, &te) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("the caller's deadline: %v", err)
	}
}
