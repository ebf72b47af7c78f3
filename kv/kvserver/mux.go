package kvserver

import (
	"context"
	"log/slog"
	"sync/atomic"

	"github.com/corral-db/corral/transport"
	"github.com/corral-db/corral/zab"
)

// groupQueue bounds the messages a replica of a node has received and its
// driver not yet taken.
const groupQueue = 4096

// mux carries the zab messages of every replica of a storage node over
// the node's one TCP transport: a message sent for a group is tagged with
// it (zab.Message.Group), and each received message goes to the queue of
// its group. A message for a group the node does not host, or whose
// queue is full, is dropped and counted: the transport's contract is best
// effort already (zab resends or starts a new session), and one replica
// that falls behind must not stall the others' traffic.
type mux struct {
	tr      *transport.TCP
	log     *slog.Logger
	queues  map[uint64]chan zab.Message // fixed before run
	dropped atomic.Uint64
}

func newMux(tr *transport.TCP, log *slog.Logger) *mux {
	return &mux{tr: tr, log: log, queues: map[uint64]chan zab.Message{}}
}

// link returns the send function and the receive queue of group g. Call
// it for every group before run.
func (m *mux) link(g uint64) (func([]zab.Message), <-chan zab.Message) {
	q := make(chan zab.Message, groupQueue)
	m.queues[g] = q
	return func(msgs []zab.Message) {
		for i := range msgs {
			msgs[i].Group = g
		}
		m.tr.Send(msgs)
	}, q
}

// run demultiplexes received messages until the transport closes its
// receive channel (it does when ctx ends) or ctx ends.
func (m *mux) run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case msg, ok := <-m.tr.Recv():
			if !ok {
				return
			}
			q, hosted := m.queues[msg.Group]
			if !hosted {
				if m.dropped.Add(1)%1024 == 1 {
					m.log.Warn("kv node: message for a group not hosted here dropped", "group", msg.Group, "from", msg.From)
				}
				continue
			}
			msg.Group = 0
			select {
			case q <- msg:
			default:
				m.dropped.Add(1)
			}
		}
	}
}
