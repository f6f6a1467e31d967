package ratelimit

import (
	"context"
	"strings"
	"testing"
	"time"
)

// FuzzParseQuota: any text gives a one-line error or a quota whose rate is
// positive and finite and whose bucket takes a token without panicking.
func FuzzParseQuota(f *testing.F) {
	for _, s := range []string{"off", "20/s:100", "15/5s:15", "1500/m", "1/m:1", "9223372036854775807/1ns:9223372036854775807", "1/2562047h", "0/s", "-1/s", "5/0s", "5/-1s", "5/s:0", "NaN/s", "1e3/s", "5/s:", "/s", "5/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		q, err := ParseQuota(s)
		if err != nil {
			if strings.ContainsAny(err.Error(), "\n\r") {
				t.Fatalf("ParseQuota(%q): error %q spans lines", s, err)
			}
			return
		}
		if s == "off" {
			return
		}
		if q.Requests < 1 || q.Burst < 1 || q.Per <= 0 {
			t.Fatalf("ParseQuota(%q) = %+v", s, q)
		}
		if l := float64(q.Limit()); !(l > 0) {
			t.Fatalf("ParseQuota(%q): limit %v", s, l)
		}
		set, err := NewSet(map[string]Quota{"api": q}, nil)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
		defer cancel()
		_, _ = set.Bucket("api", "scope").Wait(ctx)
	})
}
