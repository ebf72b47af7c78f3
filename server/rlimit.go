package server

import "syscall"

type rlimit = syscall.Rlimit

func getNofile(l *rlimit) error { return syscall.Getrlimit(syscall.RLIMIT_NOFILE, l) }
