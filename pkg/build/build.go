// Package build carries the version, commit and date set at link time with
// -ldflags "-X github.com/gpufinops/gpufinops/pkg/build.Version=…".
package build

import "runtime/debug"

// Set by the linker; see .goreleaser.yaml and the Makefile.
var (
	Version = "DEV"
	Commit  = ""
	Date    = ""
)

func init() {
	if Version != "DEV" {
		return
	}
	if info, ok := debug.ReadBuildInfo(); ok && info.Main.Version != "" && info.Main.Version != "(devel)" {
		Version = info.Main.Version
	}
}
