package apisrv

import (
	"fmt"

	"google.golang.org/grpc/encoding"
	protoenc "google.golang.org/grpc/encoding/proto"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/proto"
)

// codec is gRPC's proto codec with requests decoded from buffers of a
// pool whose tiers fit them. gRPC's own codec gathers a request that
// arrived in several HTTP/2 frames into a buffer of its default pool,
// whose tiers are 256 B, 4, 16 and 32 KiB and 1 MiB and which zeroes a
// buffer on every Get: a request of a little over 32 KiB (a 64 KiB log
// append, a large key-value batch) took, and cleared, 1 MiB, which was
// the largest CPU cost of an append on the member that received it.
// Here every power of two from 32 KiB up to 8 MiB is a tier, so a buffer
// is at most twice its request. Replies are encoded by gRPC's codec.
type codec struct{}

// recvPool holds the buffers requests are gathered into.
var recvPool = func() mem.BufferPool {
	p, err := mem.NewBinaryTieredBufferPool(8, 12, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23)
	if err != nil {
		return mem.DefaultBufferPool() // only where 2^23 does not fit an int
	}
	return p
}()

func (codec) Name() string { return protoenc.Name }

func (codec) Marshal(v any) (mem.BufferSlice, error) {
	return encoding.GetCodecV2(protoenc.Name).Marshal(v)
}

func (codec) Unmarshal(data mem.BufferSlice, v any) error {
	m, ok := v.(proto.Message)
	if !ok {
		return fmt.Errorf("apisrv: cannot decode into %T: not a proto message", v)
	}
	buf := data.MaterializeToBuffer(recvPool)
	defer buf.Free()
	return proto.Unmarshal(buf.ReadOnlyData(), m)
}
