package providers

import "errors"

// FixError is an error that says what to do about it, in words for a person:
// an adapter's explanation of missing or rejected credentials, say. Error is
// the short message; Fix the remedy, which may span lines; Detail what the
// cloud's SDK said, shown only on request (GPUFINOPS_DEBUG) since a
// credential chain's dump helps a person less than the fix does.
type FixError struct {
	Err    error
	fix    string
	detail error
}

// WithFix attaches a remedy and the underlying detail to err.
func WithFix(err error, fix string, detail error) error {
	return &FixError{Err: err, fix: fix, detail: detail}
}

func (e *FixError) Error() string { return e.Err.Error() }
func (e *FixError) Unwrap() error { return e.Err }

// Fix is what to do about the error.
func (e *FixError) Fix() string { return e.fix }

// Detail is what the SDK said, or nil.
func (e *FixError) Detail() error { return e.detail }

// FixOf returns the remedy attached to err or to an error it wraps, or "".
func FixOf(err error) string {
	var fe *FixError
	if errors.As(err, &fe) {
		return fe.fix
	}
	return ""
}
