package gcp

import (
	"os"
	"testing"
)

// TestMain keeps every test of the adapter away from real credentials: a
// static test token, no Application Default Credentials file of the
// developer, no metadata server (a missing credentials file fails before
// the metadata server is asked).
func TestMain(m *testing.M) {
	os.Setenv(TokenEnv, "test")
	os.Setenv("GOOGLE_APPLICATION_CREDENTIALS", "/nonexistent/gpufinops-test-adc.json")
	os.Setenv("CLOUDSDK_CONFIG", os.DevNull)
	os.Unsetenv("CLOUDSDK_CORE_PROJECT")
	os.Unsetenv("GOOGLE_CLOUD_PROJECT")
	os.Exit(m.Run())
}
