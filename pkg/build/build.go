// Package build carries the version, commit and date of this binary. Release
// builds set them at link time with
// -ldflags "-X github.com/gpufinops/gpufinops/pkg/build.Version=…"; any
// other build (go install …@v1.2.3, a plain go build in a clone) takes them
// from the module and VCS information the Go toolchain embeds.
package build

import (
	"runtime/debug"
	"time"
)

// Set by the linker; see .goreleaser.yaml and the Makefile.
var (
	Version = "DEV"
	Commit  = ""
	Date    = ""
)

func init() {
	if info, ok := debug.ReadBuildInfo(); ok {
		Version, Commit, Date = fromBuildInfo(info, Version, Commit, Date)
	}
}

// fromBuildInfo fills in what the linker left unset: the module version
// (set by go install pkg@version), else "DEV"; the VCS revision, shortened
// to 12 characters with "-dirty" for uncommitted changes; and the commit
// time in UTC (RFC 3339).
func fromBuildInfo(info *debug.BuildInfo, version, commit, date string) (string, string, string) {
	if version == "DEV" && info.Main.Version != "" && info.Main.Version != "(devel)" {
		version = info.Main.Version
	}
	var rev, vcsTime string
	var modified bool
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			vcsTime = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if commit == "" && rev != "" {
		if len(rev) > 12 {
			rev = rev[:12]
		}
		if modified {
			rev += "-dirty"
		}
		commit = rev
	}
	if date == "" && vcsTime != "" {
		if t, err := time.Parse(time.RFC3339, vcsTime); err == nil {
			date = t.UTC().Format(time.RFC3339)
		} else {
			date = vcsTime
		}
	}
	return version, commit, date
}
