package wire

// Op is a request type (ZooDefs.OpCode). Transaction types in the log reuse
// these numbers, as ZooKeeper does.
type Op int32

const (
	OpNotification         Op = 0
	OpCreate               Op = 1
	OpDelete               Op = 2
	OpExists               Op = 3
	OpGetData              Op = 4
	OpSetData              Op = 5
	OpGetACL               Op = 6
	OpSetACL               Op = 7
	OpGetChildren          Op = 8
	OpSync                 Op = 9
	OpPing                 Op = 11
	OpGetChildren2         Op = 12
	OpCheck                Op = 13
	OpMulti                Op = 14
	OpCreate2              Op = 15
	OpReconfig             Op = 16
	OpCheckWatches         Op = 17
	OpRemoveWatches        Op = 18
	OpCreateContainer      Op = 19
	OpDeleteContainer      Op = 20
	OpCreateTTL            Op = 21
	OpMultiRead            Op = 22
	OpAuth                 Op = 100
	OpSetWatches           Op = 101
	OpSASL                 Op = 102
	OpGetEphemerals        Op = 103
	OpGetAllChildrenNumber Op = 104
	OpSetWatches2          Op = 105
	OpAddWatch             Op = 106
	OpWhoAmI               Op = 107
	OpCreateSession        Op = -10
	OpCloseSession         Op = -11
	OpError                Op = -1
)

// Special xids.
const (
	XidNotification int32 = -1
	XidPing         int32 = -2
	XidAuth         int32 = -4
	XidSetWatches   int32 = -8
)

// Watcher event types (Watcher.Event.EventType).
const (
	EventNone                   int32 = -1
	EventNodeCreated            int32 = 1
	EventNodeDeleted            int32 = 2
	EventNodeDataChanged        int32 = 3
	EventNodeChildrenChanged    int32 = 4
	EventDataWatchRemoved       int32 = 5
	EventChildWatchRemoved      int32 = 6
	EventPersistentWatchRemoved int32 = 7
)

// Keeper states (Watcher.Event.KeeperState).
const (
	StateDisconnected      int32 = 0
	StateSyncConnected     int32 = 3
	StateAuthFailed        int32 = 4
	StateConnectedReadOnly int32 = 5
	StateSaslAuthenticated int32 = 6
	StateExpired           int32 = -112
	StateClosed            int32 = 7
)

// Watcher types for checkWatches / removeWatches.
const (
	WatcherChildren            int32 = 1
	WatcherData                int32 = 2
	WatcherAny                 int32 = 3
	WatcherPersistent          int32 = 4
	WatcherPersistentRecursive int32 = 5
)

// AddWatch modes.
const (
	AddWatchPersistent          int32 = 0
	AddWatchPersistentRecursive int32 = 1
)

// Create modes (CreateMode flags).
const (
	ModePersistent                  int32 = 0
	ModeEphemeral                   int32 = 1
	ModePersistentSequential        int32 = 2
	ModeEphemeralSequential         int32 = 3
	ModeContainer                   int32 = 4
	ModePersistentWithTTL           int32 = 5
	ModePersistentSequentialWithTTL int32 = 6
)
