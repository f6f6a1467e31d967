// Package gates evaluates --fail-on expressions against a report. (Being built.)
package gates

import (
	_ "github.com/itchyny/gojq"
	_ "github.com/schollz/progressbar/v3"
)
