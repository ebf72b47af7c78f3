package probe

import "github.com/corral-db/corral/zab"

// MsgZxid is the zxid a message is about, to key its marks: its last
// entry's, else its commit's, else its Zxid field.
func MsgZxid(m zab.Message) int64 {
	switch {
	case len(m.Entries) > 0:
		return int64(m.Entries[len(m.Entries)-1].Zxid)
	case m.Commit != 0:
		return int64(m.Commit)
	}
	return int64(m.Zxid)
}
