package file

import (
	"fmt"
	"math"
	"os"
	"runtime/debug"

	"github.com/gpufinops/gpufinops/pkg/fleet"
)

// mapMinBytes is the size from which a fleet file is mapped into memory
// instead of read: a 100,000-instance file is some 230 MB, which reading
// copies onto the heap, where the collector counts it against the soft
// memory limit and each page of it faults in once.
const mapMinBytes = 1 << 20

// loadFile parses the fleet file at path, mapped (mapFile) where the
// platform allows and the file is a regular one of mapMinBytes or more,
// read otherwise.
func loadFile(path string) (*fleet.Fleet, error) {
	if f, err := os.Open(path); err == nil {
		st, err := f.Stat()
		if err == nil && st.Mode().IsRegular() && st.Size() >= mapMinBytes && st.Size() <= math.MaxInt {
			data, unmap, err := mapFile(f, int(st.Size()))
			f.Close()
			if err == nil {
				defer unmap()
				return parseMapped(path, data)
			}
		} else {
			f.Close()
		}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return fleet.Parse(path, data)
}

// parseMapped parses a mapped fleet file. A file that shrinks while it is
// parsed leaves part of the mapping without pages behind it, and reading
// there faults: that becomes an error naming the file rather than a crash.
// fleet.Parse keeps no reference to data, so the mapping may go once it
// returns.
func parseMapped(path string, data []byte) (fl *fleet.Fleet, err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		r := recover()
		if r == nil {
			return
		}
		if _, fault := r.(interface{ Addr() uintptr }); fault {
			fl, err = nil, fmt.Errorf("read %s: the file changed while it was read (%v)", path, r)
			return
		}
		panic(r)
	}()
	return fleet.Parse(path, data)
}
