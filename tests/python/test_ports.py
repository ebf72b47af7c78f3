"""The harness's port picking: an ensemble's ports must be distinct."""

from zkserver import free_port, free_ports


def test_free_ports_are_distinct_across_calls():
    first = free_ports(60)
    assert len(set(first)) == 60
    more = free_ports(60) + [free_port() for _ in range(20)]
    assert len(set(more)) == 80
    assert not set(first) & set(more)
