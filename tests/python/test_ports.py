"""The harness's port picking: an ensemble's ports must be distinct,
below the ephemeral range, and held against other test processes."""

import fcntl
import os

from zkserver import _LOCK_DIR, _PORT_HIGH, _PORT_LOW, free_port, free_ports


def test_free_ports_are_distinct_across_calls():
    first = free_ports(60)
    assert len(set(first)) == 60
    more = free_ports(60) + [free_port() for _ in range(20)]
    assert len(set(more)) == 80
    assert not set(first) & set(more)
    assert all(_PORT_LOW <= p < _PORT_HIGH for p in first + more)


def test_a_handed_out_port_is_locked():
    port = free_port()
    with open(os.path.join(_LOCK_DIR, str(port)), "a+") as f:
        try:
            fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return
        raise AssertionError("port %d's lock file was not held" % port)
