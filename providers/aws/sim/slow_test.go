package sim

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
)

func TestDelayedAnswerTakesEffectFirst(t *testing.T) {
	for _, key := range []string{"StopInstances", "ec2:StopInstances"} {
		t.Run(key, func(t *testing.T) {
			s, srv := serveFixture(t, fixtureFleet(), Options{Delays: map[string]time.Duration{key: 300 * time.Millisecond}})
			c := ec2Client(srv, "us-east-1", signedCreds)
			done := make(chan error, 1)
			start := time.Now()
			go func() {
				_, err := c.StopInstances(context.Background(), &ec2.StopInstancesInput{InstanceIds: []string{"i-0a1"}})
				done <- err
			}()
			// The stop is visible before its answer comes.
			deadline := time.Now().Add(250 * time.Millisecond)
			for s.stateOf("i-0a1") != "stopped" && time.Now().Before(deadline) {
				time.Sleep(5 * time.Millisecond)
			}
			if s.stateOf("i-0a1") != "stopped" {
				t.Fatal("the delayed stop did not take effect at once")
			}
			select {
			case err := <-done:
				t.Fatalf("answered after %s (err %v), before the delay", time.Since(start), err)
			default:
			}
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			if el := time.Since(start); el < 300*time.Millisecond {
				t.Fatalf("answered after %s", el)
			}
			// Other operations are not delayed.
			start = time.Now()
			if _, err := c.DescribeInstances(context.Background(), &ec2.DescribeInstancesInput{}); err != nil {
				t.Fatal(err)
			}
			if el := time.Since(start); el > 200*time.Millisecond {
				t.Fatalf("DescribeInstances took %s", el)
			}
		})
	}
}

func TestHungOperationNeverAnswersNorActs(t *testing.T) {
	for _, key := range []string{"StopInstances", "ec2:StopInstances"} {
		t.Run(key, func(t *testing.T) {
			s, srv := serveFixture(t, fixtureFleet(), Options{Hang: []string{key}})
			c := ec2Client(srv, "us-east-1", signedCreds)
			ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
			defer cancel()
			_, err := c.StopInstances(ctx, &ec2.StopInstancesInput{InstanceIds: []string{"i-0a1"}})
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("err %v, want the caller's deadline", err)
			}
			if st := s.stateOf("i-0a1"); st != "running" {
				t.Fatalf("a hung stop acted: %s", st)
			}
		})
	}
}

func TestFaultsControlEndpoint(t *testing.T) {
	s, srv := serveFixture(t, fixtureFleet(), Options{})
	for _, bad := range []string{`{"delays":{"StopInstances":"soon"}}`, `{"delays":{"StopInstances":"-1s"}}`, `{"hang":[""]}`, `{"other":1}`, `[`} {
		resp, err := http.Post(srv.URL+"/_sim/faults", "application/json", strings.NewReader(bad))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("%s: %s, want 400", bad, resp.Status)
		}
	}
	resp, err := http.Post(srv.URL+"/_sim/faults", "application/json", strings.NewReader(`{"delays":{"ec2:StopInstances":"1.5s"},"hang":["DescribeInstances"]}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatal(resp.Status)
	}
	var got struct {
		Delays map[string]string `json:"delays"`
		Hang   []string          `json:"hang"`
	}
	getControl(t, srv.URL+"/_sim/faults", &got)
	if got.Delays["ec2:StopInstances"] != "1.5s" || len(got.Hang) != 1 || got.Hang[0] != "DescribeInstances" {
		t.Fatalf("faults %+v", got)
	}
	if f := s.CurrentFaults(); f.Delays["ec2:StopInstances"] != 1500*time.Millisecond {
		t.Fatalf("%+v", f)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
	defer cancel()
	if _, err := ec2Client(srv, "us-east-1", signedCreds).DescribeInstances(ctx, &ec2.DescribeInstancesInput{MaxResults: aws.Int32(5)}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("DescribeInstances did not hang: %v", err)
	}
	// Clearing them restores normal answers.
	if err := s.SetFaults(Faults{}); err != nil {
		t.Fatal(err)
	}
	if _, err := ec2Client(srv, "us-east-1", signedCreds).DescribeInstances(context.Background(), &ec2.DescribeInstancesInput{}); err != nil {
		t.Fatal(err)
	}
}
