package kvclient

import (
	"testing"

	"google.golang.org/protobuf/proto"

	kvpb "github.com/corral-db/corral/api/kv/v1"
)

// TestWithIDCopiesEveryField checks that the request sent carries every
// field the caller set and a request id, and that the caller's request
// is left without one.
func TestWithIDCopiesEveryField(t *testing.T) {
	var l lanes
	req := &kvpb.CheckAndPutRequest{Table: "t", Row: []byte("r"),
		Cells:     []*kvpb.Cell{{Family: "f", Qualifier: []byte("q"), Value: []byte("v")}},
		Condition: &kvpb.Condition{Family: "f", Qualifier: []byte("q"), Value: []byte("old")}}
	orig := proto.Clone(req)
	sent, done := withID(&l, req)
	defer done()
	if req.RequestId != nil || !proto.Equal(req, orig) {
		t.Fatalf("the caller's request changed: %v", req)
	}
	if sent.GetRequestId().GetClient() == 0 || sent.GetRequestId().GetSequence() == 0 {
		t.Fatalf("no request id: %v", sent)
	}
	sent.RequestId = nil
	if !proto.Equal(sent, orig) {
		t.Fatalf("sent %v, want the fields of %v", sent, orig)
	}
}
