// Package llm is the arithmetic of serving language models on GPUs: model
// shapes, memory needed at a precision, and decode throughput. (Being built.)
package llm
