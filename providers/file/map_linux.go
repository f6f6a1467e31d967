package file

import (
	"os"
	"syscall"
)

// mapFile maps the first size bytes of f read-only, its pages populated at
// once (one call, not a fault a page), and returns them with the function
// that unmaps them. The mapping outlives f's descriptor.
func mapFile(f *os.File, size int) ([]byte, func(), error) {
	b, err := syscall.Mmap(int(f.Fd()), 0, size, syscall.PROT_READ, syscall.MAP_PRIVATE|syscall.MAP_POPULATE)
	if err != nil {
		return nil, nil, err
	}
	return b, func() { _ = syscall.Munmap(b) }, nil
}
