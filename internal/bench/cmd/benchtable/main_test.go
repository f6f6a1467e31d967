package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestBadInput: a bad flag or variable is one line on stderr and exit 2,
// before anything is built or run.
func TestBadInput(t *testing.T) {
	for _, tc := range []struct {
		args []string
		env  map[string]string
		want string
	}{
		{[]string{"--sizes", "1000,abc"}, nil, "--sizes"},
		{[]string{"--sizes", "0"}, nil, "--sizes"},
		{[]string{"--live", "-5"}, nil, "--live"},
		{[]string{"--latency", "fast"}, nil, "--latency"},
		{[]string{"--latency", "-1s"}, nil, "--latency"},
		{[]string{"--throttle", "1"}, nil, "--throttle"},
		{[]string{"--throttle", "NaN"}, nil, "--throttle NaN"},
		{[]string{"--throttle", "-Inf"}, nil, "--throttle"},
		{[]string{"--sizes", "10000001"}, nil, "--sizes"},
		{[]string{"--live", "1000,99999999999"}, nil, "--live"},
		{[]string{"--latency", "2m"}, nil, "--latency"},
		{[]string{"--target", "0"}, nil, "--target 0"},
		{[]string{"--target", "-10000"}, nil, "--target -10000"},
		{[]string{"--accounts", "100001"}, nil, "--accounts 100001"},
		{[]string{"--regions", "0"}, nil, "--regions"},
		{[]string{"--engine-runs", "0"}, nil, "--engine-runs"},
		{nil, map[string]string{"BENCH_ENGINE_RUNS": "many"}, "BENCH_ENGINE_RUNS"},
		{[]string{"--target", "x"}, nil, "-target"},
		{[]string{"--nope"}, nil, "-nope"},
		{[]string{"extra"}, nil, "extra"},
		{nil, map[string]string{"BENCH_SIZES": "x"}, "--sizes"},
		{nil, map[string]string{"BENCH_TARGET": "many"}, "BENCH_TARGET"},
	} {
		for k, v := range tc.env {
			t.Setenv(k, v)
		}
		var out, errOut bytes.Buffer
		code := run(tc.args, &out, &errOut)
		msg := strings.TrimSpace(errOut.String())
		if code != 2 || !strings.Contains(msg, tc.want) || strings.Count(msg, "\n") > 1 {
			t.Errorf("%v %v: exit %d, %q", tc.args, tc.env, code, msg)
		}
		for k := range tc.env {
			t.Setenv(k, "")
		}
	}
}
