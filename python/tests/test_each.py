# test_each.py -- numrpc.call_each: one call on three servers, one a closed port:
# two results equal numpy's on the same input, each in its own copy; the dead one's error.
import socket

import numpy as np
import pytest

import numrpc


@pytest.fixture
def dead_server():
    """A port of 127.0.0.1 nothing listens on (bound, never listened)."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    yield f"127.0.0.1:{s.getsockname()[1]}"
    s.close()


def test_dgemv_on_three_servers_one_dead(rng, servers, dead_server):
    m, n = 6, 4
    a = np.asfortranarray(rng.standard_normal((m, n)))
    x = rng.standard_normal(n)
    y = rng.standard_normal(m)
    want = 1.5 * a @ x + 0.5 * y
    group = [servers[0], dead_server, servers[1]]
    results = numrpc.call_each("dgemv", "N", m, n, 1.5, a, m, x, 1, 0.5, y, 1, servers=group)
    assert [r.server for r in results] == group
    (s0, r0), (s1, r1), (s2, r2) = results
    assert r0 is None and r2 is None  # dgemv returns nothing: y is its output
    assert isinstance(r1, numrpc.CannotConnect)
    assert dead_server in str(r1)
    for r in (results[0], results[2]):
        assert r.ok and r.seconds > 0
        np.testing.assert_allclose(r.arrays[9], want, rtol=1e-13)
        assert r.arrays[5] is None  # an IN array: not copied
    assert results[0].arrays[9] is not results[2].arrays[9]  # each server its own copy
    np.testing.assert_allclose(y, want, rtol=1e-13)  # the caller's y: the first success's


def test_returned_scalars_per_server_and_comma_list(rng, servers):
    x = rng.standard_normal(7)
    results = numrpc.call_each("dnrm2", 7, x, 1, servers=",".join(servers))
    assert len(results) == 2
    for server, norm in results:
        assert server in servers
        assert norm == pytest.approx(np.linalg.norm(x), rel=1e-13)


def test_nothing_sent_raises(servers):
    with pytest.raises(numrpc.BadArgumentType):
        numrpc.call_each("dscal", 3, 2.0, servers=servers)  # x missing
