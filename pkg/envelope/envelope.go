// Package envelope is the head every JSON document of gpufinops starts with:
// the document's kind and the version of its schema, so that a reader knows
// what it holds and whether it can read it.
//
// Versions are "major.minor". A field added is a minor bump and old readers
// ignore it; a field removed, renamed or retyped is a major bump. The report
// (pkg/report) and the report diff (pkg/reportdiff) keep their own version
// lines; the fleet file (pkg/fleet) is versioned by apiVersion and kind.
package envelope

// Header opens a document. Embedded in a document type, its fields come
// first in the JSON form.
type Header struct {
	// SchemaVersion is the version of the document's schema, "major.minor".
	SchemaVersion string `json:"schemaVersion"`
	// Kind names the document, e.g. PriceList or SharingPlan.
	Kind string `json:"kind"`
}

// New is the header of a document of kind at version.
func New(kind, version string) Header { return Header{SchemaVersion: version, Kind: kind} }

// List is a document whose body is a list of items.
type List[T any] struct {
	Header
	// Items are the document's entries.
	Items []T `json:"items"`
}

// NewList is a List of kind at version; nil items are an empty list.
func NewList[T any](kind, version string, items []T) List[T] {
	if items == nil {
		items = []T{}
	}
	return List[T]{Header: New(kind, version), Items: items}
}
