package aws

import (
	"os"
	"testing"
)

// TestMain keeps every test of the adapter away from the real credential
// chain: no instance metadata service (a link-local address this machine must
// not be made to call), no shared config files of the developer, static
// test credentials so requests are signed with their region.
func TestMain(m *testing.M) {
	for k, v := range map[string]string{
		"AWS_EC2_METADATA_DISABLED":   "true",
		"AWS_CONFIG_FILE":             os.DevNull,
		"AWS_SHARED_CREDENTIALS_FILE": os.DevNull,
		"AWS_ACCESS_KEY_ID":           "test",
		"AWS_SECRET_ACCESS_KEY":       "test",
		"AWS_REGION":                  "us-east-1",
	} {
		os.Setenv(k, v)
	}
	os.Unsetenv("AWS_PROFILE")
	// A CA bundle of the machine's (the SDK reads AWS_CA_BUNDLE) cannot be
	// added to a test's own *http.Client; the simulators speak plain HTTP.
	os.Unsetenv("AWS_CA_BUNDLE")
	os.Exit(m.Run())
}
