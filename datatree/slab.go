package datatree

import "unsafe"

// The tree allocates its nodes in slabs of slabNodes: an array of nodes is
// one heap object whose size (127 × 48 bytes, 6096 bytes) and the 8-byte
// header the runtime puts before an object of that size with pointers fit
// the allocator's 6144-byte size class, so a node costs its 48 bytes and
// a slab wastes 40 (a 128-node slab, 6144 bytes and the header, would take
// the 6528-byte class; 170 nodes would fill the 8 KiB class as well, but
// need a handle bit the arena's dead bit holds). The
// slabs also give the snapshot its walk: in slab order a snapshot visits
// the nodes in memory order, and a node never moves while it lives, so a
// walk that releases the lock between chunks visits every node that exists
// throughout it exactly once, without a separate list of the nodes and an
// index into it in every node.
//
// A slab whose nodes are all freed is released unless it is the only one
// with free slots (so one node created and deleted over and over at a
// slab's boundary does not allocate a slab each time). Like the runtime's
// own spans (64 objects of 128 bytes in 8 KiB), a slab with one live node
// stays whole: a tree that shrinks from a million nodes to a scattered few
// thousand keeps up to a slab for each.

const (
	slabNodes = 127
	// slotBits is the bits of a handle (nodeAlloc.handle) that hold the
	// node's slot in its slab.
	slotBits  = 7
	infoShift = 8
	infoChunk = 1 << infoShift
)

type slab [slabNodes]Node

// mallocHeader is the header the runtime allocates before each object
// larger than 512 bytes that holds pointers (the type's address).
const mallocHeader = 8

// slabClass is the allocator's size class a slab is allocated in.
const slabClass = 6144

// A slab and its malloc header must fit its size class (within 64 bytes,
// so the class is the smallest that fits), and handles must leave the
// arena's dead bit free.
var (
	_ [slabClass - mallocHeader - unsafe.Sizeof(slab{})]byte
	_ [64 - (slabClass - mallocHeader - unsafe.Sizeof(slab{}))]byte
	_ [1<<slotBits - slabNodes]byte
	_ [31 - slabBits - slotBits]byte
)

// slabInfo is one slab's bookkeeping.
type slabInfo struct {
	s    *slab // nil: released (the index is free for reuse)
	free *Node // free slots, linked through next
	used int32
	// partial is the slab's index in nodeAlloc.partial, -1 when the slab
	// is full or released.
	partial int32
}

// nodeAlloc hands out and takes back node slots.
type nodeAlloc struct {
	// slabs holds the slabs' bookkeeping in chunks of infoChunk, so that
	// adding a slab never copies more than the short list of chunks (a
	// flat slice would copy all of it, 600 KB at a million nodes, each
	// time it doubled).
	slabs [][]slabInfo
	n     int32 // slab indexes in use or spare
	// partial lists the slabs with free slots; new nodes come from the
	// last.
	partial []int32
	// spare lists released indexes of slabs, for the next new slab.
	spare []int32
	live  int // nodes allocated
	// ptrs is each slab by index (nil once released), for references:
	// resolving one (at) is on every step of a child-table chain, and a
	// flat slice is one load where the bookkeeping's chunks are three.
	// Growing it copies 8 bytes a slab (70 KB at a million nodes).
	ptrs []*slab
}

// alloc returns a zeroed node.
func (a *nodeAlloc) alloc() *Node {
	if len(a.partial) == 0 {
		a.grow()
	}
	si := a.partial[len(a.partial)-1]
	info := a.info(si)
	n := info.free
	info.free = a.node(n.next)
	n.next = 0
	info.used++
	a.live++
	if info.free == nil {
		a.partial = a.partial[:len(a.partial)-1]
		info.partial = -1
	}
	return n
}

// grow adds an empty slab to the partial list.
func (a *nodeAlloc) grow() {
	var si int32
	if k := len(a.spare); k > 0 {
		si = a.spare[k-1]
		a.spare = a.spare[:k-1]
	} else {
		if a.n == 1<<slabBits {
			// 2^31 nodes, 96 GiB of them: the process is out of
			// memory long before.
			panic("datatree: node slabs exhausted")
		}
		si = a.n
		a.n++
		if int(si>>infoShift) == len(a.slabs) {
			a.slabs = append(a.slabs, make([]slabInfo, infoChunk))
		}
		a.ptrs = append(a.ptrs, nil)
	}
	s := new(slab)
	for i := range s {
		s[i].slabTag = uint32(si)
		if i+1 < slabNodes {
			s[i].next = nodeRef(uint32(si)<<slotBits|uint32(i+1)) + 1
		}
	}
	*a.info(si) = slabInfo{s: s, free: &s[0], partial: int32(len(a.partial))}
	a.ptrs[si] = s
	a.partial = append(a.partial, si)
}

// release takes n back. The caller has unlinked it from everything; its
// fields are cleared so the slab keeps nothing else alive.
func (a *nodeAlloc) release(n *Node) {
	si := n.slab()
	info := a.info(si)
	*n = Node{slabTag: uint32(si), next: a.ref(info.free)}
	info.free = n
	info.used--
	a.live--
	if info.partial < 0 {
		info.partial = int32(len(a.partial))
		a.partial = append(a.partial, si)
	}
	if info.used == 0 && len(a.partial) > 1 {
		// Swap it out of the partial list and release it.
		i := info.partial
		last := a.partial[len(a.partial)-1]
		a.partial[i] = last
		a.info(last).partial = i
		a.partial = a.partial[:len(a.partial)-1]
		*info = slabInfo{partial: -1}
		a.ptrs[si] = nil
		a.spare = append(a.spare, si)
	}
}

// info returns the bookkeeping of slab si.
func (a *nodeAlloc) info(si int32) *slabInfo {
	return &a.slabs[si>>infoShift][si&(infoChunk-1)]
}

// slabAt returns slab si, nil if it is released; si must be below a.n.
func (a *nodeAlloc) slabAt(si int32) *slab { return a.info(si).s }

// handle is n's identity for as long as it lives, in 31 bits: its slab's
// index and its slot there. The arena's record headers hold it.
func (a *nodeAlloc) handle(n *Node) uint32 {
	si := n.slab()
	slot := (uintptr(unsafe.Pointer(n)) - uintptr(unsafe.Pointer(&a.info(si).s[0]))) / unsafe.Sizeof(Node{})
	return uint32(si)<<slotBits | uint32(slot)
}

// at returns the node of handle h (of a live node: its slab is held).
// The slot is below slabNodes for every handle handed out, so the node's
// address is computed without a bounds check.
func (a *nodeAlloc) at(h uint32) *Node {
	s := a.ptrs[h>>slotBits]
	return (*Node)(unsafe.Add(unsafe.Pointer(s), uintptr(h&(1<<slotBits-1))*unsafe.Sizeof(Node{})))
}

// nodeRef refers to a node of a nodeAlloc: its handle plus one, 0 for
// none.
type nodeRef uint32

// ref returns n's reference, 0 for nil.
func (a *nodeAlloc) ref(n *Node) nodeRef {
	if n == nil {
		return 0
	}
	return nodeRef(a.handle(n)) + 1
}

// node returns the node r refers to, nil for 0.
func (a *nodeAlloc) node(r nodeRef) *Node {
	if r == 0 {
		return nil
	}
	return a.at(uint32(r) - 1)
}

// isFree reports whether a slot holds no node.
func (n *Node) isFree() bool { return n.acl == 0 }
