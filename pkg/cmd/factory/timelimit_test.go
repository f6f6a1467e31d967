package factory

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gpufinops/gpufinops/pkg/cmdutil"
)

// hang answers no request that match selects: the handler waits until the
// client gives up, as an endpoint that accepts connections and never answers.
func hang(match func(r *http.Request) bool) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if match(r) {
				// The server notices the client leaving only once the body
				// has been read.
				_, _ = io.Copy(io.Discard, r.Body)
				select {
				case <-r.Context().Done():
				case <-time.After(time.Minute):
				}
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

// signedFor matches the requests signed for a region and service.
func signedFor(region, service string) func(r *http.Request) bool {
	return func(r *http.Request) bool {
		return strings.Contains(r.Header.Get("Authorization"), "/"+region+"/"+service+"/")
	}
}

// TestScanTimeLimit: a scan whose endpoints hang ends at --run-timeout (or
// timeouts.run) with a one-line reason and exit 3, even when each request
// may take far longer; the scopes that answered stay in the report and the
// ones cut short are warnings naming the time limit.
func TestScanTimeLimit(t *testing.T) {
	cases := []struct {
		name string
		// hang selects the requests that never get an answer.
		hang func(*http.Request) bool
		args []string
		// cut are the regions whose listing is cut short; metrics those
		// whose CloudWatch reads are; listing: the scopes themselves.
		cut, metrics []string
		listing      bool
	}{
		{name: "EC2 hangs in one region", hang: signedFor("us-west-2", "ec2"), cut: []string{"us-west-2"}},
		{name: "CloudWatch hangs in one region", hang: signedFor("eu-west-1", "monitoring"), metrics: []string{"eu-west-1"}},
		{name: "EC2 hangs in two regions, limit from the config key", hang: func(r *http.Request) bool {
			return signedFor("us-east-1", "ec2")(r) && strings.Contains(readForm(r), "DescribeInstances") || signedFor("eu-west-1", "ec2")(r) && strings.Contains(readForm(r), "DescribeInstances")
		}, cut: []string{"eu-west-1", "us-east-1"}},
		{name: "listing the regions hangs", hang: func(r *http.Request) bool { return strings.Contains(readForm(r), "DescribeRegions") }, listing: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := startFaultySim(t, nil, nil, hang(tc.hang))
			args := []string{"--provider", "aws", "-o", "json", "--request-timeout", "1m"}
			limit := 1500 * time.Millisecond
			if !strings.Contains(tc.name, "config key") {
				args = append(args, "--run-timeout", limit.String())
			}
			s.runTimeout = limit
			start := time.Now()
			res := s.run(t, "", "analyze", args...)
			took := time.Since(start)
			if took > limit+20*time.Second {
				t.Errorf("took %s with a %s limit", took, limit)
			}
			if res.code != cmdutil.ExitPartial {
				t.Fatalf("exit %d (%v), want 3\n%s", res.code, res.err, res.errOut)
			}
			if tc.listing {
				if msg := res.err.Error(); strings.Contains(msg, "\n") || !strings.Contains(msg, "time limit") {
					t.Errorf("reason %q: want one line naming the time limit", msg)
				}
				return
			}
			rep := decodeReport(t, res.out)
			ws := scanWarnings(rep)
			got := map[string]bool{}
			for _, w := range ws {
				if w.Scope == nil {
					t.Errorf("warning without a scope: %+v", w)
					continue
				}
				if !strings.Contains(w.Reason, "time limit") || strings.Contains(w.Reason, "\n") {
					t.Errorf("reason %q does not name the time limit in one line", w.Reason)
				}
				got[w.Scope.Region] = true
			}
			want := append(append([]string{}, tc.cut...), tc.metrics...)
			if len(ws) != len(want) {
				t.Fatalf("warnings %+v, want one each for %v", ws, want)
			}
			for _, r := range want {
				if !got[r] {
					t.Errorf("no warning for %s: %+v", r, ws)
				}
			}
			// The regions that answered are whole; CloudWatch's keep their
			// inventory with utilization unknown.
			cut := map[string]bool{}
			for _, r := range tc.cut {
				cut[r] = true
			}
			for _, region := range demoRegions {
				for _, id := range s.awsIDs(region) {
					in := instanceOf(rep, id)
					if cut[region] {
						if in != nil {
							t.Errorf("%s in cut region %s is in the report", id, region)
						}
						continue
					}
					if in == nil {
						t.Errorf("%s in %s is missing from the report", id, region)
					}
				}
			}
		})
	}
}

// readForm is r's body, left in place for the handler.
func readForm(r *http.Request) string {
	if r.Body == nil {
		return ""
	}
	b, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(b))
	return string(b)
}
