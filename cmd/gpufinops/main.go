// Command gpufinops finds and cuts GPU spend on AWS, Azure and GCP.
package main

import (
	"os"

	"github.com/gpufinops/gpufinops/pkg/cmd/root"
)

func main() {
	os.Exit(int(root.Main()))
}
