package kv

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/cockroachdb/pebble/v2"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/corral-db/corral/kv/ring"
)

// MoveChunk is one page of a range export: cells of the range and
// deduplication records, to be ingested as one OpIngest.
type MoveChunk struct {
	Cells   []MovedCell
	Clients []MovedClient
	// Next is where the following page starts (after this key); nil
	// once Done.
	Next []byte
	Done bool
}

// Export limits: a page stops after about DefaultExportBytes of cells
// (so that it fits one entry) or after exportMaxSteps keys examined.
const (
	DefaultExportBytes = 256 << 10
	exportMaxSteps     = 1 << 16
)

// ExportRange reads one page of what a move copies from this RG: every
// deduplication record, then every cell (all versions) of the rows
// hashing into r, from after the cursor after (nil: the start). The move
// must have fenced r here: from the fence on nothing in r changes, so
// pages read at different times are one consistent copy.
func (s *Store) ExportRange(move uint64, r ring.Range, after []byte, maxBytes int) (MoveChunk, error) {
	if maxBytes <= 0 {
		maxBytes = DefaultExportBytes
	}
	s.dbMu.RLock()
	defer s.dbMu.RUnlock()
	if s.db == nil {
		return MoveChunk{}, errClosed
	}
	s.mu.RLock()
	if !s.move.current().covers(r, move) {
		s.mu.RUnlock()
		return MoveChunk{}, fmt.Errorf("export %v: %w", r, ErrNotFenced)
	}
	byID := make(map[uint32]*table, len(s.tables))
	for _, t := range s.tables {
		byID[t.id] = t
	}
	lo, hi := []byte{prefixMeta, metaClient}, []byte{prefixData + 1}
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
	s.mu.RUnlock()
	if err != nil {
		return MoveChunk{}, err
	}
	defer it.Close()
	var ok bool
	if after == nil {
		ok = it.First()
	} else {
		ok = it.SeekGE(append(append([]byte(nil), after...), 0))
	}
	var c MoveChunk
	size := 0
	var last []byte
	for steps := 0; ok; steps++ {
		if size >= maxBytes || steps >= exportMaxSteps {
			c.Next = last
			return c, nil
		}
		k := it.Key()
		last = append(last[:0], k...)
		switch {
		case bytes.HasPrefix(k, lo):
			v, err := it.ValueAndErr()
			if err != nil {
				return MoveChunk{}, err
			}
			if len(k) != len(lo)+8 {
				return MoveChunk{}, fmt.Errorf("kv: client key %q", k)
			}
			var id uint64
			for _, b := range k[len(lo):] {
				id = id<<8 | uint64(b)
			}
			c.Clients = append(c.Clients, MovedClient{Client: id, Record: append([]byte(nil), v...)})
			size += 8 + len(v)
			ok = it.Next()
		case k[0] == prefixMeta:
			ok = it.SeekGE([]byte{prefixData})
		default:
			p, err := decodeCellKey(k)
			if err != nil {
				return MoveChunk{}, err
			}
			t := byID[p.table]
			var f *family
			if t != nil {
				f = t.familyByID(p.family)
			}
			if f == nil || !r.Contains(ring.Hash(p.row)) {
				ok = it.SeekGE(escapedEnd(rowPrefix(p.table, p.row)))
				continue
			}
			stored, err := it.ValueAndErr()
			if err != nil {
				return MoveChunk{}, err
			}
			version, v, err := p.cellValue(stored)
			if err != nil {
				return MoveChunk{}, err
			}
			c.Cells = append(c.Cells, MovedCell{Table: t.name, Family: f.name, Row: p.row, Qualifier: p.qual, Version: version, Value: append([]byte(nil), v...)})
			size += 32 + len(t.name) + len(f.name) + len(p.row) + len(p.qual) + len(v)
			ok = it.Next()
		}
		if len(c.Cells) >= MaxMovedCells || len(c.Clients) >= MaxMovedClients {
			c.Next = append([]byte(nil), last...)
			return c, it.Error()
		}
	}
	if err := it.Error(); err != nil {
		return MoveChunk{}, err
	}
	c.Done = true
	return c, nil
}

// MoveStep proposes one move operation (OpFence, OpIngest, OpSeal,
// OpDropRange) through this RG's log and returns once this member has
// applied it. Errors are gRPC statuses: NotLeader and the like as for
// writes, AlreadyExists for an ingest of a sealed move,
// FailedPrecondition for a drop of a range the move has not fenced.
func (s *Service) MoveStep(ctx context.Context, op Op, mv *MoveOp) error {
	if !op.isMove() {
		return toStatus(invalidf("%v is not a move step", op))
	}
	_, err := s.write(ctx, &Mutation{Op: op, Move: mv})
	return moveStatus(err)
}

// ExportRange serves one page of a move's copy from this RG's leader
// (Store.ExportRange); FailedPrecondition if the move's fence has not
// applied here.
func (s *Service) ExportRange(ctx context.Context, move uint64, r ring.Range, after []byte, maxBytes int) (MoveChunk, error) {
	if err := s.read(ctx); err != nil {
		return MoveChunk{}, toStatus(err)
	}
	c, err := s.store.ExportRange(move, r, after, maxBytes)
	return c, moveStatus(err)
}

// Store is the RG's store (tests, and the node's checks).
func (s *Service) Store() *Store { return s.store }

func moveStatus(err error) error {
	switch {
	case errors.Is(err, ErrMoveSealed):
		return status.Error(codes.AlreadyExists, err.Error())
	case errors.Is(err, ErrNotFenced):
		return status.Error(codes.FailedPrecondition, err.Error())
	}
	return toStatus(err)
}

// readStore returns, before a read of row, the local store the fence
// check after the read consults: the one the read is about to be served
// from. Picking it before the read matters: the node's ring may move on
// during the read, and the store that served must be the one checked.
// The ring only moves forward, so the read is served from this store or
// from the range's newer owner (then a fence here refuses a good read,
// which the client retries). nil if no local replica owns row.
func (s *ShardedService) readStore(row []byte) *Store {
	svc, err := s.owner(row)
	if err != nil {
		return nil
	}
	return svc.store
}

// fencedRead checks, after a read of rows served from st, that no move
// had fenced them away by then: a read whose view includes the fence is
// refused, and one whose view precedes it saw the source's current rows.
func fencedRead(st *Store, rows ...[]byte) error {
	if st == nil {
		return nil
	}
	for _, row := range rows {
		if err := st.FencedRow(row); err != nil {
			return toStatus(err)
		}
	}
	return nil
}
