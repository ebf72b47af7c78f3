package failures

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/corral-db/corral/bench/launch"
)

// Failure actions of a schedule. The leader and the followers are found
// when the step runs, by asking every running member for srvr.
const (
	// ActionKillLeader SIGKILLs the member that leads.
	ActionKillLeader = "kill-leader"
	// ActionKillFollower SIGKILLs a running follower: of those killed the
	// fewest times so far, the lowest id, so successive follower kills hit
	// different followers (the paper's events 1 and 2).
	ActionKillFollower = "kill-follower"
	// ActionKill (kill=N) SIGKILLs server N.
	ActionKill = "kill"
	// ActionRestart restarts every member that is down; restart=N only
	// server N.
	ActionRestart = "restart"
)

// FailureStep is one entry of a failure schedule.
type FailureStep struct {
	// At is the step's time from the start of the measured interval.
	At     time.Duration `json:"at"`
	Action string        `json:"action"`
	// Server is N of kill=N and restart=N; 0 otherwise.
	Server int `json:"server,omitempty"`
}

func (s FailureStep) String() string { return s.At.String() + ":" + s.action() }

// action is the step without its time: kill-leader, restart=2.
func (s FailureStep) action() string {
	if s.Server != 0 {
		return s.Action + "=" + strconv.Itoa(s.Server)
	}
	return s.Action
}

// DefaultFailureSchedule is the ZooKeeper paper's Fig. 8 on a compressed
// time axis, 3 s apart instead of about 10: (1) a follower fails and
// recovers, (2) a different follower fails and recovers, (3) the leader
// fails (and recovers, unmarked in the paper), (4) two followers fail, a
// and b, and recover at c, (5) the leader fails and (6) recovers. On a
// 3-server ensemble step 4 leaves the leader alone, without a quorum.
const DefaultFailureSchedule = "4s:kill-follower,7s:restart,10s:kill-follower,13s:restart,16s:kill-leader,19s:restart," +
	"22s:kill-follower,24s:kill-follower,27s:restart,30s:kill-leader,33s:restart"

// maxFailureSteps bounds a schedule.
const maxFailureSteps = 100

// ParseSchedule reads a failure schedule: comma-separated TIME:ACTION
// entries, TIME a Go duration from the start of the measured interval and
// ACTION one of kill-leader, kill-follower, kill=N, restart, restart=N.
// Times must not decrease; steps with the same time run in the order
// given. "" and "none" are the empty schedule.
func ParseSchedule(s string) ([]FailureStep, error) {
	if t := strings.TrimSpace(s); t == "" || t == "none" {
		return nil, nil
	}
	var steps []FailureStep
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		at, action, ok := strings.Cut(f, ":")
		if !ok {
			return nil, fmt.Errorf("bench: schedule entry %q is not TIME:ACTION", f)
		}
		d, err := time.ParseDuration(strings.TrimSpace(at))
		if err != nil {
			return nil, fmt.Errorf("bench: schedule entry %q: %w", f, err)
		}
		if d < 0 || d > launch.MaxPhase {
			return nil, fmt.Errorf("bench: schedule entry %q: time must be in [0, %v]", f, launch.MaxPhase)
		}
		if n := len(steps); n > 0 && d < steps[n-1].At {
			return nil, fmt.Errorf("bench: schedule entry %q comes before the entry ahead of it (%v)", f, steps[n-1].At)
		}
		step := FailureStep{At: d}
		name, arg, hasArg := strings.Cut(strings.TrimSpace(action), "=")
		switch name {
		case ActionKillLeader, ActionKillFollower:
			if hasArg {
				return nil, fmt.Errorf("bench: schedule entry %q: %s takes no server", f, name)
			}
		case ActionKill, ActionRestart:
			if hasArg {
				n, err := strconv.Atoi(arg)
				if err != nil || n < 1 || n > launch.MaxServers {
					return nil, fmt.Errorf("bench: schedule entry %q: server must be in [1, %d]", f, launch.MaxServers)
				}
				step.Server = n
			} else if name == ActionKill {
				return nil, fmt.Errorf("bench: schedule entry %q: kill needs a server (kill=N)", f)
			}
		default:
			return nil, fmt.Errorf("bench: schedule entry %q: unknown action %q (want %s, %s, kill=N, restart or restart=N)",
				f, name, ActionKillLeader, ActionKillFollower)
		}
		step.Action = name
		steps = append(steps, step)
		if len(steps) > maxFailureSteps {
			return nil, fmt.Errorf("bench: schedule has more than %d steps", maxFailureSteps)
		}
	}
	if len(steps) == 0 {
		return nil, errors.New("bench: schedule without a step (say none for no failures)")
	}
	return steps, nil
}

// FormatSchedule is the inverse of ParseSchedule.
func FormatSchedule(steps []FailureStep) string {
	if len(steps) == 0 {
		return "none"
	}
	parts := make([]string, len(steps))
	for i, s := range steps {
		parts[i] = s.String()
	}
	return strings.Join(parts, ",")
}

// pickLeader returns the id of the member srvr says leads, or 0.
func pickLeader(st []launch.MemberState) int {
	for _, s := range st {
		if s.Err == nil && s.Mode == launch.ModeLeader {
			return s.ID
		}
	}
	return 0
}

// pickFollower returns the follower killed the fewest times so far (kills
// counts them by id), the lowest id among equals; 0 if none answers as a
// follower.
func pickFollower(st []launch.MemberState, kills map[int]int) int {
	best := 0
	for _, s := range st {
		if s.Err != nil || s.Mode != launch.ModeFollower {
			continue
		}
		if best == 0 || kills[s.ID] < kills[best] || kills[s.ID] == kills[best] && s.ID < best {
			best = s.ID
		}
	}
	return best
}
