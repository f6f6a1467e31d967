package fleet_test

// The clouds' owner rules (and other registered data) live with their
// adapters; the tests that read tags as a production binary does link them.
import _ "github.com/gpufinops/gpufinops/providers/all"
