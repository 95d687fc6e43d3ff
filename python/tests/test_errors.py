# test_errors.py -- every failure as its exception: class by NUMRPC_E* code,
# .code, .name and .detail, from real servers (unknown routine, timeout, crash, no server).
import socket

import numpy as np
import pytest

import numrpc
from numrpc._errors import error_for


@pytest.mark.parametrize("code,cls,also", [
    (-2, numrpc.BadArgument, ValueError),
    (-3, numrpc.UnknownRoutine, LookupError),
    (-4, numrpc.CannotConnect, ConnectionError),
    (-9, numrpc.Cancelled, __import__("concurrent.futures").futures.CancelledError),
    (-10, numrpc.Timeout, TimeoutError),
    (-11, numrpc.ServerCrashed, numrpc.Error),
    (-12, numrpc.ConnectionLost, ConnectionError),
    (-16, numrpc.Error, Exception),
])
def test_class_by_code(code, cls, also):
    e = error_for(code, "what happened")
    assert type(e) is cls and isinstance(e, also) and isinstance(e, numrpc.Error)
    assert e.code == code and e.detail == "what happened" and e.name.startswith("NUMRPC_E")
    assert str(e).endswith(": what happened")


def test_unknown_routine():
    with pytest.raises(numrpc.UnknownRoutine) as caught:
        numrpc.call("no_such_routine", 1)
    assert caught.value.code == -3 and "no_such_routine" in caught.value.detail


def test_cannot_connect():
    with socket.socket() as s:  # a port nobody listens on once closed
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(numrpc.CannotConnect) as caught:
        numrpc.call(f"numrpc://127.0.0.1:{port}/ddot", 1, np.ones(1), 1, np.ones(1), 1)
    assert caught.value.name == "NUMRPC_ECONNECT" and str(port) in caught.value.detail


def test_server_crashed(faults):
    with pytest.raises(numrpc.ServerCrashed) as caught:
        numrpc.call("crash", 1)
    assert caught.value.code == -11
    assert numrpc.call("crash", 0) is None  # the next call gets a fresh worker


def test_timeout(faults):
    numrpc.set_timeout(0.3)
    try:
        with pytest.raises(numrpc.Timeout) as caught:
            numrpc.call("spin", 30)
    finally:
        numrpc.set_timeout(0)
    assert caught.value.code == -10 and caught.value.name == "NUMRPC_ETIMEDOUT"


def test_describe_prints_idl_and_lists_params():
    d = numrpc.describe("dgefa")
    assert d.name == "dgefa" and d.module == "linpack"
    assert [(p.name, p.mode, p.rank) for p in d.params] == [
        ("a", 3, 2), ("lda", 1, 0), ("n", 1, 0), ("ipvt", 2, 1), ("info", 2, 0)]
    text = str(d)
    assert text.startswith("Module linpack;") and "Define dgefa(INOUT double a[lda:n][n]" in text
    assert [p.name for p in d.passed] == ["a", "lda", "n", "ipvt"]


def test_a_bad_metaserver_address_names_the_setting(servers):
    with pytest.raises(numrpc.BadArgument) as caught:
        numrpc.Client(servers=servers, metaserver="no port here")
    assert caught.value.name == "NUMRPC_EINVAL" and "numrpc_config.metaserver" in caught.value.detail
    numrpc.Client(servers=servers, metaserver="")  # none: the servers alone, as the other tests expect
    x = np.arange(3.0)
    assert numrpc.call("ddot", 3, x, 1, x, 1) == pytest.approx(float(x @ x))
