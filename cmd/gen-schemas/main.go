// Command gen-schemas writes the JSON Schemas of the commands' JSON outputs
// (prices, sharing plan, commit-plan, tags audit, idle-stop, doctor) into
// docs/schema/, generated from the Go types:
//
//	go run ./cmd/gen-schemas            # from the module root
//
// internal/schematest fails while a committed schema is stale, and validates
// each command's real output against it.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/gpufinops/gpufinops/internal/schematest"
)

func main() {
	dir := flag.String("dir", "docs/schema", "directory to write the schemas to")
	flag.Parse()
	if err := run(*dir); err != nil {
		fmt.Fprintln(os.Stderr, "gen-schemas:", err)
		os.Exit(1)
	}
}

func run(dir string) error {
	schemas, err := schematest.Generate()
	if err != nil {
		return err
	}
	for _, name := range schematest.Files() {
		if err := os.WriteFile(filepath.Join(dir, name), schemas[name], 0o644); err != nil {
			return err
		}
	}
	return nil
}
