package bench

import (
	"os"
	"testing"

	"github.com/gpufinops/gpufinops/pkg/fleet"
)

// The shared fixture's SageMaker items are read through SageMaker, never
// as EC2 instances: the AWS bound has SageMaker's floor (a
// DescribeEndpoint and DescribeEndpointConfig per endpoint, a Describe per
// running job, a ListTags per resource, one page of each list) and one
// EC2 instance.
func TestSageMakerBound(t *testing.T) {
	const path = "../../testdata/fleets/managed-ai.yaml"
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := fleet.Parse(path, b)
	if err != nil {
		t.Fatal(err)
	}
	sh := ShapeOf(f)
	var aws *Scope
	for i := range sh.Scopes {
		if sh.Scopes[i].Cloud == fleet.AWS {
			aws = &sh.Scopes[i]
		}
	}
	if aws == nil || aws.Instances != 1 {
		t.Fatalf("AWS scope %+v: want the one EC2 VM as an instance", aws)
	}
	want := SageMakerShape{Endpoints: 2, Variants: 2, Notebooks: 3, Apps: 1, Training: 1, Hosts: 2}
	if got := aws.SageMaker; got != want {
		t.Errorf("SageMaker shape %+v, want %+v", aws.SageMaker, want)
	}
	for _, bd := range Bounds(sh, DefaultSteps) {
		if bd.Cloud != fleet.AWS {
			continue
		}
		for op, n := range map[string]int{
			"sagemaker.ListEndpoints": 1, "sagemaker.ListNotebookInstances": 1, "sagemaker.ListApps": 1, "sagemaker.ListTrainingJobs": 1, "sagemaker.ListProcessingJobs": 1,
			"sagemaker.DescribeEndpoint": 2, "sagemaker.DescribeEndpointConfig": 2, "sagemaker.DescribeTrainingJob": 1, "sagemaker.ListTags": 7,
			"ec2.DescribeInstances": 1,
		} {
			if bd.Requests[op] != n {
				t.Errorf("%s: bound %d, want %d", op, bd.Requests[op], n)
			}
		}
		if _, ok := bd.Requests["sagemaker.DescribeProcessingJob"]; ok {
			t.Errorf("DescribeProcessingJob bounded with no processing job")
		}
	}
}
