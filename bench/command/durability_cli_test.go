package command

import (
	"strings"
	"testing"
)

func TestDurabilityCLIRejectsBadInvocations(t *testing.T) {
	for _, args := range [][]string{
		{"durability", "--configs", "corral-fast"},
		{"durability", "--configs", ""},
		{"durability", "--clients", "0"},
		{"durability", "--servers", "0"},
		{"durability", "--cpu-rate", "0"},
		{"durability", "--queue-consumers", "0"},
		{"durability", "--queue-max-backlog", "100000"},
		{"durability", "--create-duration", "0s"}, // the get phase needs it
		{"durability", "--get-duration", "-1s"},
		{"durability", "--queue-duration", "2h"},
		{"durability", "--value", "-1"},
		{"durability", "--tick-time", "0"},
		{"durability", "extra"},
	} {
		if code, _, _ := runCLI(t, args...); code != 2 {
			t.Errorf("%q: exit %d, want 2", args, code)
		}
	}
	if code, out, _ := runCLI(t, "help"); code != 0 || !strings.Contains(out, "corral bench durability") {
		t.Errorf("help: exit %d, %q", code, out)
	}
	if code, _, errs := runCLI(t, "durability", "-h"); code != 0 || !strings.Contains(errs, "-queue-max-backlog") {
		t.Errorf("durability -h: exit %d, %q", code, errs)
	}
}

func TestCommandLine(t *testing.T) {
	got := commandLine([]string{"corral", "bench", "durability", "--out", "/tmp/a b", "--configs", "corral-sync,zk-forcesync", "it's", ""})
	want := `corral bench durability --out '/tmp/a b' --configs corral-sync,zk-forcesync 'it'\''s' ''`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}
