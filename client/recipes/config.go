package recipes

import (
	"context"
	"slices"
	"strings"

	"github.com/corral-db/corral/client"
)

// Config is configuration management with the ready znode (§2.3, §2.4).
// The configuration is a set of nodes dir/entries/<key>, and it is valid
// only while dir/ready exists.
//
// The writer (one at a time: the leader of the paper's example; elect it
// with Election) deletes ready, updates the entries and creates ready
// again, all pipelined: the requests go out back to back and, because a
// session's requests execute in order, ready is created after every
// change, and only if all of them succeeded. A writer that dies half way
// leaves no ready node, so nobody uses the partial configuration.
//
// A reader sets a watch on ready with exists(ready, true); if ready is
// absent it waits for the watch. Then it reads the entries. A writer may
// have started a new change meanwhile, but the watch ordering guarantee
// delivers the ready watch's event before the reply of any read that
// sees the change; so if, after the last read, the watch has not fired,
// every entry read belongs to one configuration. Otherwise the reader
// starts over.
type Config struct {
	c   *client.Conn
	dir string
	o   *options
}

// ConfigView is one consistent configuration.
type ConfigView struct {
	Values map[string][]byte
	// Version identifies the publication: the zxid that created its ready
	// node. Later publications have larger versions.
	Version int64
	// Changed fires (once, then closes) when the ready node changes: the
	// configuration is about to change and the view is stale. It
	// receives client.EventNotWatching if the session ends.
	Changed <-chan client.Event
}

// NewConfig returns the configuration kept under dir.
func NewConfig(c *client.Conn, dir string, opts ...Option) *Config {
	return &Config{c: c, dir: dir, o: buildOptions(opts)}
}

func (cf *Config) readyPath() string   { return join(cf.dir, "ready") }
func (cf *Config) entriesPath() string { return join(cf.dir, "entries") }

// Publish replaces the whole configuration with values (keys are node
// names: no "/", not empty, not "." or ".."). Publishers must not run
// concurrently with each other. After a connection loss it starts over,
// which is safe: every step is idempotent.
func (cf *Config) Publish(ctx context.Context, values map[string][]byte) error {
	for k := range values {
		if k == "" || k == "." || k == ".." || strings.ContainsRune(k, '/') {
			return ErrBadKey
		}
	}
	if err := ensurePath(ctx, cf.c, cf.entriesPath(), cf.o.acl); err != nil {
		return err
	}
	var b backoff
	for {
		err := cf.publishOnce(ctx, values)
		if !connLoss(err) {
			return err
		}
		if err := b.wait(ctx); err != nil {
			return err
		}
	}
}

func (cf *Config) publishOnce(ctx context.Context, values map[string][]byte) error {
	c := cf.c
	existing, err := c.Children(ctx, cf.entriesPath())
	if err != nil {
		return err
	}
	have := make(map[string]bool, len(existing))
	for _, k := range existing {
		have[k] = true
	}
	keys := make([]string, 0, len(values))
	for k := range values {
		keys = append(keys, k)
	}
	slices.Sort(keys)

	// Pipelined: delete ready, then every change, queued back to back.
	var waits []func() error
	del := c.DeleteAsync(cf.readyPath(), -1)
	waits = append(waits, func() error { return ignore(waitErr(ctx, del), noNode) })
	for _, k := range existing {
		if _, keep := values[k]; !keep {
			f := c.DeleteAsync(join(cf.entriesPath(), k), -1)
			waits = append(waits, func() error { return ignore(waitErr(ctx, f), noNode) })
		}
	}
	for _, k := range keys {
		p, v := join(cf.entriesPath(), k), values[k]
		if have[k] {
			f := c.SetAsync(p, v, -1)
			waits = append(waits, func() error {
				err := waitErr(ctx, f)
				if noNode(err) { // deleted meanwhile: only another publisher would
					_, err = c.Create(ctx, p, v, cf.o.acl, client.ModePersistent)
				}
				return err
			})
		} else {
			f := c.CreateAsync(p, v, cf.o.acl, client.ModePersistent)
			waits = append(waits, func() error {
				err := waitErr(ctx, f)
				if nodeExists(err) { // our earlier attempt, or another publisher
					_, err = c.Set(ctx, p, v, -1)
				}
				return err
			})
		}
	}
	var first error
	for _, w := range waits {
		if err := w(); err != nil && first == nil {
			first = err
		}
	}
	if first != nil {
		return first // no ready node: readers keep waiting
	}
	_, err = c.Create(ctx, cf.readyPath(), nil, cf.o.acl, client.ModePersistent)
	return ignore(err, nodeExists)
}

func waitErr[T any](ctx context.Context, f *client.Future[T]) error {
	_, err := f.Wait(ctx)
	return err
}

func ignore(err error, benign func(error) bool) error {
	if err != nil && benign(err) {
		return nil
	}
	return err
}

// Read waits until a configuration is ready and returns it.
func (cf *Config) Read(ctx context.Context) (*ConfigView, error) {
	var b backoff
	for {
		st, ch, err := existsW(ctx, cf.c, cf.readyPath())
		if err != nil {
			return nil, err
		}
		if st == nil {
			select {
			case <-ch: // created (or the session ended: the next call says)
				continue
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		values, err := cf.readEntries(ctx)
		switch {
		case connLoss(err):
			if err := b.wait(ctx); err != nil {
				return nil, err
			}
			continue
		case err != nil && !noNode(err):
			return nil, err
		}
		select {
		case <-ch:
			continue // ready changed while we read: the entries may mix two configurations
		default:
		}
		if err != nil { // an entry vanished, yet ready did not change: not a consistent view
			if err := b.wait(ctx); err != nil {
				return nil, err
			}
			continue
		}
		return &ConfigView{Values: values, Version: st.Czxid, Changed: ch}, nil
	}
}

// readEntries lists and reads the entries, pipelined.
func (cf *Config) readEntries(ctx context.Context) (map[string][]byte, error) {
	kids, err := cf.c.Children(ctx, cf.entriesPath())
	if noNode(err) {
		return map[string][]byte{}, nil // ready without entries: an empty configuration
	}
	if err != nil {
		return nil, err
	}
	futs := make([]*client.Future[client.GetResult], len(kids))
	for i, k := range kids {
		futs[i] = cf.c.GetAsync(join(cf.entriesPath(), k))
	}
	values := make(map[string][]byte, len(kids))
	var first error
	for i, f := range futs {
		r, err := f.Wait(ctx)
		if err != nil {
			if first == nil {
				first = err
			}
			continue
		}
		values[kids[i]] = r.Data
	}
	return values, first
}

// Watch delivers the configuration now and after every change, until ctx
// ends or the session is over (the channel is then closed). A slow
// reader misses intermediate configurations, never the latest.
func (cf *Config) Watch(ctx context.Context) <-chan *ConfigView {
	out := make(chan *ConfigView)
	go func() {
		defer close(out)
		for {
			v, err := cf.Read(ctx)
			if err != nil {
				if ctx.Err() == nil && !sessionOver(err) {
					cf.o.logger.Warn("recipes: config watch ends", "dir", cf.dir, "err", err)
				}
				return
			}
			select {
			case out <- v:
			case <-ctx.Done():
				return
			}
			select {
			case <-v.Changed:
			case <-ctx.Done():
				return
			}
		}
	}()
	return out
}
