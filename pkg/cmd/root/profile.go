package root

import (
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
)

// Profile variables: contributors measure a run with go tool pprof.
const (
	CPUProfileEnv = "GPUFINOPS_CPUPROFILE"
	MemProfileEnv = "GPUFINOPS_MEMPROFILE"
)

// startProfiles starts a CPU profile into $GPUFINOPS_CPUPROFILE when it is
// set; the returned stop ends it and writes the heap profile (allocations
// since start) into $GPUFINOPS_MEMPROFILE when that is set.
func startProfiles(getenv func(string) string) (stop func() error, err error) {
	var cpu *os.File
	if path := getenv(CPUProfileEnv); path != "" {
		if cpu, err = os.Create(path); err != nil {
			return nil, fmt.Errorf("%s: %w", CPUProfileEnv, err)
		}
		if err := pprof.StartCPUProfile(cpu); err != nil {
			cpu.Close()
			return nil, fmt.Errorf("%s: %w", CPUProfileEnv, err)
		}
	}
	return func() error {
		if cpu != nil {
			pprof.StopCPUProfile()
			if err := cpu.Close(); err != nil {
				return fmt.Errorf("%s: %w", CPUProfileEnv, err)
			}
		}
		path := getenv(MemProfileEnv)
		if path == "" {
			return nil
		}
		f, err := os.Create(path)
		if err != nil {
			return fmt.Errorf("%s: %w", MemProfileEnv, err)
		}
		runtime.GC()
		if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
			f.Close()
			return fmt.Errorf("%s: %w", MemProfileEnv, err)
		}
		return f.Close()
	}, nil
}
