package load

import (
	"os"
	"testing"
	"time"
)

func TestParseProcStat(t *testing.T) {
	// comm with spaces and a ')' of its own; utime 250, stime 50 ticks.
	line := "4242 (java (my) thing) S 1 4242 4242 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 42 0 100 1000 10 18446744073709551615\n"
	got, err := parseProcStatCPU([]byte(line))
	if err != nil || got != 3*time.Second {
		t.Fatalf("got %v, %v; want 3s", got, err)
	}
	for _, bad := range []string{"", "1 (x) S 1 2", "1 (x) S 1 2 3 4 5 6 7 8 9 10 x 5"} {
		if _, err := parseProcStatCPU([]byte(bad)); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

func TestOwnCPUIsReadable(t *testing.T) {
	if _, err := selfCPU(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc")
	}
	if _, err := ReadProcCPU(os.Getpid()); err != nil {
		t.Fatal(err)
	}
}

func TestParseProcStatTotal(t *testing.T) {
	// user nice system idle iowait irq softirq steal guest guest_nice
	b := []byte("cpu  100 5 20 9999 77 1 2 3 50 0\ncpu0 50 0 10 0 0 0 0 0 0 0\n")
	got, err := parseProcStatTotal(b)
	if want := 131 * time.Second / clockTicks; err != nil || got != want {
		t.Fatalf("got %v, %v; want %v", got, err, want)
	}
	if _, err := parseProcStatTotal([]byte("intr 1 2 3\n")); err == nil {
		t.Error("line without cpu parsed")
	}
	if _, err := machineCPU(); err != nil {
		t.Skip("no /proc/stat:", err)
	}
}
