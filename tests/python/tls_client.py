"""kazoo over TLS, driven by tests/e2e/tls_test.go (which makes the
certificates and starts the server).

usage: tls_client.py HOSTS CA CERTFILE KEYFILE PATH X509_ID WAIT

Connects with use_ssl=True (CERTFILE and KEYFILE may be "-" for none),
prints "connected", creates PATH readable only by x509:X509_ID unless it
exists, and prints "read DATA" or "read error NAME". WAIT bounds the wait
for a connection, in seconds; exit status 3: none came.
"""

import sys

from kazoo.client import KazooClient
from kazoo.exceptions import NoAuthError, NodeExistsError
from kazoo.security import make_acl


def main():
    hosts, ca, certfile, keyfile, path, x509_id, wait = sys.argv[1:8]
    zk = KazooClient(hosts=hosts, timeout=10.0, use_ssl=True, verify_certs=True, ca=ca,
                     certfile=None if certfile == "-" else certfile,
                     keyfile=None if keyfile == "-" else keyfile)
    try:
        zk.start(timeout=float(wait))
    except Exception as e:  # kazoo raises its handler's timeout exception
        print("not connected: %r" % (e,))
        zk.close()
        return 3
    print("connected")
    try:
        zk.create(path, b"kazoo", acl=[make_acl("x509", x509_id, all=True)])
    except NodeExistsError:
        pass
    try:
        data, _ = zk.get(path)
        print("read " + data.decode())
    except NoAuthError:
        print("read error NOAUTH")
    zk.stop()
    zk.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
