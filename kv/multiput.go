package kv

import (
	"context"
	"errors"
	"sync"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	kvpb "github.com/corral-db/corral/api/kv/v1"
)

// MaxMultiPut bounds the puts of one MultiPut.
const MaxMultiPut = 1000

// MultiPut answers each put as Put would, with its own outcome, and
// proposes them together (Group.ProposeAll). A member that does not lead
// answers the whole call NotLeader (the client redirects it in one round
// trip, as a Put's).
func (s *Service) MultiPut(ctx context.Context, req *kvpb.MultiPutRequest) (*kvpb.MultiPutResponse, error) {
	if err := checkMultiPut(req); err != nil {
		return nil, toStatus(err)
	}
	if self, l := s.group.Leader(); !self {
		return nil, toStatus(s.notLeader(l))
	}
	return s.proposeAll(ctx, req.GetPuts()), nil
}

// proposeAll proposes the puts together, in chunks: a chunk takes
// in-flight slots while there are free ones (waiting only for its
// first), so that a MultiPut never holds slots while it waits for more.
func (s *Service) proposeAll(ctx context.Context, puts []*kvpb.PutRequest) *kvpb.MultiPutResponse {
	out := make([]*kvpb.PutOutcome, len(puts))
	for next := 0; next < len(puts); {
		var ws []pendingWrite
		var at []int
		for ; next < len(puts); next++ {
			w, err := s.prepare(ctx, putMutation(puts[next]), len(ws) == 0)
			if errors.Is(err, errInflightFull) {
				break // propose what is prepared; next waits in the next chunk
			}
			if err != nil {
				out[next] = putOutcome(nil, toStatus(err))
				continue
			}
			ws, at = append(ws, w), append(at, next)
		}
		if len(ws) == 0 {
			continue
		}
		datas := make([][]byte, len(ws))
		for i, w := range ws {
			datas[i] = w.data
		}
		errs := s.group.ProposeAll(ctx, datas)
		for i, w := range ws {
			r, err := s.finish(ctx, w, errs[i])
			if err != nil {
				out[at[i]] = putOutcome(nil, toStatus(err))
			} else {
				out[at[i]] = putOutcome(&kvpb.PutResponse{Version: r.CellVersion()}, nil)
			}
		}
	}
	return &kvpb.MultiPutResponse{Outcomes: out}
}

// MultiPut runs each put as Put would: each row goes to its owner, and a
// put this node cannot take gets its own WrongRange or NotLeader
// outcome. The puts of a local RG this node leads are proposed together
// (Service.proposeAll), the others one by one.
func (s *ShardedService) MultiPut(ctx context.Context, req *kvpb.MultiPutRequest) (*kvpb.MultiPutResponse, error) {
	if err := checkMultiPut(req); err != nil {
		return nil, toStatus(err)
	}
	puts := req.GetPuts()
	out := make([]*kvpb.PutOutcome, len(puts))
	led := make(map[*Service][]int)
	var wg sync.WaitGroup
	for i, p := range puts {
		if svc, err := s.owner(p.GetRow()); err == nil {
			if self, _ := svc.group.Leader(); self {
				led[svc] = append(led[svc], i)
				continue
			}
		}
		// Another RG's row, or one this node follows: Put's path
		// (forwarding, or its routing error), each waiting on its own.
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i] = putOutcome(s.Put(ctx, p))
		}()
	}
	for svc, at := range led {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sub := make([]*kvpb.PutRequest, len(at))
			for j, i := range at {
				sub[j] = puts[i]
			}
			for j, o := range svc.proposeAll(ctx, sub).GetOutcomes() {
				out[at[j]] = o
			}
		}()
	}
	wg.Wait()
	return &kvpb.MultiPutResponse{Outcomes: out}, nil
}

func checkMultiPut(req *kvpb.MultiPutRequest) error {
	if n := len(req.GetPuts()); n > MaxMultiPut {
		return invalidf("multi-put of %d puts exceeds %d", n, MaxMultiPut)
	}
	return nil
}

// putOutcome is a Put's answer as a MultiPut outcome: the response, or
// the status error's code, message and NotLeader or WrongRange detail.
// An error whose status reads OK (an error type's GRPCStatus may say so)
// is Unknown: an outcome with code 0 and no response would read as a
// success the put may not have had.
func putOutcome(resp *kvpb.PutResponse, err error) *kvpb.PutOutcome {
	if err == nil {
		return &kvpb.PutOutcome{Response: resp}
	}
	st := status.Convert(err)
	code := st.Code()
	if code == codes.OK {
		code = codes.Unknown
	}
	o := &kvpb.PutOutcome{Code: uint32(code), Message: st.Message()}
	for _, d := range st.Details() {
		switch d := d.(type) {
		case *kvpb.NotLeader:
			o.NotLeader = d
		case *kvpb.WrongRange:
			o.WrongRange = d
		}
	}
	return o
}
