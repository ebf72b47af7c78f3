package kv

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/cockroachdb/pebble/v2"

	"github.com/corral-db/corral/zab"
)

// Request-id deduplication. A write may carry (Client, Seq); the store
// keeps, per client id, the last sequence it applied and that write's
// result, in pebble beside the data (so it is replicated, in every
// snapshot and checkpoint, and survives restarts):
//
//	metaClient | client(8)               seq(8) zxid(8) succeeded(1) code(1) message
//	metaClientAge | zxid(8) | client(8)  (empty): the clients by last write, oldest first
//
// A write repeating the last sequence is not applied again: it answers
// the recorded result (and the zxid that applied it). A sequence below the
// last is a retry that a later write of the same client overtook; it is
// not applied and answers ErrStaleRequest. At most maxClients clients are
// kept: recording one more forgets the client whose last write is oldest,
// the same one on every replica.

// ErrStaleRequest is the result of a write whose sequence is below the
// last one applied for its client.
var ErrStaleRequest = errors.New("stale request sequence")

// maxClients bounds the deduplication table (a variable for tests; every
// replica must use the same value, or their states differ).
var maxClients = 100000

const (
	metaClient    byte = 'c'
	metaClientAge byte = 'l'
)

func clientKey(client uint64) []byte {
	return binary.BigEndian.AppendUint64([]byte{prefixMeta, metaClient}, client)
}

func clientAgeKey(z zab.Zxid, client uint64) []byte {
	k := binary.BigEndian.AppendUint64([]byte{prefixMeta, metaClientAge}, uint64(z))
	return binary.BigEndian.AppendUint64(k, client)
}

// Result error codes as recorded.
const (
	codeNone = iota
	codeNoTable
	codeNoFamily
	codeTableExists
	codeInvalid
	codeOther
)

var codeErrs = map[byte]error{codeNoTable: ErrNoTable, codeNoFamily: ErrNoFamily, codeTableExists: ErrTableExists, codeInvalid: ErrInvalid}

func errCode(err error) byte {
	if err == nil {
		return codeNone
	}
	for c, e := range codeErrs {
		if errors.Is(err, e) {
			return c
		}
	}
	return codeOther
}

// recordedError is a result error read back from the table: its message
// as first reported, and the sentinel it wrapped.
type recordedError struct {
	msg string
	is  error
}

func (e *recordedError) Error() string { return e.msg }
func (e *recordedError) Unwrap() error { return e.is }

type clientRecord struct {
	seq uint64
	res Result
}

func encodeClientRecord(seq uint64, r Result) []byte {
	b := binary.BigEndian.AppendUint64(nil, seq)
	b = binary.BigEndian.AppendUint64(b, uint64(r.Zxid))
	succ := byte(0)
	if r.Succeeded {
		succ = 1
	}
	b = append(b, succ, errCode(r.Err))
	if r.Err != nil {
		b = append(b, r.Err.Error()...)
	}
	return b
}

func decodeClientRecord(b []byte) (clientRecord, error) {
	if len(b) < 18 {
		return clientRecord{}, fmt.Errorf("kv: client record of %d bytes", len(b))
	}
	r := clientRecord{seq: binary.BigEndian.Uint64(b), res: Result{Zxid: zab.Zxid(binary.BigEndian.Uint64(b[8:])), Succeeded: b[16] == 1}}
	if code := b[17]; code != codeNone {
		r.res.Err = &recordedError{msg: string(b[18:]), is: codeErrs[code]}
	}
	return r, nil
}

// clientCache is the deduplication table in memory: every record pebble
// holds, loaded at open and snapshot install, and changed only by an
// Apply that commits (so it equals what is persisted on every replica).
// It is bounded by maxClients like the table. The apply goroutine owns it.
type clientCache map[uint64]clientRecord

// loadClients reads the deduplication table (at open).
func loadClients(db *pebble.DB) (clientCache, error) {
	lo := []byte{prefixMeta, metaClient}
	it, err := db.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: prefixEnd(lo)})
	if err != nil {
		return nil, err
	}
	c := make(clientCache)
	for it.First(); it.Valid(); it.Next() {
		k := it.Key()
		if len(k) != len(lo)+8 {
			err = fmt.Errorf("kv: client key %q", k)
			break
		}
		v, verr := it.ValueAndErr()
		if verr != nil {
			err = verr
			break
		}
		r, derr := decodeClientRecord(v)
		if derr != nil {
			err = derr
			break
		}
		c[binary.BigEndian.Uint64(k[len(lo):])] = r
	}
	if err == nil {
		err = it.Error()
	}
	if cerr := it.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	return c, nil
}

// lookupClient returns a client's record as the batch sees it: this
// Apply's own changes first, then the committed cache.
func (a *applier) lookupClient(client uint64) (clientRecord, bool) {
	if r, ok := a.pending[client]; ok {
		if r == nil {
			return clientRecord{}, false
		}
		return *r, true
	}
	r, ok := a.s.clientRecs[client]
	return r, ok
}

// setClient records a change of this Apply's to the cache (nil: forgotten).
func (a *applier) setClient(client uint64, r *clientRecord) {
	if a.pending == nil {
		a.pending = make(map[uint64]*clientRecord)
	}
	a.pending[client] = r
}

// commitClients folds this Apply's changes into the cache once its batch
// has committed.
func (a *applier) commitClients() {
	for c, r := range a.pending {
		if r == nil {
			delete(a.s.clientRecs, c)
		} else {
			a.s.clientRecs[c] = *r
		}
	}
}

// dedupe decides whether m (which carries a request id) applies: it
// returns the answer and true when it must not, and otherwise the
// client's record as it was (for remember; nil when it had none).
func (a *applier) dedupe(m *Mutation, z zab.Zxid) (Result, bool, *clientRecord, error) {
	rec, ok := a.lookupClient(m.Client)
	if !ok {
		return Result{}, false, nil, nil
	}
	if m.Seq > rec.seq {
		return Result{}, false, &rec, nil
	}
	if m.Seq == rec.seq {
		return rec.res, true, nil, nil
	}
	return Result{Zxid: z, Err: fmt.Errorf("client %x sequence %d, last applied %d: %w", m.Client, m.Seq, rec.seq, ErrStaleRequest)}, true, nil, nil
}

// remember records r as the result of m's (Client, Seq), applied at z,
// replacing old (the client's record before, nil if none), and forgets
// the oldest client when the table is over its bound.
func (a *applier) remember(m *Mutation, z zab.Zxid, r Result, old *clientRecord) error {
	if old != nil {
		if err := a.b.Delete(clientAgeKey(old.res.Zxid, m.Client), nil); err != nil {
			return err
		}
	} else {
		a.clients++
	}
	enc := encodeClientRecord(m.Seq, r)
	if err := a.b.Set(clientKey(m.Client), enc, nil); err != nil {
		return err
	}
	// The cached record is the decoded bytes, so that it answers exactly
	// what one read back from pebble (after a restart) would.
	rec, err := decodeClientRecord(enc)
	if err != nil {
		return err
	}
	a.setClient(m.Client, &rec)
	if err := a.b.Set(clientAgeKey(z, m.Client), nil, nil); err != nil {
		return err
	}
	for a.clients > maxClients {
		if err := a.forgetOldestClient(); err != nil {
			return err
		}
	}
	return nil
}

func (a *applier) forgetOldestClient() error {
	lo := []byte{prefixMeta, metaClientAge}
	it, err := a.b.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: prefixEnd(lo)})
	if err != nil {
		return err
	}
	var key []byte
	if it.First() {
		key = append([]byte(nil), it.Key()...)
	}
	err = it.Error()
	if cerr := it.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if len(key) != len(lo)+16 {
		return fmt.Errorf("kv: %d clients counted, age index holds %q", a.clients, key)
	}
	client := binary.BigEndian.Uint64(key[len(lo)+8:])
	if err := a.b.Delete(key, nil); err != nil {
		return err
	}
	if err := a.b.Delete(clientKey(client), nil); err != nil {
		return err
	}
	a.setClient(client, nil)
	a.clients--
	return nil
}
