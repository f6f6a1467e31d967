package cmdutil

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpufinops/gpufinops/pkg/config"
)

func TestISF(t *testing.T) {
	dir := t.TempDir()
	good, bad := filepath.Join(dir, "isf.csv"), filepath.Join(dir, "bad.csv")
	_ = os.WriteFile(good, []byte("InstanceSizeFlexibilityGroup,ArmSkuName,Ratio\nG,Standard_A,1\nG,Standard_B,2\n"), 0o644)
	_ = os.WriteFile(bad, []byte("ArmSkuName,Ratio\nStandard_A,1\n"), 0o644)
	cfg := &config.Config{}
	if tab, err := ISF(cfg); tab != nil || err != nil {
		t.Errorf("unset: %v %v", tab, err)
	}
	cfg.Analyze.ISFRatios = good
	if tab, err := ISF(cfg); err != nil || tab.Len() != 2 {
		t.Errorf("good: %v %v", tab, err)
	}
	cfg.Analyze.ISFRatios = bad
	_, err := ISF(cfg)
	var ie *InputError
	if !errors.As(err, &ie) || ExitCodeFor(err) != ExitUsage || !strings.Contains(err.Error(), "analyze.isf_ratios: "+bad+":1: no InstanceSizeFlexibilityGroup column") {
		t.Errorf("bad: %v", err)
	}
}
