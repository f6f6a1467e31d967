package idlestop

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func notifyRun(t *testing.T) (Summary, []Decision) {
	t.Helper()
	cs := fleetOf()
	cs[0].Instance.ID = "i-<1>&"
	ds := Decide(cs, now, DefaultPolicy())
	o := opts(&fakeStopper{}, cs, nil)
	sum, err := Execute(context.Background(), ds, o)
	if err != nil {
		t.Fatal(err)
	}
	return sum, ds
}

func TestNotifierRetriesOn500(t *testing.T) {
	var hits atomic.Int32
	var body []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hits.Add(1) < 3 {
			http.Error(w, "upstream down", http.StatusInternalServerError)
			return
		}
		if r.Header.Get("Content-Type") != "application/json" || r.Method != http.MethodPost {
			t.Errorf("%s %s", r.Method, r.Header.Get("Content-Type"))
		}
		body, _ = io.ReadAll(r.Body)
	}))
	defer srv.Close()
	n := NewNotifier(srv.URL, time.Second, srv.Client())
	n.Backoff = time.Millisecond
	sum, ds := notifyRun(t)
	if err := n.Send(context.Background(), sum, ds); err != nil {
		t.Fatal(err)
	}
	if hits.Load() != 3 {
		t.Fatalf("%d attempts", hits.Load())
	}
	var msg struct {
		Text   string `json:"text"`
		Blocks []struct {
			Type string `json:"type"`
			Text struct {
				Type, Text string
			} `json:"text"`
		} `json:"blocks"`
	}
	if err := json.Unmarshal(body, &msg); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(msg.Text, "gpufinops idle-stop stopped 3 of 5 GPU machines, saving $3.02/hour ($2,203.14/month).") {
		t.Fatalf("text %q", msg.Text)
	}
	if !strings.Contains(msg.Text, "i-&lt;1&gt;&amp; (g5.xlarge, aws 123456789012/us-east-1): stopped, $734.38/month") {
		t.Fatalf("text %q", msg.Text)
	}
	if len(msg.Blocks) != 1 || msg.Blocks[0].Type != "section" || msg.Blocks[0].Text.Type != "mrkdwn" {
		t.Fatalf("blocks %+v", msg.Blocks)
	}
}

func TestNotifierGivesUp(t *testing.T) {
	var hits, status atomic.Int32
	status.Store(http.StatusServiceUnavailable)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		msg := "no"
		if status.Load() == http.StatusBadRequest {
			msg = "invalid_payload"
		}
		http.Error(w, msg, int(status.Load()))
	}))
	defer srv.Close()
	n := NewNotifier(srv.URL+"/secret-token", time.Second, srv.Client())
	n.Backoff = time.Millisecond
	sum, ds := notifyRun(t)
	err := n.Send(context.Background(), sum, ds)
	if err == nil || hits.Load() != 3 || !strings.Contains(err.Error(), "503") {
		t.Fatalf("%v after %d attempts", err, hits.Load())
	}

	// A 4xx is not retried.
	hits.Store(0)
	status.Store(http.StatusBadRequest)
	if err := n.Send(context.Background(), sum, ds); err == nil || hits.Load() != 1 || !strings.Contains(err.Error(), "invalid_payload") {
		t.Fatalf("%v after %d attempts", err, hits.Load())
	}
}

// A webhook that never answers costs at most three timeouts and an error the
// command prints as a warning: the run itself is already done.
func TestNotifierTimeoutDoesNotFailTheRun(t *testing.T) {
	var hits atomic.Int32
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer srv.Close()
	defer close(release)
	sum, ds := notifyRun(t) // the stops are done before the notification
	n := NewNotifier(srv.URL+"/services/T000/B000/XXXX", 100*time.Millisecond, srv.Client())
	n.Backoff = 10 * time.Millisecond
	start := time.Now()
	err := n.Send(context.Background(), sum, ds)
	if err == nil || !strings.Contains(err.Error(), "did not answer within 100ms") {
		t.Fatalf("%v", err)
	}
	if strings.Contains(err.Error(), "XXXX") || strings.Contains(err.Error(), "127.0.0.1") {
		t.Fatalf("the error leaks the webhook URL: %v", err)
	}
	if hits.Load() != 3 || time.Since(start) > 2*time.Second {
		t.Fatalf("%d attempts in %s", hits.Load(), time.Since(start))
	}
	if sum.Stopped != 3 || ds[0].Result != ResultStopped {
		t.Fatalf("%+v", sum)
	}
}

func TestNotifierNoURLAndDryRunText(t *testing.T) {
	if err := (*Notifier)(nil).Send(context.Background(), Summary{}, nil); err != nil {
		t.Fatal(err)
	}
	if err := NewNotifier("", 0, nil).Send(context.Background(), Summary{}, nil); err != nil {
		t.Fatal(err)
	}
	cs := fleetOf()
	ds := Decide(cs, now, DefaultPolicy())
	o := opts(&fakeStopper{}, cs, nil)
	o.Execute = false
	sum, err := Execute(context.Background(), ds, o)
	if err != nil {
		t.Fatal(err)
	}
	head, details := Format(sum, ds)
	if !strings.HasPrefix(head, "gpufinops idle-stop (dry run) would stop 3 of 5 GPU machines") || !strings.Contains(details, "i-3 (g5.xlarge, aws 123456789012/us-west-2): would stop, $734.38/month") {
		t.Fatalf("%q\n%q", head, details)
	}
	if err := NewNotifier("://bad", 0, nil).Send(context.Background(), sum, ds); err == nil || strings.Contains(err.Error(), "://bad") {
		t.Fatalf("%v", err)
	}
}
