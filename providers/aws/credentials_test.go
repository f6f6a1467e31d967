package aws

import (
	"errors"
	"strings"
	"testing"

	"github.com/aws/smithy-go"

	"github.com/gpufinops/gpufinops/providers"
)

// A credential chain that finds nothing reads as one short line with the
// fix beside it, not the SDK's dump of every source it tried.
func TestClassifyMissingCredentials(t *testing.T) {
	sdk := errors.New(`operation error STS: GetCallerIdentity, get identity: get credentials: failed to refresh cached credentials, no EC2 IMDS role found, operation error ec2imds: GetMetadata, access disabled to EC2 IMDS via client option, or "AWS_EC2_METADATA_DISABLED" environment variable`)
	err := classify(sdk)
	if !errors.Is(err, providers.ErrCredentials) {
		t.Fatalf("classify = %v, want ErrCredentials", err)
	}
	if strings.Contains(err.Error(), "IMDS") || err.Error() != "credentials missing or invalid: no AWS credentials found" {
		t.Errorf("message %q", err)
	}
	var fe *providers.FixError
	if !errors.As(err, &fe) || !errors.Is(fe.Detail(), sdk) {
		t.Fatalf("no FixError with the SDK's message as detail: %#v", err)
	}
	for _, want := range []string{"aws configure", "AWS_PROFILE", "gpufinops doctor --provider aws"} {
		if !strings.Contains(fe.Fix(), want) {
			t.Errorf("fix lacks %q:\n%s", want, fe.Fix())
		}
	}
	rejected := classify(&smithy.GenericAPIError{Code: "ExpiredToken", Message: "The security token included in the request is expired"})
	if !errors.Is(rejected, providers.ErrCredentials) || !strings.Contains(providers.FixOf(rejected), "expired") {
		t.Errorf("rejected: %v, fix %q", rejected, providers.FixOf(rejected))
	}
}
