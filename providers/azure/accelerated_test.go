package azure

import "testing"

// Accelerated knows the size table's sizes and the GPU series by name.
func TestAccelerated(t *testing.T) {
	for name, want := range map[string]bool{
		"Standard_NV6ads_A10_v5": true, "Standard_ND96isr_H200_v5": true, "Standard_NC9zz_v9": true, "standard_nd40rs_v2": true,
		"Standard_NP10s": false, "Standard_D4s_v5": false, "Standard_N": false, "": false,
	} {
		if got := Accelerated(name); got != want {
			t.Errorf("Accelerated(%q) = %v, want %v", name, got, want)
		}
	}
}
