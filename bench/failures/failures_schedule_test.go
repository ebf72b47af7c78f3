package failures

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/corral-db/corral/bench/launch"
)

func TestParseSchedule(t *testing.T) {
	steps, err := ParseSchedule(" 1s:kill-follower, 2.5s:restart,2.5s:kill-leader ,3s:kill=2,4s:restart=2 ")
	if err != nil {
		t.Fatal(err)
	}
	want := []FailureStep{
		{At: time.Second, Action: ActionKillFollower},
		{At: 2500 * time.Millisecond, Action: ActionRestart},
		{At: 2500 * time.Millisecond, Action: ActionKillLeader},
		{At: 3 * time.Second, Action: ActionKill, Server: 2},
		{At: 4 * time.Second, Action: ActionRestart, Server: 2},
	}
	if len(steps) != len(want) {
		t.Fatalf("steps %+v", steps)
	}
	for i := range want {
		if steps[i] != want[i] {
			t.Errorf("step %d = %+v, want %+v", i, steps[i], want[i])
		}
	}
	if got := FormatSchedule(steps); got != "1s:kill-follower,2.5s:restart,2.5s:kill-leader,3s:kill=2,4s:restart=2" {
		t.Errorf("formatted %q", got)
	}
	again, err := ParseSchedule(FormatSchedule(steps))
	if err != nil || len(again) != len(steps) {
		t.Errorf("round trip: %+v, %v", again, err)
	}
	for _, none := range []string{"", "none", "  "} {
		if s, err := ParseSchedule(none); err != nil || s != nil {
			t.Errorf("%q: %+v, %v", none, s, err)
		}
	}
	if FormatSchedule(nil) != "none" {
		t.Error("empty schedule not formatted as none")
	}
}

func TestParseScheduleRejects(t *testing.T) {
	for _, s := range []string{
		"kill-leader",               // no time
		"1s",                        // no action
		"1x:kill-leader",            // bad duration
		"-1s:kill-leader",           // negative
		"2s:kill-leader,1s:restart", // going back in time
		"1s:kill",                   // kill without a server
		"1s:kill=0", "1s:kill=10",   // server out of range
		"1s:kill=a", "1s:restart=", // not a number
		"1s:kill-leader=2", // the leader is found, not named
		"1s:pause",         // unknown action
		",",                // no step
		"11m:restart",      // beyond any phase
		strings.Repeat("1s:restart,", maxFailureSteps+1), // too long
	} {
		if steps, err := ParseSchedule(s); err == nil {
			t.Errorf("%q accepted: %+v", s, steps)
		}
	}
}

func TestDefaultScheduleIsThePapersSixEvents(t *testing.T) {
	steps, err := ParseSchedule(DefaultFailureSchedule)
	if err != nil {
		t.Fatal(err)
	}
	var kills []string
	for _, s := range steps {
		if s.Action != ActionRestart {
			kills = append(kills, s.Action)
		}
	}
	// 1 and 2: a follower each; 3: the leader; 4: two followers; 5: the
	// leader.
	want := "kill-follower,kill-follower,kill-leader,kill-follower,kill-follower,kill-leader"
	if got := strings.Join(kills, ","); got != want {
		t.Errorf("kills %s, want %s", got, want)
	}
	if last := steps[len(steps)-1]; last.Action != ActionRestart || last.At >= DefaultFailuresDuration {
		t.Errorf("last step %v: every kill must be followed by a restart within the default duration %v", last, DefaultFailuresDuration)
	}
	cfg := DefaultConfig()
	if len(cfg.Schedule) != len(steps) || cfg.Validate() != nil {
		t.Errorf("default config: %d steps, %v", len(cfg.Schedule), cfg.Validate())
	}
}

func TestPickLeaderAndFollower(t *testing.T) {
	down := errors.New("connection refused")
	st := []launch.MemberState{
		{ID: 1, Mode: launch.ModeFollower},
		{ID: 2, Err: down},
		{ID: 3, Mode: launch.ModeFollower},
		{ID: 4, Mode: launch.ModeLeader},
		{ID: 5, Mode: launch.ModeFollower},
	}
	if got := pickLeader(st); got != 4 {
		t.Errorf("leader %d, want 4", got)
	}
	for _, c := range []struct {
		kills map[int]int
		want  int
	}{
		{map[int]int{}, 1},
		{map[int]int{1: 1}, 3},
		{map[int]int{1: 1, 3: 1}, 5},
		{map[int]int{1: 1, 3: 1, 5: 1}, 1},
		{map[int]int{1: 2, 3: 1, 5: 2, 2: 0}, 3}, // server.2 is down
	} {
		if got := pickFollower(st, c.kills); got != c.want {
			t.Errorf("kills %v: follower %d, want %d", c.kills, got, c.want)
		}
	}
	electing := []launch.MemberState{{ID: 1, Mode: "looking"}, {ID: 2, Err: down}}
	if pickLeader(electing) != 0 || pickFollower(electing, nil) != 0 {
		t.Error("a member found where none leads or follows")
	}
}
