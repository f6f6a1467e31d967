package idlestop

import "github.com/gpufinops/gpufinops/pkg/envelope"

// Kind and SchemaVersion head the JSON document of a run.
const (
	Kind          = "IdleStopRun"
	SchemaVersion = "1.0"
)

// Document is the JSON document of `gpufinops idle-stop -o json`: one
// object per machine considered, and the run's summary.
type Document struct {
	envelope.Header
	Machines []Decision `json:"machines"`
	Summary  Summary    `json:"summary"`
}

// NewDocument is the document of a run; nil decisions are an empty list.
func NewDocument(decisions []Decision, s Summary) Document {
	if decisions == nil {
		decisions = []Decision{}
	}
	return Document{Header: envelope.New(Kind, SchemaVersion), Machines: decisions, Summary: s}
}
