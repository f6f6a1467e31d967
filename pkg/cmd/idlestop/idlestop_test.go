package idlestop

import (
	"strings"
	"testing"
	"time"

	"github.com/gpufinops/gpufinops/pkg/cmdutil/cmdtest"
	"github.com/gpufinops/gpufinops/pkg/config"
	"github.com/gpufinops/gpufinops/pkg/idlestop"
)

func TestNewCmdIdleStop(t *testing.T) {
	for _, tc := range []struct {
		args    string
		check   func(*testing.T, *IdleStopOptions)
		wantErr string
	}{
		{args: "--provider aws", check: func(t *testing.T, o *IdleStopOptions) {
			if o.Execute || o.Output != "table" || o.Threshold != nil || o.MaxStops != nil {
				t.Errorf("defaults: %+v", o)
			}
		}},
		{args: "--provider aws --execute --max-stops 3 --threshold 10 --window 45m --require-opt-in --selector Team=ml -o json --audit-log /tmp/a.jsonl", check: func(t *testing.T, o *IdleStopOptions) {
			p, err := o.policy(&config.Config{IdleStop: idlestop.DefaultPolicy()})
			if err != nil {
				t.Fatal(err)
			}
			if !o.Execute || o.Output != "json" || o.AuditLog != "/tmp/a.jsonl" || p.MaxStops != 3 || p.GPUPercent != 10 || p.Window != 45*time.Minute || !p.RequireOptIn || p.Selectors["Team"] != "ml" {
				t.Errorf("options %+v policy %+v", o, p)
			}
		}},
		{args: "", wantErr: "idle-stop acts on clouds: give --provider aws"},
		{args: "--provider aws --threshold 0", wantErr: "--threshold: 0 is outside (0, 100]"},
		{args: "--provider aws --window 1m", wantErr: "--window: 1m0s is outside 5m–24h"},
		{args: "--provider aws --max-stops -1", wantErr: "--max-stops: -1 is negative"},
		{args: "--provider aws --selector Team", wantErr: `--selector "Team": want key=value`},
		{args: "--provider oracle", wantErr: `--provider: "oracle" is not one of aws, azure, gcp`},
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
