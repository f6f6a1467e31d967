//go:build ignore

// Command trim regenerates the trimmed copy of the Azure models from a
// checkout of https://github.com/Azure/azure-rest-api-specs, for the
// operations of manifest.json. Run it in this directory:
//
//	go run trim.go -specs ~/src/azure-rest-api-specs
//
// then record the checkout's commit in README.md.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/gpufinops/gpufinops/providers/azure/sim/contract/models"
)

func main() {
	specs := flag.String("specs", "", "a checkout of azure-rest-api-specs (the directory holding specification/)")
	flag.Parse()
	if *specs == "" {
		fmt.Fprintln(os.Stderr, "usage: go run trim.go -specs DIR")
		os.Exit(2)
	}
	files, err := models.Trim(os.DirFS(*specs), os.DirFS("."))
	if err != nil {
		fmt.Fprintln(os.Stderr, "trim:", err)
		os.Exit(1)
	}
	if err := os.RemoveAll("specification"); err != nil {
		fmt.Fprintln(os.Stderr, "trim:", err)
		os.Exit(1)
	}
	for name, b := range files {
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err == nil {
			err = os.WriteFile(name, b, 0o644)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "trim:", err)
			os.Exit(1)
		}
		fmt.Println(name)
	}
}
