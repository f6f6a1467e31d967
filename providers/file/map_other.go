//go:build !linux

package file

import (
	"errors"
	"os"
)

// mapFile is not used here: fleet files are read.
func mapFile(*os.File, int) ([]byte, func(), error) {
	return nil, nil, errors.ErrUnsupported
}
