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

// loadFile parses the fleet file at path, mapped (mapLarge) where that
// works, read otherwise.
func loadFile(path string) (*fleet.Fleet, error) {
	if data, unmap, ok := mapLarge(path); ok {
		defer unmap()
		return parseMapped(path, data)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return fleet.Parse(path, data)
}

// mapLarge maps the file at path when it is a regular file of mapMinBytes
// or more and the platform maps files (mapFile); ok is false otherwise, and
// the caller reads it, which also reports why it cannot be opened.
func mapLarge(path string) (data []byte, unmap func(), ok bool) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, false
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() || st.Size() < mapMinBytes || st.Size() > math.MaxInt {
		return nil, nil, false
	}
	data, unmap, err = mapFile(f, int(st.Size()))
	return data, unmap, err == nil
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
