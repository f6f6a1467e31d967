package aws

import "testing"

// Accelerated tells a bill's GPU types apart from the rest, known families
// and new ones alike.
func TestAccelerated(t *testing.T) {
	for name, want := range map[string]bool{
		"g3.4xlarge": true, "g3s.xlarge": true, "p2.xlarge": true, "inf1.2xlarge": true, "g9z.4xlarge": true,
		"p6-b200.48xlarge": true, "gr6.4xlarge": true, "trn2.48xlarge": true,
		"c5.large": false, "m5.2xlarge": false, "t3.micro": false, "g5": false, "gpu.large": false, "": false,
	} {
		if got := Accelerated(name); got != want {
			t.Errorf("Accelerated(%q) = %v, want %v", name, got, want)
		}
	}
}
