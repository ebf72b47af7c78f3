package zabtest

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/corral-db/corral/zab"
)

// Handle runs one datadriven command and returns its trace. Bad scripts
// fail the test; what zab returns (errors included) is part of the trace.
//
// Commands (ids are positional; zxids are written epoch:counter):
//
//	add-nodes voters=(1,2,3) [observers=(4)] [manual-persist=true]
//	          [max-counter=N] [disable-peer-acks=true] [init-limit=N]
//	          [sync-limit=N] [election-tick=N] [transfer-ticks=N]
//	          [keep-epoch=true]
//	tick [ids...] [n=K]            Tick each node K times (default 1)
//	process-ready [ids...]         handle one Ready of each
//	deliver-msgs [ids...] [drop=true] [from=ID]
//	                               from: only the messages ID sent
//	stabilize [ids...]             Ready and delivery until quiescent
//	propose ID DATA
//	persist ID [zxid=E:C]          report the log durable (default: all of it)
//	crash ID
//	restart ID [recovering=true] [wipe=true]
//	report-unreachable ID PEER     the driver's link from ID to PEER broke
//	isolate ID / heal [ID]
//	compact ID zxid=E:C            snapshot at an applied zxid, log cut below
//	confirm ID                     ConfirmLeadership
//	transfer-leadership from=ID to=ID
//	status [ids...] / log ID / log-level none|debug|info|warn|error
//	join ID voters=(1,2,3) [observers=(4)]
//	                               start a server outside the ensemble's
//	                               configuration (voters, observers): it
//	                               follows as a non-voting follower, or
//	                               observes if it is among the observers
//	reconfig ID voters=(...) [observers=(...)]
//	                               propose a configuration change on ID
//	membership [ids...]            active and pending configurations
func (env *InteractionEnv) Handle(t *testing.T, d *datadriven.TestData) string {
	env.Output.Reset()
	err := env.handle(t, d)
	if err != nil {
		fmt.Fprintf(env.Output, "error: %v\n", err)
	}
	if env.Output.Len() == 0 {
		return "ok\n"
	}
	return env.Output.String()
}

func (env *InteractionEnv) handle(t *testing.T, d *datadriven.TestData) error {
	ids := positional(t, d)
	switch d.Cmd {
	case "add-nodes":
		return env.handleAddNodes(t, d)
	case "tick":
		k := 1
		d.MaybeScanArgs(t, "n", &k)
		if len(ids) == 0 {
			ids = env.ids()
		}
		for _, id := range ids {
			n, err := env.node(id)
			if err != nil {
				return err
			}
			if n.Node == nil {
				continue
			}
			for range k {
				n.Node.Tick()
			}
		}
	case "process-ready":
		if len(ids) == 0 {
			ids = env.ids()
		}
		for _, id := range ids {
			if _, err := env.ProcessReady(id); err != nil {
				return err
			}
		}
	case "deliver-msgs":
		drop := false
		d.MaybeScanArgs(t, "drop", &drop)
		var from uint64
		d.MaybeScanArgs(t, "from", &from)
		env.DeliverMsgsFrom(drop, from, ids...)
	case "stabilize":
		return env.Stabilize(ids...)
	case "propose":
		if len(d.CmdArgs) != 2 {
			t.Fatalf("%s: propose ID DATA", d.Pos)
		}
		n, err := env.running(ids[0])
		if err != nil {
			return err
		}
		z, err := n.Node.Propose([]byte(d.CmdArgs[1].Key))
		if err != nil {
			return err
		}
		fmt.Fprintf(env.Output, "%s\n", zab.DescribeZxid(z))
	case "persist":
		return env.Persist(one(t, d, ids), zxidArg(t, d, "zxid"))
	case "crash":
		return env.Crash(one(t, d, ids))
	case "restart":
		var recovering, wipe bool
		d.MaybeScanArgs(t, "recovering", &recovering)
		d.MaybeScanArgs(t, "wipe", &wipe)
		return env.Restart(one(t, d, ids), recovering, wipe)
	case "report-unreachable":
		if len(ids) != 2 {
			t.Fatalf("%s: report-unreachable ID PEER", d.Pos)
		}
		n, err := env.running(ids[0])
		if err != nil {
			return err
		}
		n.Node.ReportUnreachable(ids[1])
	case "isolate":
		env.isolated[one(t, d, ids)] = true
	case "heal":
		if len(ids) == 0 {
			clear(env.isolated)
		}
		for _, id := range ids {
			delete(env.isolated, id)
		}
	case "compact":
		return env.compact(one(t, d, ids), zxidArg(t, d, "zxid"))
	case "confirm":
		n, err := env.running(one(t, d, ids))
		if err != nil {
			return err
		}
		r, err := n.Node.ConfirmLeadership()
		if err != nil {
			return err
		}
		fmt.Fprintf(env.Output, "round %d\n", r)
	case "transfer-leadership":
		return env.handleTransfer(t, d)
	case "status":
		if len(ids) == 0 {
			ids = env.ids()
		}
		for _, id := range ids {
			env.status(id)
		}
	case "log":
		return env.describeLog(one(t, d, ids))
	case "join":
		var voters, observers []uint64
		d.ScanArgs(t, "voters", &voters)
		d.MaybeScanArgs(t, "observers", &observers)
		return env.Join(one(t, d, ids), voters, observers)
	case "reconfig":
		var m zab.Membership
		d.ScanArgs(t, "voters", &m.Voters)
		d.MaybeScanArgs(t, "observers", &m.Observers)
		n, err := env.running(one(t, d, ids))
		if err != nil {
			return err
		}
		z, err := n.Node.Propose(zab.EncodeMembership(m))
		if err != nil {
			return err
		}
		fmt.Fprintf(env.Output, "%s\n", zab.DescribeZxid(z))
	case "membership":
		if len(ids) == 0 {
			ids = env.ids()
		}
		for _, id := range ids {
			n, err := env.node(id)
			if err != nil || n.Node == nil {
				fmt.Fprintf(env.Output, "%d: down\n", id)
				continue
			}
			a, p := n.Node.Membership()
			env.Output.WriteString(zab.DescribeMembership(id, a, p))
		}
	case "log-level":
		if len(d.CmdArgs) != 1 {
			t.Fatalf("%s: log-level LEVEL", d.Pos)
		}
		return env.log.setLevel(d.CmdArgs[0].Key)
	default:
		t.Fatalf("%s: unknown command %q", d.Pos, d.Cmd)
	}
	return nil
}

func (env *InteractionEnv) handleAddNodes(t *testing.T, d *datadriven.TestData) error {
	var voters, observers []uint64
	d.ScanArgs(t, "voters", &voters)
	d.MaybeScanArgs(t, "observers", &observers)
	var manual, noPeerAcks, keepEpoch bool
	d.MaybeScanArgs(t, "manual-persist", &manual)
	d.MaybeScanArgs(t, "disable-peer-acks", &noPeerAcks)
	d.MaybeScanArgs(t, "keep-epoch", &keepEpoch)
	var maxCounter uint32
	d.MaybeScanArgs(t, "max-counter", &maxCounter)
	var initLimit, syncLimit, electionTick, transferTicks int
	d.MaybeScanArgs(t, "init-limit", &initLimit)
	d.MaybeScanArgs(t, "sync-limit", &syncLimit)
	d.MaybeScanArgs(t, "election-tick", &electionTick)
	d.MaybeScanArgs(t, "transfer-ticks", &transferTicks)
	return env.AddNodes(voters, observers, func(c *zab.Config) {
		c.DisablePeerAcks = noPeerAcks
		c.KeepEpoch = keepEpoch
		c.MaxCounter = maxCounter
		c.InitLimit = initLimit
		c.SyncLimit = syncLimit
		c.ElectionTick = electionTick
		setTransferTicks(c, transferTicks)
	}, manual)
}

func (env *InteractionEnv) running(id uint64) (*Node, error) {
	n, err := env.node(id)
	if err != nil {
		return nil, err
	}
	if n.Node == nil {
		return nil, fmt.Errorf("node %d is down", id)
	}
	return n, nil
}

func (env *InteractionEnv) status(id uint64) {
	n, err := env.node(id)
	if err != nil || n.Node == nil {
		fmt.Fprintf(env.Output, "%d: down\n", id)
		return
	}
	s := zab.DescribeStatus(n.Node.Status())
	if c := n.Node.Confirmed(); c > 0 {
		first, rest, _ := strings.Cut(s, "\n")
		s = fmt.Sprintf("%s confirmed=%d\n%s", first, c, rest)
	}
	if env.isolated[id] {
		first, rest, _ := strings.Cut(s, "\n")
		s = first + " isolated\n" + rest
	}
	env.Output.WriteString(s)
}

func (env *InteractionEnv) describeLog(id uint64) error {
	n, err := env.node(id)
	if err != nil {
		return err
	}
	snap, ents := n.Storage.All()
	fmt.Fprintf(env.Output, "snapshot: %s %q\n", zab.DescribeZxid(snap.Zxid), snap.Data)
	if len(ents) == 0 {
		env.Output.WriteString("log: empty\n")
	} else {
		env.Output.WriteString("log:\n")
		env.Output.WriteString(indent(zab.DescribeEntries(ents, nil), "  "))
	}
	fmt.Fprintf(env.Output, "durable: %s\n", zab.DescribeZxid(n.Durable))
	if len(n.Applied) == 0 {
		env.Output.WriteString("applied since start: none\n")
	} else {
		env.Output.WriteString("applied since start:\n")
		env.Output.WriteString(indent(zab.DescribeEntries(n.Applied, nil), "  "))
	}
	return nil
}

// compact takes a snapshot at z, which the node must have applied: its
// data is the applied entries' data, comma-separated.
func (env *InteractionEnv) compact(id uint64, z zab.Zxid) error {
	n, err := env.running(id)
	if err != nil {
		return err
	}
	if st := n.Node.Status(); z > st.Applied {
		return fmt.Errorf("compact at %s: applied only %s", zab.DescribeZxid(z), zab.DescribeZxid(st.Applied))
	}
	old, _ := n.Storage.Snapshot()
	var parts []string
	if len(old.Data) > 0 {
		parts = append(parts, string(old.Data))
	}
	_, ents := n.Storage.All()
	for _, e := range ents {
		if e.Zxid <= z {
			parts = append(parts, string(e.Data))
		}
	}
	snap := zab.Snapshot{Zxid: z, Data: []byte(strings.Join(parts, ","))}
	if err := n.Storage.Compact(snap); err != nil {
		return err
	}
	fmt.Fprintf(env.Output, "snapshot %s %q\n", zab.DescribeZxid(z), snap.Data)
	return nil
}

// positional returns the leading arguments that are bare numbers.
func positional(t *testing.T, d *datadriven.TestData) []uint64 {
	var ids []uint64
	for _, a := range d.CmdArgs {
		if len(a.Vals) > 0 {
			continue
		}
		id, err := strconv.ParseUint(a.Key, 10, 64)
		if err != nil {
			continue
		}
		ids = append(ids, id)
	}
	return ids
}

func one(t *testing.T, d *datadriven.TestData, ids []uint64) uint64 {
	if len(ids) != 1 {
		t.Fatalf("%s: %s takes one node id", d.Pos, d.Cmd)
	}
	return ids[0]
}

// zxidArg parses key=E:C; 0 when absent.
func zxidArg(t *testing.T, d *datadriven.TestData, key string) zab.Zxid {
	var s string
	if !d.MaybeScanArgs(t, key, &s) {
		return 0
	}
	e, c, ok := strings.Cut(s, ":")
	ep, err1 := strconv.ParseUint(e, 10, 32)
	cn, err2 := strconv.ParseUint(c, 10, 32)
	if !ok || err1 != nil || err2 != nil {
		t.Fatalf("%s: %s=%q: want EPOCH:COUNTER", d.Pos, key, s)
	}
	return zab.NewZxid(uint32(ep), uint32(cn))
}
