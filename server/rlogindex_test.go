package server

import (
	"math/rand/v2"
	"testing"

	"github.com/corral-db/corral/rlog/datalog"
)

// TestRecIndexModel drives the index and a map side by side through
// appends in order, segment changes, gaps, zxids written again (a new
// run), releases and compactions, and checks every lookup and the list
// of live records against the map.
func TestRecIndexModel(t *testing.T) {
	for seed := range uint64(8) {
		rng := rand.New(rand.NewPCG(seed, 1))
		var x recIndex
		model := map[int64]rec{}
		var zxids []int64 // every zxid ever added
		zxid := int64(1 << 32)
		pos := datalog.Pos{Seg: 1, Off: 32}
		check := func(step int) {
			t.Helper()
			if x.live != len(model) {
				t.Fatalf("seed %d step %d: %d live, model %d", seed, step, x.live, len(model))
			}
			for _, z := range zxids {
				got, ok := x.find(z)
				want, wok := model[z]
				if ok != wok || got != want {
					t.Fatalf("seed %d step %d: find(%d) = %+v %v, want %+v %v", seed, step, z, got, ok, want, wok)
				}
			}
			var all []rec
			x.all(func(r rec) { all = append(all, r) })
			if len(all) != len(model) {
				t.Fatalf("seed %d step %d: all gives %d records, model %d", seed, step, len(all), len(model))
			}
			for _, r := range all {
				if model[r.zxid] != r {
					t.Fatalf("seed %d step %d: all gives %+v, model %+v", seed, step, r, model[r.zxid])
				}
			}
		}
		for step := range 3000 {
			switch k := rng.IntN(100); {
			case k < 70: // an append
				zxid += 1 + int64(rng.IntN(3)*rng.IntN(300))
				n := 1025 + rng.IntN(3)*rng.IntN(70000)
				if rng.IntN(50) == 0 {
					pos = datalog.Pos{Seg: pos.Seg + 1, Off: 32}
				}
				if rng.IntN(80) == 0 {
					pos.Off += 100 // a gap: a record the index did not see
				}
				x.add(zxid, pos, n)
				model[zxid] = rec{zxid: zxid, pos: pos, n: n}
				zxids = append(zxids, zxid)
				pos.Off += datalog.RecordSize(n)
			case k < 73 && len(zxids) > 0: // an older zxid written again
				z := zxids[rng.IntN(len(zxids))]
				if old, ok := model[z]; ok {
					if r, ok := x.release(z); !ok || r != old {
						t.Fatalf("seed %d: release of a live %d: %+v %v", seed, z, r, ok)
					}
				}
				n := 2000 + rng.IntN(100)
				x.add(z, pos, n)
				model[z] = rec{zxid: z, pos: pos, n: n}
				pos.Off += datalog.RecordSize(n)
			case k < 95 && len(zxids) > 0: // a release, live or not
				z := zxids[rng.IntN(len(zxids))]
				r, ok := x.release(z)
				want, wok := model[z]
				if ok != wok || r != want {
					t.Fatalf("seed %d step %d: release(%d) = %+v %v, want %+v %v", seed, step, z, r, ok, want, wok)
				}
				delete(model, z)
				if _, again := x.release(z); again {
					t.Fatalf("seed %d: %d released twice", seed, z)
				}
			default:
				x.compact()
			}
			if step%100 == 0 {
				check(step)
			}
		}
		check(-1)
		x.compact()
		check(-2)
	}
}

// TestRecIndexBytesPerRecord: equal-size appends in order cost a few
// bytes each, and releasing them gives the memory back.
func TestRecIndexBytesPerRecord(t *testing.T) {
	var x recIndex
	const n = 100_000
	pos := datalog.Pos{Seg: 1, Off: 32}
	for i := range n {
		if i%1000 == 0 {
			pos = datalog.Pos{Seg: pos.Seg + 1, Off: 32}
		}
		x.add(int64(1<<32+2*i), pos, 64<<10)
		pos.Off += datalog.RecordSize(64 << 10)
	}
	per := float64(x.bytes()) / n
	t.Logf("%d records: %d bytes, %.2f per record", n, x.bytes(), per)
	if per > 4 {
		t.Fatalf("%.2f bytes per record, want at most 4", per)
	}
	for i := range n - 1 {
		if _, ok := x.release(int64(1<<32 + 2*i)); !ok {
			t.Fatalf("release %d", i)
		}
	}
	x.compact()
	if b := x.bytes(); b > 1024 || x.live != 1 {
		t.Fatalf("%d bytes, %d live after releasing all but one", b, x.live)
	}
}

// TestDeadQueue: records come out in order, only those removed at or
// before the bound, and a pair costs a few bytes.
func TestDeadQueue(t *testing.T) {
	var q deadQueue
	type pair struct{ at, zxid int64 }
	var want []pair
	rng := rand.New(rand.NewPCG(3, 4))
	at := int64(1 << 32)
	for i := range 10_000 {
		at += int64(rng.IntN(3)) // a multi removes several at one zxid
		z := int64(1<<32) + int64(rng.IntN(1<<20))
		if i%10 != 0 {
			z = want[len(want)-1].zxid + 1 // a trim: consecutive entries
		}
		q.push(at, z)
		want = append(want, pair{at, z})
	}
	if per := float64(len(q.enc)) / float64(len(want)); per > 4 {
		t.Errorf("%.1f bytes per queued record", per)
	}
	for len(want) > 0 {
		upTo := want[min(rng.IntN(2000), len(want)-1)].at
		var got []int64
		q.popUpTo(upTo, func(z int64) { got = append(got, z) })
		k := 0
		for k < len(want) && want[k].at <= upTo {
			k++
		}
		if len(got) != k {
			t.Fatalf("popUpTo(%d): %d records, want %d", upTo, len(got), k)
		}
		for i, z := range got {
			if z != want[i].zxid {
				t.Fatalf("popUpTo(%d): record %d is %d, want %d", upTo, i, z, want[i].zxid)
			}
		}
		want = want[k:]
		if q.n != len(want) {
			t.Fatalf("%d queued, want %d", q.n, len(want))
		}
	}
	q.popUpTo(at+10, func(int64) { t.Fatal("popped from an empty queue") })
	q.push(at+5, 77)
	var got []int64
	q.popUpTo(at+4, func(z int64) { got = append(got, z) })
	q.popUpTo(at+5, func(z int64) { got = append(got, z) })
	if len(got) != 1 || got[0] != 77 {
		t.Fatalf("after emptying: %v", got)
	}
}
