package cli

import (
	"strings"

	"github.com/corral-db/corral/client"
	"github.com/corral-db/corral/wire"
)

// parseACL reads zkCli's ACL syntax: comma-separated scheme:id:perms,
// split at the first and the last colon (so digest ids, which contain a
// colon, need no quoting): world:anyone:cdrwa, digest:user:hash:rw,
// auth::cdrwa, ip:10.0.0.0/8:r. zkCli skips a malformed entry or letter
// with a warning and sends the rest; here it is a usage error, because
// silently sending a narrower ACL than asked is worse than refusing.
func parseACL(s string) ([]client.ACL, error) {
	var acl []client.ACL
	for _, entry := range strings.Split(s, ",") {
		first, last := strings.IndexByte(entry, ':'), strings.LastIndexByte(entry, ':')
		if first < 0 || first == last {
			return nil, usagef(entry + " does not have the form scheme:id:perm")
		}
		perms, err := parsePerms(entry[last+1:])
		if err != nil {
			return nil, err
		}
		acl = append(acl, client.ACL{
			Perms: perms,
			ID:    client.ID{Scheme: entry[:first], ID: entry[first+1 : last]},
		})
	}
	return acl, nil
}

// parsePerms reads permission letters (any order, any subset of cdrwa).
func parsePerms(s string) (int32, error) {
	var perms int32
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case 'r':
			perms |= wire.PermRead
		case 'w':
			perms |= wire.PermWrite
		case 'c':
			perms |= wire.PermCreate
		case 'd':
			perms |= wire.PermDelete
		case 'a':
			perms |= wire.PermAdmin
		default:
			return 0, usagef("Unknown perm type: " + s[i:i+1])
		}
	}
	return perms, nil
}
