package rlog

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// Anchors are the machine's limits measured in the run, against which
// every throughput is read.
type Anchors struct {
	// DiskMBps is sequential write + fdatasync of Size-byte blocks into
	// one preallocated file in the work directory (dd oflag=dsync, with
	// fdatasync), MB/s (10^6 bytes).
	DiskMBps   float64 `json:"disk_mbps"`
	DiskBlocks int64   `json:"disk_blocks"`
	BlockSize  int     `json:"block_size"`
	// LoopbackMBps is one TCP stream over 127.0.0.1 with Size-byte
	// writes, MB/s.
	LoopbackMBps float64 `json:"loopback_mbps"`
	// BySize is the disk anchor at every append size of the sweep (and
	// Size): each size's ceiling is its own disk bandwidth ÷ members.
	BySize []DiskAnchor `json:"by_size,omitempty"`
	// Members write the same disk: the ceiling of replicated appends.
	Members     int     `json:"members"`
	CeilingMBps float64 `json:"ceiling_mbps"`
}

// DiskAnchor is the disk anchor at one block size.
type DiskAnchor struct {
	Block  int     `json:"block"`
	MBps   float64 `json:"mbps"`
	Blocks int64   `json:"blocks"`
}

// DiskAt is the disk bandwidth measured at block bytes: BySize's entry,
// else DiskMBps.
func (a *Anchors) DiskAt(block int) float64 {
	for _, d := range a.BySize {
		if d.Block == block {
			return d.MBps
		}
	}
	return a.DiskMBps
}

// Ceiling is the replicated appends' ceiling on one machine: every one
// of members writes every byte to the same disk.
func Ceiling(diskMBps float64, members int) float64 {
	if members < 1 {
		return 0
	}
	return diskMBps / float64(members)
}

// Fraction is v as a fraction of ceiling; 0 without a ceiling.
func Fraction(v, ceiling float64) float64 {
	if ceiling <= 0 {
		return 0
	}
	return v / ceiling
}

// MBps is bytes over d in MB/s (10^6 bytes per second).
func MBps(bytes int64, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(bytes) / 1e6 / d.Seconds()
}

// anchorFileBytes and anchorMaxBlocks bound the disk anchor's file (it
// is zero-filled first, so small blocks get a small file): the anchor
// ends early when the file is full.
const (
	anchorFileBytes = 256 << 20
	anchorMaxBlocks = 16384
)

// DiskBandwidth writes block-sized records into a preallocated file
// under dir, fdatasyncing each, for d (or until the file is full), and
// returns the MB/s and the blocks written. The file is removed.
func DiskBandwidth(ctx context.Context, dir string, block int, d time.Duration) (float64, int64, error) {
	return diskBandwidth(ctx, dir, block, d, min(anchorFileBytes, int64(block)*anchorMaxBlocks))
}

// diskBandwidth is DiskBandwidth with a file of at most fileBytes (at
// least one block).
func diskBandwidth(ctx context.Context, dir string, block int, d time.Duration, fileBytes int64) (float64, int64, error) {
	if block < 1 {
		return 0, 0, errors.New("disk anchor: block size must be positive")
	}
	f, err := os.CreateTemp(dir, "disk-anchor-")
	if err != nil {
		return 0, 0, err
	}
	defer os.Remove(f.Name())
	defer f.Close()
	size := fileBytes / int64(block) * int64(block)
	if size == 0 {
		size = int64(block)
	}
	// Preallocated and synced as a log segment is, so each fdatasync
	// writes data, not the file's size.
	if err := zeroFill(f, size); err != nil {
		return 0, 0, fmt.Errorf("disk anchor: %w", err)
	}
	buf := make([]byte, block)
	for i := range buf {
		buf[i] = byte(i*7 + 1)
	}
	var n int64
	start := time.Now()
	for off := int64(0); off+int64(block) <= size && time.Since(start) < d && ctx.Err() == nil; off += int64(block) {
		if _, err := f.WriteAt(buf, off); err != nil {
			return 0, n, fmt.Errorf("disk anchor: %w", err)
		}
		if err := syscall.Fdatasync(int(f.Fd())); err != nil {
			return 0, n, fmt.Errorf("disk anchor: %w", err)
		}
		n++
	}
	return MBps(n*int64(block), time.Since(start)), n, ctx.Err()
}

// zeroFill writes size zero bytes to f and syncs it, in 1 MiB writes.
func zeroFill(f *os.File, size int64) error {
	z := make([]byte, 1<<20)
	for off := int64(0); off < size; {
		n := min(int64(len(z)), size-off)
		if _, err := f.WriteAt(z[:n], off); err != nil {
			return err
		}
		off += n
	}
	return f.Sync()
}

// LoopbackBandwidth sends chunk-sized writes over one TCP connection on
// 127.0.0.1 for d and returns the MB/s the receiver read.
func LoopbackBandwidth(ctx context.Context, chunk int, d time.Duration) (float64, error) {
	if chunk < 1 {
		return 0, errors.New("loopback anchor: chunk size must be positive")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	type result struct {
		n   int64
		err error
	}
	got := make(chan result, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			got <- result{err: err}
			return
		}
		defer c.Close()
		n, err := io.Copy(io.Discard, c)
		got <- result{n, err}
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		return 0, err
	}
	buf := make([]byte, chunk)
	start := time.Now()
	for time.Since(start) < d && ctx.Err() == nil {
		if _, err := c.Write(buf); err != nil {
			c.Close()
			return 0, fmt.Errorf("loopback anchor: %w", err)
		}
	}
	c.Close()
	r := <-got
	el := time.Since(start)
	if r.err != nil {
		return 0, fmt.Errorf("loopback anchor: %w", r.err)
	}
	return MBps(r.n, el), nil
}

// anchorDir is where the disk anchor writes: the run's directory, on the
// disk the members' data directories share.
func anchorDir(run string) string { return filepath.Join(run, "anchor") }
