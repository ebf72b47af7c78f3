// Package snapstream sends a SNAP's image in pieces ahead of it, so that
// neither the leader nor the learner holds the image in memory and no
// transport frame carries it whole. It runs beside a replica.Driver,
// in its owner's Env.Send and in the owner's handling of the messages
// it receives; the driver and zab see a SNAP whose image is a header.
//
// Leader: the owner's Env.SnapshotImage returns Header(body) at once. In
// Env.Send, Sender.Route holds that SNAP and every later message to the
// learner and starts a goroutine that calls Produce, which writes the
// image as pieces (Piece builds each piece's message), waiting while the
// link's backlog is over MaxBacklog and telling the learner that the
// sync moves (zab.MsgSyncProgress), since zab sees none of the pieces.
// At the end the SNAP's header gets the stream's id and piece count, and
// the held messages leave in order: on a FIFO link every piece arrives
// before the SNAP. A new session's SNAP to the same learner abandons the
// old stream, as does a hold past MaxHold.
//
// Learner: the owner stores each piece as it arrives (Receiver.Piece:
// in order, one stream at a time), and before the driver steps a SNAP
// with a header, Receiver.Complete says whether every piece of that
// stream was stored; if not, the owner strips the snapshot from the
// message and zab opens a new session (learnerSync's "SNAP without a
// snapshot"), whose sync streams again. The owner's InstallSnapshot
// reads the image from where it stored the pieces.
package snapstream
