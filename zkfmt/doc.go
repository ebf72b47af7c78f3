// Package zkfmt reads and writes Apache ZooKeeper 3.9's on-disk formats:
// snapshots (FileSnap) and transaction logs (FileTxnLog). It is pure
// encoding and decoding, with no knowledge of corral's own files; package
// migrate converts between the two.
//
// All integers are big-endian, as jute's BinaryOutputArchive writes them.
// Strings and buffers are a 4-byte length (-1 for null) and the bytes;
// vectors are a 4-byte count (-1 for null) and the elements.
//
// # Snapshots
//
// A snapshot file, version-2/snapshot.<zxid in hex>, is
//
//	FileHeader   magic "ZKSN" | version 2 | dbid (int64)
//	sessions     count | count × (id int64, timeout int32)
//	ACL cache    count | count × (ref int64, vector<ACL>)
//	nodes        (path string, DataNode) ... until the path "/"; the root's
//	             path is "" and nodes come parent first
//	             DataNode: data buffer | acl ref int64 | StatPersisted
//	seal         Adler-32 of every byte so far (int64) | the string "/"
//	digest       zxid int64 | digest version int32 | digest int64 (a hex
//	             string before version 2), then another seal
//	lastZxid     int64, then another seal (3.9's serializeLastProcessedZxid)
//
// The digest and lastZxid sections are optional: ZooKeeper stops reading
// at the end of the file. The whole file may be gzip-compressed
// (snapshot.<zxid>.gz) or snappy-compressed (.snappy) when ZooKeeper ran
// with zookeeper.snapshot.compression.method; gzip is read here, snappy is
// refused with an error that says so.
//
// ACL ref -1 is OPEN_ACL_UNSAFE without a cache entry; any other ref must
// be in the cache.
//
// # Transaction logs
//
// A log file, version-2/log.<zxid of its first record>, is
//
//	FileHeader   magic "ZKLG" | version 2 | dbid 0
//	records      checksum int64 (Adler-32 of the bytes) | bytes (buffer) | 'B'
//
// and then zeros up to the preallocated size: a record of length 0 ends the
// file, as does a record cut short (a crash during its write). The bytes
// are a TxnHeader (clientId, cxid, zxid, time, type), the type's record
// (CreateTxn, SetDataTxn, ... MultiTxn) and, since 3.6, an optional
// TxnDigest. DecodeTxn turns them into corral's txn.Header and txn.Txn,
// which mirror ZooKeeper's fields.
//
// Every decoder bounds each length by the bytes that actually arrive (a
// corrupt length cannot make it allocate more than the input's size) and
// never panics on input; the fuzz targets in this package check that.
package zkfmt
