"""The key-value API from another language with nothing but the published
.proto: generates a Python client from api/kv/v1/kv.proto with grpcio-tools
and does put/get/scan/check-and-put against a `corral kv ensemble`.
"""

import importlib
import os
import subprocess
import sys
import threading
import time

import grpc
import pytest
from grpc_tools import protoc

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MEMBERS = int(os.environ.get("CORRAL_KV_MEMBERS", "3"))


# google.rpc.Status, the grpc-status-details-bin trailer's message, by
# shape: only its field numbers matter for decoding.
STATUS_PROTO = """syntax = "proto3";
package corraltest.rpc;
import "google/protobuf/any.proto";
message Status {
  int32 code = 1;
  string message = 2;
  repeated google.protobuf.Any details = 3;
}
"""


class Protos:
    def __init__(self, kv_pb2, kv_pb2_grpc, status_pb2):
        self.kv_pb2, self.kv_pb2_grpc, self.status_pb2 = kv_pb2, kv_pb2_grpc, status_pb2


@pytest.fixture(scope="module")
def pb(tmp_path_factory):
    out = str(tmp_path_factory.mktemp("kvpb"))
    with open(os.path.join(out, "corraltest_status.proto"), "w") as f:
        f.write(STATUS_PROTO)
    include = os.path.join(os.path.dirname(protoc.__file__), "_proto")
    rc = protoc.main([
        "grpc_tools.protoc",
        "-I" + os.path.join(ROOT, "api"),
        "-I" + out,
        "-I" + include,
        "--python_out=" + out,
        "--grpc_python_out=" + out,
        os.path.join(ROOT, "api", "kv", "v1", "kv.proto"),
        os.path.join(out, "corraltest_status.proto"),
    ])
    assert rc == 0, "protoc failed"
    sys.path.insert(0, out)
    try:
        return Protos(importlib.import_module("kv.v1.kv_pb2"),
                      importlib.import_module("kv.v1.kv_pb2_grpc"),
                      importlib.import_module("corraltest_status_pb2"))
    finally:
        sys.path.remove(out)


@pytest.fixture(scope="module")
def endpoints(target, tmp_path_factory):
    if target.kind != "corral":
        pytest.skip("the key-value store is corral's own")
    proc = subprocess.Popen(
        [target.corral_bin, "kv", "ensemble", "-n", str(MEMBERS), "-tick", "100ms", "-dir", str(tmp_path_factory.mktemp("kv"))],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    found = []

    def read():
        for line in proc.stdout:
            if line.startswith("kv endpoints: "):
                found.append(line[len("kv endpoints: "):].strip())
                return

    t = threading.Thread(target=read, daemon=True)
    t.start()
    t.join(60)
    if not found:
        proc.kill()
        pytest.fail("no endpoints line: " + proc.stderr.read())
    yield found[0].split(",")
    proc.kill()
    proc.wait()


def call(pb, eps, method, req):
    """Calls the leader, following NotLeader as any client would. While no
    leader is known (an election is under way, e.g. right after start) it
    waits and tries the next endpoint, for at most 60 s."""
    deadline = time.monotonic() + 60
    i, addr = 0, eps[0]
    while True:
        with grpc.insecure_channel(addr) as ch:
            stub = pb.kv_pb2_grpc.KVStub(ch)
            try:
                return getattr(stub, method)(req, timeout=10)
            except grpc.RpcError as e:
                if e.code() != grpc.StatusCode.UNAVAILABLE or time.monotonic() > deadline:
                    raise
                leader = not_leader(pb, e)
                if leader is not None and leader.leader_address:
                    addr = leader.leader_address
                    continue
                i += 1
                addr = eps[i % len(eps)]
                time.sleep(0.2)


def not_leader(pb, err):
    """The NotLeader detail of an UNAVAILABLE error, if any, decoded from
    the grpc-status-details-bin trailer (a google.rpc.Status)."""
    for key, value in err.trailing_metadata() or ():
        if key != "grpc-status-details-bin":
            continue
        st = pb.status_pb2.Status.FromString(value)
        for d in st.details:
            nl = pb.kv_pb2.NotLeader()
            if d.Unpack(nl):
                return nl
    return None


def test_put_get_scan_check_and_put(pb, endpoints):
    kv_pb2 = pb.kv_pb2
    call(pb, endpoints, "CreateTable", kv_pb2.CreateTableRequest(
        table="py", families=[kv_pb2.Family(name="cf", max_versions=2)]))

    for row, val in [(b"r1", b"one"), (b"r2", b"two"), (b"r3", b"three")]:
        resp = call(pb, endpoints, "Put", kv_pb2.PutRequest(
            table="py", row=row, cells=[kv_pb2.Cell(family="cf", qualifier=b"q", value=val)]))
        assert resp.version > 0

    got = call(pb, endpoints, "Get", kv_pb2.GetRequest(table="py", row=b"r2"))
    assert [(c.family, c.qualifier, c.value) for c in got.cells] == [("cf", b"q", b"two")]

    with pytest.raises(grpc.RpcError) as e:
        call(pb, endpoints, "Get", kv_pb2.GetRequest(table="py", row=b"missing"))
    assert e.value.code() == grpc.StatusCode.NOT_FOUND

    scan = call(pb, endpoints, "Scan", kv_pb2.ScanRequest(table="py", to=b"r3"))
    assert [r.key for r in scan.rows] == [b"r1", b"r2"]

    cond = kv_pb2.Condition(family="cf", qualifier=b"q", value=b"one")
    new = [kv_pb2.Cell(family="cf", qualifier=b"q", value=b"uno")]
    ok = call(pb, endpoints, "CheckAndPut", kv_pb2.CheckAndPutRequest(table="py", row=b"r1", condition=cond, cells=new))
    assert ok.succeeded and ok.version > 0
    again = call(pb, endpoints, "CheckAndPut", kv_pb2.CheckAndPutRequest(table="py", row=b"r1", condition=cond, cells=new))
    assert not again.succeeded

    two = call(pb, endpoints, "Get", kv_pb2.GetRequest(
        table="py", row=b"r1", options=kv_pb2.ReadOptions(max_versions=2)))
    assert [c.value for c in two.cells] == [b"uno", b"one"]
    assert two.cells[0].version > two.cells[1].version

    with pytest.raises(grpc.RpcError) as e:
        call(pb, endpoints, "Put", kv_pb2.PutRequest(
            table="nope", row=b"r", cells=[kv_pb2.Cell(family="cf", value=b"v")]))
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "nope" in e.value.details()


def test_not_leader_names_the_leader(pb, endpoints):
    """Every member but the leader refuses with UNAVAILABLE and a NotLeader
    detail naming the leader's API address."""
    if len(endpoints) < 2:
        pytest.skip("one member leads alone")
    call(pb, endpoints, "ListTables", pb.kv_pb2.ListTablesRequest())  # a leader exists

    def ask_all():
        leaders, redirects = [], []
        for ep in endpoints:
            with grpc.insecure_channel(ep) as ch:
                try:
                    pb.kv_pb2_grpc.KVStub(ch).ListTables(pb.kv_pb2.ListTablesRequest(), timeout=10)
                    leaders.append(ep)
                except grpc.RpcError as e:
                    assert e.code() == grpc.StatusCode.UNAVAILABLE, e
                    nl = not_leader(pb, e)
                    assert nl is not None, e
                    redirects.append(nl.leader_address)
        return leaders, redirects

    # A member still joining the group does not know the leader yet, and
    # an election may move the leadership between two answers: ask every
    # member again until one round agrees.
    deadline = time.monotonic() + 30
    leaders, redirects = ask_all()
    while time.monotonic() < deadline and not (
            len(leaders) == 1 and redirects == [leaders[0]] * (len(endpoints) - 1)):
        time.sleep(0.2)
        leaders, redirects = ask_all()
    assert len(leaders) == 1, leaders
    assert redirects == [leaders[0]] * (len(endpoints) - 1), (leaders, redirects)
