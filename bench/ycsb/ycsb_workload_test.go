package ycsb

import (
	"strings"
	"testing"
)

// Every workload's chooser draws its operations in the workload file's
// proportions, keys among the records that exist, and E's scan lengths
// uniformly from 1 to 100.
func TestYCSBWorkloadMixes(t *testing.T) {
	want := map[string][ycsbOpKinds]float64{
		"A": {opRead: 0.5, opUpdate: 0.5},
		"B": {opRead: 0.95, opUpdate: 0.05},
		"C": {opRead: 1},
		"D": {opRead: 0.95, opInsert: 0.05},
		"E": {opScan: 0.95, opInsert: 0.05},
		"F": {opRead: 0.5, opRMW: 0.5},
		"S": {opRead: 0.95, opUpdate: 0.05},
	}
	dist := map[string]string{"A": "zipfian", "B": "zipfian", "C": "zipfian", "D": "latest", "E": "zipfian", "F": "zipfian", "S": "uniform"}
	const records = 1000
	for i, w := range YCSBWorkloads() {
		t.Run(w.Name, func(t *testing.T) {
			if w.Distribution != dist[w.Name] {
				t.Errorf("distribution %s, want %s", w.Distribution, dist[w.Name])
			}
			seq := newAckCounter(records)
			c := newYCSBChooser(w, records, seq, testRand(uint64(10+i)))
			var counts [ycsbOpKinds]int
			var scanSum, scans int64
			for range ycsbDraws {
				op := c.next()
				counts[op.Kind]++
				switch op.Kind {
				case opInsert:
					if op.Key < records {
						t.Fatalf("insert of existing key %d", op.Key)
					}
					seq.ack(op.Key)
				case opScan:
					if op.ScanLen < 1 || op.ScanLen > DefaultYCSBMaxScanLength {
						t.Fatalf("scan length %d outside [1, %d]", op.ScanLen, DefaultYCSBMaxScanLength)
					}
					scanSum += int64(op.ScanLen)
					scans++
				}
				if op.Kind != opInsert && (op.Key < 0 || op.Key > seq.last()) {
					t.Fatalf("%s of key %d, not in [0, %d]", op.Kind, op.Key, seq.last())
				}
			}
			for k, p := range want[w.Name] {
				within(t, ycsbOpKind(k).String()+" share", float64(counts[k])/ycsbDraws, p, 0.005)
			}
			if scans > 0 {
				within(t, "mean scan length", float64(scanSum)/float64(scans), 50.5, 0.5)
			}
			// Inserts advance the sequence that reads may use.
			if inserted := int64(counts[opInsert]); seq.last() != records-1+inserted {
				t.Errorf("last %d after %d inserts, want %d", seq.last(), inserted, records-1+inserted)
			}
		})
	}
}

// "latest" reads what D just inserted; uniform never looks past the loaded
// Records, as YCSB's uniform chooser.
func TestYCSBChooserDistributions(t *testing.T) {
	const records = 1000
	d, _ := ParseYCSBWorkloads("D", "", 0)
	seq := newAckCounter(records)
	c := newYCSBChooser(d[0], records, seq, testRand(20))
	var fresh, reads int
	for range ycsbDraws {
		op := c.next()
		if op.Kind == opInsert {
			seq.ack(op.Key)
			continue
		}
		reads++
		if op.Key >= records {
			fresh++
		}
	}
	// About 10000 inserts: 10x the loaded records, so with latest most
	// Reads hit inserted records.
	if share := float64(fresh) / float64(reads); share < 0.8 {
		t.Errorf("latest: %.2f of reads on inserted records, want most", share)
	}
	u, _ := ParseYCSBWorkloads("D", "uniform", 0)
	seq = newAckCounter(records)
	c = newYCSBChooser(u[0], records, seq, testRand(21))
	for range ycsbDraws {
		op := c.next()
		if op.Kind == opInsert {
			seq.ack(op.Key)
		} else if op.Key >= records {
			t.Fatalf("uniform read of inserted key %d", op.Key)
		}
	}
}

func TestYCSBRecordLayout(t *testing.T) {
	if ycsbRecordSize != 1000 || ycsbFieldCount != 10 || ycsbFieldLength != 100 {
		t.Fatalf("record %d bytes = %d fields × %d", ycsbRecordSize, ycsbFieldCount, ycsbFieldLength)
	}
	g := newYCSBBytes(1)
	rec := g.newRecord()
	if len(rec) != 1000 {
		t.Fatalf("record of %d bytes", len(rec))
	}
	// Fields tile the record in order.
	for i := range ycsbFieldCount {
		f := ycsbField(rec, i)
		if len(f) != 100 || &f[0] != &rec[i*100] {
			t.Errorf("field %d: %d bytes at the wrong place", i, len(f))
		}
	}
	for i, b := range rec {
		if b < ' ' || b > '~' {
			t.Fatalf("byte %d = %#x, not printable", i, b)
		}
	}
	// Refilling one field changes only that field.
	before := string(rec)
	g.fill(ycsbField(rec, 3))
	for i := range ycsbFieldCount {
		same := string(ycsbField(rec, i)) == before[i*100:(i+1)*100]
		if same != (i != 3) {
			t.Errorf("field %d changed = %v", i, !same)
		}
	}
	if got := string(appendYCSBKey(nil, "/ycsb/usertable", 0)); got != "/ycsb/usertable/user6284781860667377211" {
		t.Errorf("key 0 = %q", got)
	}
}

func TestParseYCSBWorkloads(t *testing.T) {
	ws, err := ParseYCSBWorkloads("a, E,s", "", 50)
	if err != nil {
		t.Fatal(err)
	}
	if len(ws) != 3 || ws[0].Name != "A" || ws[1].Name != "E" || ws[2].Name != "S" {
		t.Fatalf("got %+v", ws)
	}
	if ws[1].MaxScanLength != 50 || ws[0].MaxScanLength != 0 {
		t.Errorf("scan bound not applied to E only: %+v", ws)
	}
	ws, _ = ParseYCSBWorkloads("D,C", "uniform", 0)
	for _, w := range ws {
		if w.Distribution != "uniform" {
			t.Errorf("%s: distribution %s, want uniform", w.Name, w.Distribution)
		}
	}
	if m := YCSBWorkloads()[4].Mix(); m != "insert 0.05 scan 0.95 (scan length uniform 1..100)" {
		t.Errorf("E mix %q", m)
	}
	for _, bad := range []struct{ names, dist string }{{"G", ""}, {"", ""}, {",", ""}, {"A", "hotspot"}} {
		if _, err := ParseYCSBWorkloads(bad.names, bad.dist, 0); err == nil || !strings.Contains(err.Error(), "bench:") {
			t.Errorf("%q %q: err %v", bad.names, bad.dist, err)
		}
	}
	if _, err := ParseYCSBWorkloads("E", "", MaxYCSBScanLength+1); err == nil {
		t.Error("scan bound above the maximum accepted")
	}
}
