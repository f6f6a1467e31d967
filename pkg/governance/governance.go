// Package governance audits tags and allocates GPU spend to teams, projects and
// workloads, and computes AI cost metrics. (Being built.)
package governance

// Report is the governance part of a plan.
type Report struct{}
