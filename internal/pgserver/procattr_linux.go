package pgserver

import "syscall"

// procAttr runs a server program as uid:gid (when not -1) in its own process
// group, so that a terminal's Ctrl-C reaches only the process that stops it
// cleanly, and kills the server when that process dies (SIGQUIT: immediate
// shutdown).
func procAttr(uid, gid int) *syscall.SysProcAttr {
	a := &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGQUIT}
	if uid >= 0 {
		a.Credential = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	}
	return a
}
