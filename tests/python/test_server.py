"""Four-letter words as kazoo reads them."""

import re


def test_ruok(zk):
    assert zk.command(b"ruok") == "imok"


def test_server_version_parses_envi(zk, target):
    version = zk.server_version()
    assert isinstance(version, tuple) and len(version) >= 2
    assert all(isinstance(v, int) for v in version)
    if target.kind == "zookeeper":
        assert version == (3, 9, 3)


def test_srvr_and_mntr_shapes(zk, server):
    srvr = zk.command(b"srvr")
    assert re.search(r"^Mode: standalone$", srvr, re.M), srvr
    assert re.search(r"^Zxid: 0x[0-9a-f]+$", srvr, re.M), srvr
    assert re.search(r"^Node count: \d+$", srvr, re.M), srvr
    # mntr can exceed kazoo's single 8 KiB read, so read it to EOF here.
    mntr = server.four_letter("mntr")
    lines = mntr.rstrip("\n").split("\n")
    # Keys are zk_<name>; ZooKeeper also adds per-top-level-znode summaries
    # (zk_avg_<node>_read_per_namespace ...) whose names carry the node's
    # own characters, so only the prefix and the tab are fixed.
    bad = [line for line in lines if not re.match(r"^zk_[^\t]+\t[^\t]*$", line)]
    assert not bad, bad
    keys = dict(line.split("\t", 1) for line in lines)
    assert keys["zk_server_state"] == "standalone"
    assert int(keys["zk_num_alive_connections"]) >= 1
