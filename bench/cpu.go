package bench

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"syscall"
	"time"
)

// selfCPU is the CPU time (user + system) this process has used: the load
// generator's cost, since nothing else runs in it during a phase.
func selfCPU() (time.Duration, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, err
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), nil
}

// clockTicks is USER_HZ, the unit of /proc/<pid>/stat times. It is 100 on
// every Linux architecture Go supports; reading it needs sysconf, which Go
// does not expose without cgo.
const clockTicks = 100

// procCPU is the CPU time (user + system, all threads) of process pid, from
// /proc/<pid>/stat.
func procCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	return parseProcStatCPU(b)
}

// parseProcStatCPU reads utime and stime (fields 14 and 15) from a
// /proc/<pid>/stat line. The command name (field 2) is in parentheses and
// may itself contain spaces and parentheses, so fields are counted from the
// last ')'.
func parseProcStatCPU(b []byte) (time.Duration, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, fmt.Errorf("bench: malformed /proc stat line")
	}
	// After ")" come fields 3 (state), 4, ...; utime is field 14.
	f := bytes.Fields(b[i+1:])
	const utime, stime = 14 - 3, 15 - 3
	if len(f) <= stime {
		return 0, fmt.Errorf("bench: short /proc stat line (%d fields)", len(f)+2)
	}
	u, err1 := strconv.ParseInt(string(f[utime]), 10, 64)
	s, err2 := strconv.ParseInt(string(f[stime]), 10, 64)
	if err1 != nil || err2 != nil || u < 0 || s < 0 {
		return 0, fmt.Errorf("bench: bad cpu times %q %q in /proc stat line", f[utime], f[stime])
	}
	return time.Duration(u+s) * (time.Second / clockTicks), nil
}

// machineCPU is the busy CPU time of all CPUs since boot, from the "cpu"
// line of /proc/stat: user, nice, system, irq, softirq and steal (guest
// time is already part of user). Comparing it with the server's and the
// generator's own time shows whether anything else ran during a phase.
func machineCPU() (time.Duration, error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, err
	}
	return parseProcStatTotal(b)
}

func parseProcStatTotal(b []byte) (time.Duration, error) {
	line, _, _ := bytes.Cut(b, []byte("\n"))
	f := bytes.Fields(line)
	if len(f) < 9 || string(f[0]) != "cpu" {
		return 0, fmt.Errorf("bench: malformed /proc/stat")
	}
	var busy int64
	for _, i := range []int{1, 2, 3, 6, 7, 8} { // user nice system irq softirq steal
		v, err := strconv.ParseInt(string(f[i]), 10, 64)
		if err != nil || v < 0 {
			return 0, fmt.Errorf("bench: bad /proc/stat field %q", f[i])
		}
		busy += v
	}
	return time.Duration(busy) * (time.Second / clockTicks), nil
}

// cpuMeter reads the CPU time of the load generator, of the whole machine
// and of the server processes under test (one for a standalone server, one
// per member of an ensemble), at the two ends of a measured interval.
type cpuMeter struct {
	pids                  []int
	self0, machine0       time.Duration
	server0               []time.Duration
	selfErr, machineErr   error
	serverErr             error
	selfUsed, machineUsed time.Duration
	serverUsed            []time.Duration
}

func (m *cpuMeter) begin() {
	m.self0, m.selfErr = selfCPU()
	m.machine0, m.machineErr = machineCPU()
	m.server0 = make([]time.Duration, len(m.pids))
	for i, pid := range m.pids {
		var err error
		if m.server0[i], err = procCPU(pid); err != nil && m.serverErr == nil {
			m.serverErr = err
		}
	}
}

func (m *cpuMeter) end() {
	if m.selfErr == nil {
		var t time.Duration
		t, m.selfErr = selfCPU()
		m.selfUsed = t - m.self0
	}
	if m.machineErr == nil {
		var t time.Duration
		t, m.machineErr = machineCPU()
		m.machineUsed = t - m.machine0
	}
	if m.serverErr == nil {
		m.serverUsed = make([]time.Duration, len(m.pids))
		for i, pid := range m.pids {
			t, err := procCPU(pid)
			if err != nil {
				m.serverErr = err
				return
			}
			m.serverUsed[i] = t - m.server0[i]
		}
	}
}

// serverTotal is the server processes' CPU time together.
func (m *cpuMeter) serverTotal() time.Duration {
	var sum time.Duration
	for _, d := range m.serverUsed {
		sum += d
	}
	return sum
}
