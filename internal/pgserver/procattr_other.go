//go:build !linux

package pgserver

import "syscall"

// procAttr is the default elsewhere: running the server as another user is
// supported on Linux only, where Debian's packages are.
func procAttr(uid, gid int) *syscall.SysProcAttr { return nil }
