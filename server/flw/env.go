package flw

import (
	"math"
	"os"
	"os/user"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
)

// na is what ZooKeeper's Environment prints for a missing property.
const na = "<NA>"

// DefaultEnv returns envi's lines for this process, with the keys and
// order of ZooKeeper's Environment.list and Go stand-ins for the Java
// properties: java.version is the Go version, java.vendor the compiler,
// java.home the executable's directory, java.class.path the executable,
// os.name/os.arch as Java names them ("Linux", "amd64", "aarch64"), and
// the os.memory.* lines from the Go runtime (total is memory obtained from
// the OS, free is the part not holding live heap, max is the soft memory
// limit if one is set). zookeeper.version comes first: kazoo's
// server_version parses it.
//
// It reads process facts (host name, user, working directory, kernel
// release, memory statistics), so the server should call it when envi
// runs, not on a hot path.
func DefaultEnv(version string) []KV {
	env := []KV{{"zookeeper.version", version}}
	add := func(k, v string) {
		if v == "" {
			v = na
		}
		env = append(env, KV{k, v})
	}

	host, _ := os.Hostname()
	add("host.name", host)
	add("java.version", runtime.Version())
	add("java.vendor", runtime.Compiler)
	exe, _ := os.Executable()
	javaHome := ""
	if exe != "" {
		javaHome = filepath.Dir(exe)
	}
	add("java.home", javaHome)
	add("java.class.path", exe)
	add("java.library.path", os.Getenv("LD_LIBRARY_PATH"))
	add("java.io.tmpdir", os.TempDir())
	add("java.compiler", "")
	add("os.name", javaOSName(runtime.GOOS))
	add("os.arch", javaArch(runtime.GOARCH))
	add("os.version", kernelRelease())
	userName, userHome := "", ""
	if u, err := user.Current(); err == nil {
		userName, userHome = u.Username, u.HomeDir
	}
	add("user.name", userName)
	add("user.home", userHome)
	wd, _ := os.Getwd()
	add("user.dir", wd)

	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	total := ms.Sys
	free := uint64(0)
	if total > ms.HeapAlloc {
		free = total - ms.HeapAlloc
	}
	max := total
	if lim := debug.SetMemoryLimit(-1); lim > 0 && lim < math.MaxInt64 {
		max = uint64(lim)
	}
	const mb = 1 << 20
	add("os.memory.free", strconv.FormatUint(free/mb, 10)+"MB")
	add("os.memory.max", strconv.FormatUint(max/mb, 10)+"MB")
	add("os.memory.total", strconv.FormatUint(total/mb, 10)+"MB")
	return env
}

func javaOSName(goos string) string {
	switch goos {
	case "linux":
		return "Linux"
	case "darwin":
		return "Mac OS X"
	case "windows":
		return "Windows"
	case "freebsd":
		return "FreeBSD"
	case "openbsd":
		return "OpenBSD"
	case "netbsd":
		return "NetBSD"
	case "solaris", "illumos":
		return "SunOS"
	}
	return goos
}

func javaArch(goarch string) string {
	switch goarch {
	case "arm64":
		return "aarch64"
	case "386":
		return "x86"
	}
	return goarch
}

// kernelRelease is Linux's uname -r; empty elsewhere.
func kernelRelease() string {
	b, err := os.ReadFile("/proc/sys/kernel/osrelease")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}
