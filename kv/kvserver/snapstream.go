package kvserver

// A group's SNAP streams its pebble checkpoint (replica/snapstream): the
// driver attaches a header, the leader writes the checkpoint
// (kv.Store.WriteSnapshot) in pieces of streamPiece bytes ahead of the
// SNAP, and the learner spools them in its directory (snap.spool) and
// installs from the spool (notifyingSM.InstallSnapshot). Neither side
// holds the image in memory, no transport frame carries it whole, and the
// leader's node loop no longer writes the checkpoint itself.
const streamPiece = 4 << 20
