package wire

import (
	"bytes"
	"testing"
)

// Benchmarks for the per-request hot path; they report allocations so a
// regression shows up in benchstat.

func BenchmarkReadFrame(b *testing.B) {
	one := frame(&RequestHeader{Xid: 1, Type: OpGetData}, &PathWatchRequest{Path: "/bench/node-0000000001"})
	stream := bytes.Repeat(one, 1024)
	r := bytes.NewReader(stream)
	fr := NewFrameReader(r, 0)
	b.ReportAllocs()
	b.SetBytes(int64(len(one)))
	for i := 0; i < b.N; i++ {
		if r.Len() == 0 {
			r.Reset(stream)
		}
		if _, err := fr.ReadFrame(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeGetData(b *testing.B) {
	payload := encode(&PathWatchRequest{Path: "/bench/node-0000000001", Watch: true})
	var d Decoder
	var r PathWatchRequest
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		d.Reset(payload)
		if err := r.Decode(&d); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEncodeGetDataReply(b *testing.B) {
	resp := GetDataResponse{Data: make([]byte, 100), Stat: sampleStat}
	var e Encoder
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		e.Reset()
		s := e.BeginFrame()
		h := ReplyHeader{Xid: int32(i), Zxid: 42}
		h.Encode(&e)
		resp.Encode(&e)
		e.EndFrame(s)
	}
}

func BenchmarkDecodeMulti(b *testing.B) {
	payload := encode(sampleMultiRequest())
	var d Decoder
	var m MultiRequest
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		d.Reset(payload)
		if err := m.Decode(&d); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEncodeMultiResponse(b *testing.B) {
	m := sampleMultiResponse()
	var e Encoder
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		e.Reset()
		m.Encode(&e)
	}
}
