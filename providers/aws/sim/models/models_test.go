package models

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

func TestModelsLoad(t *testing.T) {
	want := []string{"athena", "ec2", "monitoring", "pricing", "sagemaker", "savingsplans", "sts"}
	if got := Services(); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("services %v, want %v", got, want)
	}
	for _, s := range want {
		m := MustLoad(s)
		if !strings.Contains(m.Source, "github.com/boto/botocore@") || len(m.Operations) == 0 {
			t.Errorf("%s: source %q, %d operations", s, m.Source, len(m.Operations))
		}
		for _, op := range m.Operations {
			for _, ref := range []*Ref{op.Input, op.Output} {
				if ref != nil && m.Shapes[ref.Shape] == nil {
					t.Errorf("%s %s: shape %s trimmed away", s, op.Name, ref.Shape)
				}
			}
		}
	}
}

// Athena's simulator is pkg/billing/athenasim for now; its exchanges are
// AWS JSON 1.1 like these.
func TestAthenaExchanges(t *testing.T) {
	m := MustLoad("athena")
	if vs := m.Request("StartQueryExecution", JSON, url.Values{}, []byte(`{"QueryString":"SELECT 1","QueryExecutionContext":{"Database":"cur"},"WorkGroup":"primary","ClientRequestToken":"0123456789abcdef0123456789abcdef"}`)); len(vs) > 0 {
		t.Errorf("valid StartQueryExecution: %v", vs)
	}
	if vs := m.Request("StartQueryExecution", JSON, url.Values{}, []byte(`{"QueryExecutionContext":{"Database":"cur"}}`)); len(vs) == 0 {
		t.Error("StartQueryExecution without QueryString passes")
	}
	if vs := m.Request("GetQueryResults", JSON, url.Values{}, []byte(`{"QueryExecutionId":"q","MaxResults":1001}`)); len(vs) == 0 {
		t.Error("GetQueryResults MaxResults 1001 passes (the model's maximum is 1000)")
	}
	if vs := m.Answer("GetQueryExecution", JSON, []byte(`{"QueryExecution":{"QueryExecutionId":"q","Status":{"State":"SUCCEEDED","SubmissionDateTime":1.7e9}}}`)); len(vs) > 0 {
		t.Errorf("valid GetQueryExecution answer: %v", vs)
	}
	if vs := m.Answer("GetQueryExecution", JSON, []byte(`{"QueryExecution":{"Status":{"State":"DONE"}}}`)); len(vs) == 0 {
		t.Error("state DONE passes")
	}
	h := http.Header{"Content-Type": {"application/x-amz-json-1.1"}}
	if vs := m.ErrorAnswer("GetQueryResults", JSON, 400, h, []byte(`{"__type":"InvalidRequestException","message":"no such query"}`)); len(vs) > 0 {
		t.Errorf("modelled error: %v", vs)
	}
	if vs := m.ErrorAnswer("GetQueryResults", JSON, 400, h, []byte(`{"__type":"NoSuchQuery","message":"no such query"}`)); len(vs) == 0 {
		t.Error("an unmodelled error code passes")
	}
}
