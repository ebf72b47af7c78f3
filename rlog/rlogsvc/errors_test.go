package rlogsvc

import (
	"fmt"
	"testing"

	"github.com/corral-db/corral/rlog"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestUnavailableMarks: a server that did nothing (not the leader, no
// session) answers Unavailable marked not applied, so a client may send
// any request elsewhere; one that lost its session while a write was out
// answers Unavailable unmarked (its outcome is unknown; a client goes
// elsewhere knowing that); anything else unexpected is Internal.
func TestUnavailableMarks(t *testing.T) {
	for _, tc := range []struct {
		err        error
		code       codes.Code
		notApplied bool
	}{
		{fmt.Errorf("%w: no session", rlog.ErrUnavailable), codes.Unavailable, true},
		{rlog.ErrNotLeader, codes.Unavailable, true},
		{fmt.Errorf("%w: zk: connection loss", rlog.ErrSessionLost), codes.Unavailable, false},
		{fmt.Errorf("something else"), codes.Internal, false},
	} {
		err := toStatus(tc.err)
		if got := status.Code(err); got != tc.code || NotApplied(err) != tc.notApplied {
			t.Errorf("%v: %v (not applied %v), want %v (not applied %v)", tc.err, got, NotApplied(err), tc.code, tc.notApplied)
		}
	}
}
