package bench

import "time"

// DurWindow is a phase's timeline: warm-up from t0, measured interval
// [start, end).
type DurWindow struct{ T0, Start, End time.Time }

func (w DurWindow) Measured(t time.Time) bool { return !t.Before(w.Start) && t.Before(w.End) }

// LoadAvg is /proc/loadavg's 1, 5 and 15 minute averages, or "".
func LoadAvg() string {
	return NewEnv().LoadAvg
}
