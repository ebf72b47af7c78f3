package plot

import (
	"bytes"
	"image/png"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/corral-db/corral/bench/failures"
	"github.com/corral-db/corral/bench/launch"
)

func TestFailuresPlotRenders(t *testing.T) {
	dir := t.TempDir()
	rep := plotSyntheticFailuresReport()
	if err := WriteFailuresPlot(dir, rep); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(dir, failures.FailuresPlotFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cfg, err := png.DecodeConfig(f)
	if err != nil {
		t.Fatal(err)
	}
	// Two panels, one per target, one above the other.
	if cfg.Height <= cfg.Width/2 || len(rep.Plots) != 1 {
		t.Errorf("png %dx%d, plots %v", cfg.Width, cfg.Height, rep.Plots)
	}
	if err := renderFailuresPlot(&bytes.Buffer{}, &failures.Report{}); err == nil {
		t.Error("a report without a timeline was plotted")
	}
}

// plotSyntheticFailuresReport has two targets with a dip after an event.
func plotSyntheticFailuresReport() *failures.Report {
	rep := &failures.Report{
		Start: time.Unix(0, 0), Servers: 5, ReadPct: 70, Keys: 100, Bucket: 100 * time.Millisecond,
		SessionTimeout: 10 * time.Second,
	}
	rep.Env.CPUs, rep.Env.Conns, rep.Env.Inflight, rep.Env.ValueSize = 2, 30, 32, 1024
	rep.Env.Duration = 3 * time.Second
	rep.Schedule, _ = failures.ParseSchedule("1s:kill-leader,2s:restart")
	for k, target := range []string{launch.TargetCorral, launch.TargetZooKeeper} {
		tl := failures.NewTimeline(time.Unix(0, 0), 3*time.Second, 100*time.Millisecond)
		for i := range 30 {
			at := time.Unix(0, 0).Add(time.Duration(i)*100*time.Millisecond + time.Millisecond)
			if i < 10 || i > 12 {
				tl.Add(failures.SeriesReads, at, int64(700*(k+1)))
				tl.Add(failures.SeriesWrites, at, int64(300*(k+1)))
			}
		}
		tl.Add(failures.SeriesLost, time.Unix(1, 0), 32)
		tl.Add(failures.SeriesReconnects, time.Unix(1, 200e6), 6)
		run := failures.FailuresRun{Target: target, Servers: 5, Buckets: tl.Buckets(), Events: []failures.FailureEvent{
			{Step: 1, Planned: 1, At: 1.001, Action: failures.ActionKillLeader, Server: 5, PID: 100},
			{Step: 2, Planned: 2, At: 2.0, Action: failures.ActionRestart, Server: 5, PID: 101},
		}}
		for _, b := range run.Buckets {
			run.Ops += b.Reads + b.Writes
			run.Lost += b.Lost
			run.Reconnects += b.Reconnects
		}
		rep.Runs = append(rep.Runs, run)
	}
	return rep
}
