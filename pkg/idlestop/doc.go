// Package idlestop decides which idle GPU machines may be stopped, stops them
// through the providers' Stopper capability, and records every decision in an
// append-only audit log. (Being built.)
package idlestop

import _ "github.com/gofrs/flock"
