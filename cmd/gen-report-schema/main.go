// Command gen-report-schema writes the JSON Schema of the gpufinops report,
// generated from the Go types in pkg/report:
//
//	go run ./cmd/gen-report-schema            # from the module root
//	go generate ./pkg/report                  # the same, through go:generate
//
// A test in pkg/report fails while docs/schema/report.schema.json is stale.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/gpufinops/gpufinops/pkg/report"
)

func main() {
	src := flag.String("src", "pkg/report", "directory of package report's source, for descriptions")
	out := flag.String("o", "docs/schema/report.schema.json", "file to write")
	flag.Parse()
	b, err := report.JSONSchema(*src)
	if err == nil {
		err = os.WriteFile(*out, b, 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen-report-schema:", err)
		os.Exit(1)
	}
}
