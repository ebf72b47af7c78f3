// Package migrate tests corral's import-zookeeper and export-zookeeper on
// real processes: Apache ZooKeeper 3.9.3 writes a tree, corral serves it
// after the import, and ZooKeeper serves corral's tree after the export;
// every node's data, stat and ACL is compared as clients read them.
package migrate
