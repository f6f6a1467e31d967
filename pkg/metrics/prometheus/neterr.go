package prometheus

import (
	"errors"
	"net"
	"syscall"
)

func isRefused(err error) bool { return errors.Is(err, syscall.ECONNREFUSED) }

func isDNS(err error) bool {
	var d *net.DNSError
	return errors.As(err, &d)
}

func isTimeout(err error) bool {
	var n net.Error
	return errors.As(err, &n) && n.Timeout()
}
