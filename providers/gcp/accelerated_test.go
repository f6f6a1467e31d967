package gcp

import "testing"

// Accelerated knows the families that bundle GPUs; N1 bills its attached
// GPUs apart, and the memory of an accelerator comes from its name.
func TestAccelerated(t *testing.T) {
	for name, want := range map[string]bool{
		"a2-highgpu-1g": true, "a3-zgpu-16g": true, "g2-standard-8": true, "A4-HIGHGPU-8G": true,
		"n1-standard-8": false, "e2-medium": false, "": false,
	} {
		if got := Accelerated(name); got != want {
			t.Errorf("Accelerated(%q) = %v, want %v", name, got, want)
		}
	}
	for name, want := range map[string]float64{"nvidia-h100-80gb": 80, "nvidia-h200-141gb": 141, "nvidia-tesla-t4": 0, "nvidia-z9": 0} {
		if got := memoryInName(name); got != want {
			t.Errorf("memoryInName(%q) = %v, want %v", name, got, want)
		}
	}
}
