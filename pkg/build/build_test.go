package build

import (
	"runtime/debug"
	"testing"
)

func TestFromBuildInfo(t *testing.T) {
	vcs := []debug.BuildSetting{
		{Key: "vcs", Value: "git"},
		{Key: "vcs.revision", Value: "4100e52c0ffee1234567890abcdef0123456789a"},
		{Key: "vcs.time", Value: "2026-11-30T21:04:05+01:00"},
		{Key: "vcs.modified", Value: "true"},
	}
	tests := []struct {
		name                string
		main                string
		settings            []debug.BuildSetting
		inV, inC, inD       string
		wantV, wantC, wantD string
	}{
		{"plain go build in a clone", "(devel)", vcs, "DEV", "", "",
			"DEV", "4100e52c0ffe-dirty", "2026-11-30T20:04:05Z"},
		{"go install @version", "v1.4.0", nil, "DEV", "", "",
			"v1.4.0", "", ""},
		{"ldflags win", "v1.4.0", vcs, "v1.5.0", "abc1234", "2026-12-01T00:00:00Z",
			"v1.5.0", "abc1234", "2026-12-01T00:00:00Z"},
		{"clean tree", "(devel)", vcs[:3], "DEV", "", "",
			"DEV", "4100e52c0ffe", "2026-11-30T20:04:05Z"},
		{"no information", "", nil, "DEV", "", "", "DEV", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			info := &debug.BuildInfo{Main: debug.Module{Version: tt.main}, Settings: tt.settings}
			v, c, d := fromBuildInfo(info, tt.inV, tt.inC, tt.inD)
			if v != tt.wantV || c != tt.wantC || d != tt.wantD {
				t.Errorf("got %q %q %q, want %q %q %q", v, c, d, tt.wantV, tt.wantC, tt.wantD)
			}
		})
	}
}
