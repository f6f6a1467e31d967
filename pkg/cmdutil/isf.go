package cmdutil

import (
	"github.com/gpufinops/gpufinops/pkg/config"
	"github.com/gpufinops/gpufinops/pkg/coverage"
)

// ISF reads the instance size flexibility table analyze.isf_ratios names;
// nil when none is set. A bad or missing file is an InputError naming the
// key, where it was set, the file and its line.
func ISF(cfg *config.Config) (*coverage.ISF, error) {
	path := cfg.Analyze.ISFRatios
	if path == "" {
		return nil, nil
	}
	t, err := coverage.ReadISFFile(path)
	if err != nil {
		return nil, &InputError{Err: &config.KeyError{Key: "analyze.isf_ratios", Source: cfg.Source("analyze.isf_ratios"), Msg: err.Error()}}
	}
	return t, nil
}
