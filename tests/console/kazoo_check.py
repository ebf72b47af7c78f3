"""Reads a znode with kazoo, for the console's browser tests.

usage: kazoo_check.py HOSTS get PATH
prints "absent" when the node does not exist, else "present <data as UTF-8>".
"""
import sys

from kazoo.client import KazooClient
from kazoo.exceptions import NoNodeError


def main():
    hosts, cmd, path = sys.argv[1], sys.argv[2], sys.argv[3]
    if cmd != "get":
        sys.exit("unknown command " + cmd)
    zk = KazooClient(hosts=hosts, timeout=10)
    zk.start(timeout=20)
    try:
        zk.sync(path)
        data, _ = zk.get(path)
        print("present " + data.decode("utf-8"))
    except NoNodeError:
        print("absent")
    finally:
        zk.stop()
        zk.close()


if __name__ == "__main__":
    main()
