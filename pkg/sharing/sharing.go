// Package sharing plans GPU sharing: which low-utilization GPUs can share one
// physical GPU by time-slicing or by MIG partitions, and the NVIDIA GPU
// Operator configuration that sets it up. (Being built.)
package sharing

// Plan is the sharing the engine proposes for a fleet.
type Plan struct{}
