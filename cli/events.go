package cli

import (
	"cmp"
	"context"
	"errors"
	"io"
	"reflect"
	"slices"
	"sync"

	"github.com/corral-db/corral/client"
)

// printer prints watch events and session changes while the shell runs.
//
// One goroutine owns every event source (one-shot watch channels,
// persistent Watchers, the Conn's session events) and prints what arrives.
// Draining continuously matters: a persistent Watcher that is not read
// stalls the whole Conn, including the call the shell is waiting for.
//
// Ordering: the client delivers an event into its channel before it
// completes any call whose reply came after it. After each command the
// shell calls flush, which makes the goroutine take everything already
// queued and print it; only then does the shell print the command's own
// output. So an event the server sent before a reply is always printed
// before the output that reply produced.
type printer struct {
	out *syncWriter

	add   chan source
	flush chan chan struct{}
	quiet chan bool
	done  chan struct{}
}

// source is one channel of events. watcher is set for a persistent watch,
// whose end by removal zkCli reports as a PersistentWatchRemoved event.
type source struct {
	ch      <-chan client.Event
	watcher *client.Watcher
	session bool
}

// recentLimit bounds the memory used to drop duplicates.
const recentLimit = 64

func newPrinter(out *syncWriter) *printer {
	return &printer{
		out:   out,
		add:   make(chan source),
		flush: make(chan chan struct{}),
		quiet: make(chan bool),
		done:  make(chan struct{}),
	}
}

// Watch adds a one-shot watch channel.
func (p *printer) Watch(ch <-chan client.Event) { p.send(source{ch: ch}) }

// Persistent adds a persistent watch.
func (p *printer) Persistent(w *client.Watcher) { p.send(source{ch: w.Events(), watcher: w}) }

// Session adds a Conn's session events.
func (p *printer) Session(ch <-chan client.Event) { p.send(source{ch: ch, session: true}) }

func (p *printer) send(s source) {
	select {
	case p.add <- s:
	case <-p.done:
	}
}

// SetQuiet stops (true) or resumes (false) printing; events are still
// consumed so that no watch stalls the Conn (zkCli's printwatches).
func (p *printer) SetQuiet(q bool) {
	select {
	case p.quiet <- q:
	case <-p.done:
	}
}

// Flush returns once every event already queued in a source is printed.
func (p *printer) Flush() {
	ack := make(chan struct{})
	select {
	case p.flush <- ack:
	case <-p.done:
		return
	}
	select {
	case <-ack:
	case <-p.done:
	}
}

// run is the printer goroutine; it returns when ctx ends.
func (p *printer) run(ctx context.Context) {
	defer close(p.done)
	var (
		sources []source
		quiet   bool
		recent  []eventKey
	)
	emit := func(batch []client.Event) {
		// Events of one wake-up came through different channels; the
		// server's order is the zxid order (client-made events, zxid 0,
		// go last). The Java client calls its one watcher once per
		// event even when several watches matched; drop the copies.
		slices.SortStableFunc(batch, func(a, b client.Event) int {
			return cmp.Or(cmp.Compare(sortZxid(a), sortZxid(b)), cmp.Compare(removalRank(a), removalRank(b)))
		})
		for _, ev := range batch {
			if ev.Zxid > 0 {
				k := eventKey{ev.Type, ev.Path, ev.Zxid}
				if slices.Contains(recent, k) {
					continue
				}
				if len(recent) == recentLimit {
					recent = recent[1:]
				}
				recent = append(recent, k)
			}
			if !quiet {
				p.out.WriteString(formatEvent(ev))
			}
		}
	}
	// drain takes what is queued in every source without waiting,
	// dropping sources that ended.
	drain := func(batch []client.Event) []client.Event {
		kept := sources[:0]
		for _, s := range sources {
			var open bool
			batch, open = takeReady(s, batch)
			if open {
				kept = append(kept, s)
			}
		}
		clear(sources[len(kept):])
		sources = kept
		return batch
	}
	for {
		cases := make([]reflect.SelectCase, 0, 4+len(sources))
		cases = append(cases,
			reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(ctx.Done())},
			reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(p.add)},
			reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(p.flush)},
			reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(p.quiet)})
		for _, s := range sources {
			cases = append(cases, reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(s.ch)})
		}
		chosen, v, ok := reflect.Select(cases)
		switch chosen {
		case 0:
			return
		case 1:
			sources = append(sources, v.Interface().(source))
		case 2:
			emit(drain(nil))
			close(v.Interface().(chan struct{}))
		case 3:
			quiet = v.Bool()
		default:
			s := sources[chosen-4]
			var batch []client.Event
			if ok {
				batch = accept(s, v.Interface().(client.Event), batch)
			} else {
				batch = ended(s, batch)
				sources = slices.Delete(sources, chosen-4, chosen-3)
			}
			emit(drain(batch))
		}
	}
}

type eventKey struct {
	typ  client.EventType
	path string
	zxid int64
}

func sortZxid(ev client.Event) int64 {
	if ev.Zxid <= 0 {
		return 1<<63 - 1
	}
	return ev.Zxid
}

// removalRank orders the client-made events of one removeWatches call
// as the Java client queues them: one-shot watches first, then the end of
// a persistent watch. The printer may wake on either channel first, so
// the order cannot come from arrival.
func removalRank(ev client.Event) int {
	if ev.Type == client.EventPersistentWatchRemoved {
		return 1
	}
	return 0
}

// takeReady appends the events queued in s; open is false if s ended.
func takeReady(s source, batch []client.Event) ([]client.Event, bool) {
	for {
		select {
		case ev, ok := <-s.ch:
			if !ok {
				return ended(s, batch), false
			}
			batch = accept(s, ev, batch)
		default:
			return batch, true
		}
	}
}

// accept keeps the events zkCli would print: not the client's own
// "watch ended without firing" notices, and session changes only from
// the Conn (persistent Watchers repeat them).
func accept(s source, ev client.Event, batch []client.Event) []client.Event {
	if ev.Type == client.EventNotWatching || (ev.Type == client.EventSession && !s.session) {
		return batch
	}
	return append(batch, ev)
}

// ended reports the end of a persistent watch by removal as the event
// the Java client delivers for it.
func ended(s source, batch []client.Event) []client.Event {
	if s.watcher != nil && errors.Is(s.watcher.Err(), client.ErrWatchRemoved) {
		batch = append(batch, client.Event{
			Type:  client.EventPersistentWatchRemoved,
			State: client.StateConnected,
			Path:  s.watcher.Path(),
		})
	}
	return batch
}

// syncWriter serializes writes from the shell and the printer, and lets
// the shell redirect them (to the line editor while it waits for input).
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(b []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(b)
}

func (s *syncWriter) WriteString(str string) {
	s.Write([]byte(str))
}

// Redirect sends later writes to w.
func (s *syncWriter) Redirect(w io.Writer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.w = w
}
