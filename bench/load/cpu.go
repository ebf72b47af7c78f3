package load

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

// ReadProcCPU is the CPU time (user + system, all threads) of process pid, from
// /proc/<pid>/stat.
func ReadProcCPU(pid int) (time.Duration, error) {
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

// CpuMeter reads the CPU time of the load generator, of the whole machine
// and of the server processes under test (one for a standalone server, one
// per member of an ensemble), at the two ends of a measured interval.
type CpuMeter struct {
	Pids                  []int
	self0, machine0       time.Duration
	server0               []time.Duration
	SelfErr, MachineErr   error
	ServerErr             error
	SelfUsed, MachineUsed time.Duration
	ServerUsed            []time.Duration
}

func (m *CpuMeter) Begin() {
	m.self0, m.SelfErr = selfCPU()
	m.machine0, m.MachineErr = machineCPU()
	m.server0 = make([]time.Duration, len(m.Pids))
	for i, pid := range m.Pids {
		var err error
		if m.server0[i], err = ReadProcCPU(pid); err != nil && m.ServerErr == nil {
			m.ServerErr = err
		}
	}
}

func (m *CpuMeter) End() {
	if m.SelfErr == nil {
		var t time.Duration
		t, m.SelfErr = selfCPU()
		m.SelfUsed = t - m.self0
	}
	if m.MachineErr == nil {
		var t time.Duration
		t, m.MachineErr = machineCPU()
		m.MachineUsed = t - m.machine0
	}
	if m.ServerErr == nil {
		m.ServerUsed = make([]time.Duration, len(m.Pids))
		for i, pid := range m.Pids {
			t, err := ReadProcCPU(pid)
			if err != nil {
				m.ServerErr = err
				return
			}
			m.ServerUsed[i] = t - m.server0[i]
		}
	}
}

// ServerTotal is the server processes' CPU time together.
func (m *CpuMeter) ServerTotal() time.Duration {
	var sum time.Duration
	for _, d := range m.ServerUsed {
		sum += d
	}
	return sum
}

// CPUUse is what a CpuMeter read over a measured interval, as the
// results files record it; result types embed it.
type CPUUse struct {
	// ServerCPU is the servers' CPU seconds together in the measured
	// interval; nil when not measured.
	ServerCPU *float64 `json:"server_cpu_s,omitempty"`
	// LoadgenCPU is this process's CPU seconds in the measured interval.
	LoadgenCPU float64 `json:"loadgen_cpu_s"`
	// MachineCPU is the busy CPU seconds of the whole machine in the
	// measured interval; nil when not measured. What exceeds server and
	// load generator ran beside the benchmark and disturbed it.
	MachineCPU *float64 `json:"machine_cpu_s,omitempty"`
	// ServerCPUEach is each server's share of ServerCPU.
	ServerCPUEach []ProcCPU `json:"server_cpu_each,omitempty"`
}

// Use is the meter's readings after End, each server named by procs
// (in the order of Pids). A reading that failed is left out.
func (m *CpuMeter) Use(procs []ServerProc) CPUUse {
	var u CPUUse
	if m.SelfErr == nil {
		u.LoadgenCPU = m.SelfUsed.Seconds()
	}
	if m.MachineErr == nil {
		s := m.MachineUsed.Seconds()
		u.MachineCPU = &s
	}
	if len(m.Pids) > 0 && m.ServerErr == nil {
		s := m.ServerTotal().Seconds()
		u.ServerCPU = &s
		for i, p := range procs {
			u.ServerCPUEach = append(u.ServerCPUEach, ProcCPU{Server: p.Name, PID: p.PID, CPU: m.ServerUsed[i].Seconds()})
		}
	}
	return u
}
