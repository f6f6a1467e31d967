package idlestop

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpufinops/gpufinops/pkg/cmdutil"
	"github.com/gpufinops/gpufinops/pkg/cmdutil/cmdtest"
	"github.com/gpufinops/gpufinops/pkg/config"
	"github.com/gpufinops/gpufinops/pkg/idlestop"
)

func TestRunFlags(t *testing.T) {
	for _, tc := range []struct {
		args    string
		check   func(*testing.T, *IdleStopOptions)
		wantErr string
	}{
		{args: "--provider aws", check: func(t *testing.T, o *IdleStopOptions) {
			if o.Run != (runFlags{}) {
				t.Errorf("flags not given are nil: %+v", o.Run)
			}
		}},
		{args: "--provider aws --execute --connect-timeout 3s --request-timeout 5s --run-timeout 2m --grace-period 0s --lock-dir /var/lib/g/locks --lock-wait 1s", check: func(t *testing.T, o *IdleStopOptions) {
			r := o.Run
			if *r.ConnectTimeout != 3*time.Second || *r.RequestTimeout != 5*time.Second || *r.RunTimeout != 2*time.Minute || *r.Grace != 0 || *r.LockDir != "/var/lib/g/locks" || *r.LockWait != time.Second {
				t.Errorf("%+v", r)
			}
		}},
		{args: "--provider aws --connect-timeout 0s", wantErr: "--connect-timeout: 0s is outside 1ms–10m0s"},
		{args: "--provider aws --connect-timeout -1s", wantErr: "--connect-timeout: -1s is outside"},
		{args: "--provider aws --connect-timeout 11m", wantErr: "--connect-timeout: 11m0s is outside"},
		{args: "--provider aws --request-timeout 0s", wantErr: "--request-timeout: 0s is outside 1ms–1h0m0s"},
		{args: "--provider aws --request-timeout -3s", wantErr: "--request-timeout: -3s is outside"},
		{args: "--provider aws --run-timeout 0", wantErr: "--run-timeout: 0s is outside"},
		{args: "--provider aws --run-timeout 100h", wantErr: "--run-timeout: 100h0m0s is outside"},
		{args: "--provider aws --grace-period -1ms", wantErr: "--grace-period: -1ms is outside 0s–10m0s"},
		{args: "--provider aws --grace-period 1h", wantErr: "--grace-period: 1h0m0s is outside"},
		{args: "--provider aws --lock-wait 0s", wantErr: "--lock-wait: 0s is outside"},
		{args: "--provider aws --lock-dir=", wantErr: "--lock-dir: empty"},
	} {
		t.Run(tc.args, func(t *testing.T) {
			got, err := cmdtest.Parse(t, NewCmdIdleStop, strings.Fields(tc.args))
			if cmdtest.CheckErr(t, err, tc.wantErr) {
				return
			}
			tc.check(t, got)
		})
	}
}

func TestSettings(t *testing.T) {
	env := func(kv ...string) func(string) (string, bool) {
		m := map[string]string{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
	}
	cfg := &config.Config{Timeouts: config.TimeoutsConfig{Connect: 2 * time.Second, Request: 7 * time.Second, Run: 3 * time.Minute, Grace: 4 * time.Second}, Locks: config.LocksConfig{Wait: time.Minute}}

	// --execute without --audit-log: the XDG state directory.
	o := &IdleStopOptions{Execute: true, LookupEnv: env("XDG_STATE_HOME", "/state", "HOME", "/home/u")}
	s, err := o.settings(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if s.auditLog != filepath.FromSlash("/state/gpufinops/idle-stop.jsonl") || s.lockDir != filepath.FromSlash("/state/gpufinops/locks") ||
		s.connect != 2*time.Second || s.request != 7*time.Second || s.run != 3*time.Minute || s.grace != 4*time.Second || s.lockWait != time.Minute {
		t.Fatalf("%+v", s)
	}
	// The config's audit log, then the flag, win over the default.
	cfg.Audit.Log, cfg.Locks.Dir = "/var/log/g.jsonl", "/var/lib/g/locks"
	if s, _ = o.settings(cfg); s.auditLog != "/var/log/g.jsonl" || s.lockDir != "/var/lib/g/locks" {
		t.Fatalf("%+v", s)
	}
	d, g, c := 9*time.Second, time.Duration(0), 500*time.Millisecond
	o.AuditLog, o.Run = "/tmp/a.jsonl", runFlags{ConnectTimeout: &c, RequestTimeout: &d, Grace: &g}
	if s, _ = o.settings(cfg); s.auditLog != "/tmp/a.jsonl" || s.connect != c || s.request != 9*time.Second || s.grace != 0 {
		t.Fatalf("%+v", s)
	}
	// Nowhere to keep the record: --execute is refused, exit 2.
	cfg.Audit.Log, cfg.Locks.Dir = "", ""
	o = &IdleStopOptions{Execute: true, LookupEnv: env()}
	_, err = o.settings(cfg)
	var fe *cmdutil.FlagError
	if !errors.As(err, &fe) || !strings.Contains(err.Error(), "--audit-log FILE") {
		t.Fatalf("%v", err)
	}
	// A dry run needs neither.
	o.Execute = false
	if s, err := o.settings(cfg); err != nil || s.auditLog != "" || s.lockDir != "" {
		t.Fatalf("%+v %v", s, err)
	}
	// A Config built in code with zero limits gets the defaults.
	if s, _ := o.settings(&config.Config{}); s.connect != config.DefaultConnectTimeout || s.request != config.DefaultRequestTimeout || s.run != config.DefaultRunTimeout || s.lockWait != config.DefaultLockWait || s.grace != 0 {
		t.Fatalf("%+v", s)
	}
}

func TestIncompleteIsOneLineExit3(t *testing.T) {
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(errors.New("interrupted by terminated"))
	for _, tc := range []struct {
		s       idlestop.Summary
		execute bool
		want    string
	}{
		{idlestop.Summary{}, false, "interrupted by terminated; nothing was stopped"},
		{idlestop.Summary{Stop: 4, Results: map[string]int{"not-attempted": 4}}, true, "nothing was stopped (4 not attempted)"},
		{idlestop.Summary{Stop: 4, Stopped: 1, Results: map[string]int{"not-attempted": 3}}, true, "1 stopped, 3 not attempted"},
		{idlestop.Summary{Stop: 8, Stopped: 1, Unknown: 3, Results: map[string]int{"not-attempted": 4}}, true, "1 stopped, 3 unknown (the next run reconciles them), 4 not attempted"},
	} {
		err := incomplete(ctx, tc.s, tc.execute)
		if cmdutil.ExitCodeFor(err) != cmdutil.ExitPartial || !strings.HasSuffix(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%v (exit %d), want one line ending %q", err, cmdutil.ExitCodeFor(err), tc.want)
		}
	}
	tctx, tcancel := context.WithTimeoutCause(context.Background(), time.Nanosecond, &timeoutCause{limit: 2 * time.Second})
	defer tcancel()
	<-tctx.Done()
	if err := incomplete(tctx, idlestop.Summary{}, true); !strings.Contains(err.Error(), "--run-timeout 2s") {
		t.Errorf("%v", err)
	}
}
