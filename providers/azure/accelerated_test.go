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

// GPUOfName reads the GPU a size is named after, by the catalog's specs.
func TestGPUOfName(t *testing.T) {
	for size, want := range map[string]string{
		"Standard_NC8ads_H100_v9": "H100", "Standard_ND96isr_H200_v9": "H200", "Standard_NC4as_T4_v9": "T4",
		"Standard_NV9zz_v9": "", "Standard_NC6": "", "Standard_NC24ads_v5": "", "": "",
	} {
		got, mem := GPUOfName(size)
		if got != want || (want != "" && mem <= 0) {
			t.Errorf("GPUOfName(%q) = %q, %v; want %q", size, got, mem, want)
		}
	}
}
