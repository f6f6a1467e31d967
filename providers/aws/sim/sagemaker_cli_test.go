package sim_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/providers/aws/sim"
	"github.com/gpufinops/gpufinops/providers/simkit"
)

// sageMakerCommands are the aws CLI lines docs/managed-ai.md#sagemaker-aws shows,
// run against the simulator serving the shared managed AI fixture.
var sageMakerCommands = []struct {
	line  string
	check func(t *testing.T, out []byte)
}{
	{"aws sagemaker list-notebook-instances --endpoint-url $SIM", func(t *testing.T, out []byte) {
		var res struct {
			NotebookInstances []struct{ NotebookInstanceName, InstanceType, NotebookInstanceStatus string }
		}
		decodeCLI(t, out, &res)
		var got []string
		for _, n := range res.NotebookInstances {
			got = append(got, n.NotebookInstanceName+"="+n.InstanceType+"="+n.NotebookInstanceStatus)
		}
		if want := "nb-eval-prod=ml.g4dn.xlarge=InService nb-nometrics=ml.g4dn.xlarge=InService nb-research-a=ml.g5.xlarge=InService"; strings.Join(got, " ") != want {
			t.Errorf("notebooks %v, want %s", got, want)
		}
	}},
	{"aws sagemaker describe-endpoint --endpoint-name rerank --endpoint-url $SIM", func(t *testing.T, out []byte) {
		var res struct {
			EndpointConfigName string
			ProductionVariants []struct {
				VariantName          string
				CurrentInstanceCount int
			}
		}
		decodeCLI(t, out, &res)
		if res.EndpointConfigName != "rerank-config" || len(res.ProductionVariants) != 1 || res.ProductionVariants[0].CurrentInstanceCount != 4 {
			t.Errorf("endpoint %+v", res)
		}
	}},
	{"aws sagemaker describe-endpoint-config --endpoint-config-name rerank-config --endpoint-url $SIM", func(t *testing.T, out []byte) {
		var res struct {
			ProductionVariants []struct{ VariantName, InstanceType string }
		}
		decodeCLI(t, out, &res)
		if len(res.ProductionVariants) != 1 || res.ProductionVariants[0].InstanceType != "ml.g5.2xlarge" || res.ProductionVariants[0].VariantName != "primary" {
			t.Errorf("endpoint config %+v", res)
		}
	}},
	{"aws sagemaker stop-notebook-instance --notebook-instance-name nb-research-a --endpoint-url $SIM", nil},
	{"aws sagemaker describe-notebook-instance --notebook-instance-name nb-research-a --endpoint-url $SIM", func(t *testing.T, out []byte) {
		var res struct{ NotebookInstanceStatus string }
		decodeCLI(t, out, &res)
		if res.NotebookInstanceStatus != "Stopping" {
			t.Errorf("status %q after the stop, want Stopping", res.NotebookInstanceStatus)
		}
	}},
}

func decodeCLI(t *testing.T, out []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(out, v); err != nil {
		t.Fatalf("CLI output is not JSON: %v\n%s", err, out)
	}
}

// TestAWSCLISageMaker runs sageMakerCommands with the aws CLI (skipped
// when it is not on PATH, or with -short).
func TestAWSCLISageMaker(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: each aws command takes a second or more")
	}
	bin := os.Getenv("GPUFINOPS_AWS_CLI")
	if bin == "" {
		var err error
		if bin, err = exec.LookPath("aws"); err != nil {
			t.Skip("the AWS CLI is not on PATH")
		}
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash is not on PATH")
	}
	const path = "../../../testdata/fleets/managed-ai.yaml"
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := fleet.Parse(path, b)
	if err != nil {
		t.Fatal(err)
	}
	s := sim.New(f, sim.Options{AccountID: "111122223333", Now: func() time.Time { return time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC) }})
	rec := &simkit.Recorder{H: s, Headers: []string{"Content-Type", "X-Amz-Target", "Authorization"}}
	srv := httptest.NewServer(rec)
	defer srv.Close()
	binDir := t.TempDir()
	if err := os.Symlink(bin, filepath.Join(binDir, "aws")); err != nil {
		t.Fatal(err)
	}
	env := []string{"HOME=" + t.TempDir(), "AWS_ACCESS_KEY_ID=test", "AWS_SECRET_ACCESS_KEY=test", "AWS_DEFAULT_REGION=us-east-1",
		"AWS_DEFAULT_OUTPUT=json", "AWS_PAGER=", "AWS_EC2_METADATA_DISABLED=true", "SIM=" + srv.URL}
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "PATH=") {
			env = append(env, "PATH="+binDir+":"+strings.TrimPrefix(kv, "PATH="))
		}
		if strings.HasPrefix(kv, "PYENV") {
			env = append(env, kv)
		}
	}
	for _, c := range sageMakerCommands {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		cmd := exec.CommandContext(ctx, bash, "-c", c.line)
		cmd.Env = env
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		before := rec.Len()
		err := cmd.Run()
		cancel()
		if err != nil {
			t.Fatalf("%s: %v\n%s\nwire:\n%s", c.line, err, stderr.String(), rec.Since(before))
		}
		if c.check != nil {
			c.check(t, stdout.Bytes())
		}
	}
}

// TestAWSCLISageMakerDocumented: docs/managed-ai.md#sagemaker-aws shows every line
// the CLI test runs.
func TestAWSCLISageMakerDocumented(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "managed-ai.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range sageMakerCommands {
		if !strings.Contains(string(doc), "\n"+c.line+"\n") {
			t.Errorf("docs/managed-ai.md#sagemaker-aws does not show the line\n%s", c.line)
		}
	}
}
