// Package zktls turns ZooKeeper's TLS settings (the ssl.* and
// ssl.quorum.* keys of zoo.cfg, and the zookeeper.ssl.* system properties
// of its clients) into crypto/tls configurations, the way ZooKeeper's
// X509Util does for the JVM: key and trust stores in PEM, PKCS12 or JKS
// files (the type named or inferred from the file's extension), the
// protocol and its enabled versions, cipher suites, client certificate
// policy (none, want, need) and hostname verification.
//
// It also names a certificate's subject as ZooKeeper's x509 auth provider
// does (X500Principal.getName(), RFC 2253), which is the id of the x509
// ACL scheme.
//
// The package reads files only when Load is called; a Settings value is
// plain data that config.Parse fills and the server, the transport, the Go
// client and the CLI share.
package zktls
