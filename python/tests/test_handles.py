# test_handles.py -- numrpc.put: arrays kept on a server, passed where arrays
# go (blocking and asynchronous calls), read back with get(), freed with free().
import numpy as np
import pytest
import scipy.linalg as sl

import numrpc


def test_put_get_round_trip(rng):
    for array in (rng.standard_normal((7, 5)), rng.standard_normal(9), np.arange(6, dtype=np.int32),
                  (rng.standard_normal((3, 4)) + 1j).astype(np.complex128)):
        with numrpc.put(array) as handle:
            assert handle.dtype == array.dtype and handle.shape == array.shape
            np.testing.assert_array_equal(handle.get(), array)


def test_factors_stay_on_the_server_and_are_reused(rng):
    n = 30
    a0 = np.asfortranarray(rng.standard_normal((n, n)))
    handle = numrpc.put(a0)
    try:
        info, ipvt = numrpc.call("dgefa", handle, n, n, None)  # the factors replace a on the server
        assert info == 0
        factors = sl.lu_factor(a0)
        for _ in range(3):  # only b travels
            b0 = rng.standard_normal(n)
            b = b0.copy()
            numrpc.call("dgesl", handle, n, n, ipvt, b, 0)
            np.testing.assert_allclose(b, sl.lu_solve(factors, b0), rtol=1e-10)
            assert numrpc.last_call_info().bytes_sent < n * n * 8  # the matrix did not travel
        b = rng.standard_normal(n)
        x = b.copy()
        numrpc.call_async("dgesl", handle, n, n, ipvt, x, 0).result(timeout=30)
        np.testing.assert_allclose(x, sl.lu_solve(factors, b), rtol=1e-10)
        assert not np.allclose(handle.get(), a0)  # it holds the factors now
    finally:
        handle.free()


def test_out_handle_takes_the_result(rng):
    n = 12
    x = rng.standard_normal(n)
    with numrpc.put(np.zeros(n)) as y:
        assert numrpc.call("dcopy", n, x, 1, y, 1) is None  # y's result stays on the server
        np.testing.assert_array_equal(y.get(), x)


def test_handle_of_the_wrong_type_or_freed(rng):
    ints = numrpc.put(np.arange(4, dtype=np.int32))
    with pytest.raises(TypeError, match=r"ddot: parameter x is double \(float64\), the handle holds int32"):
        numrpc.call("ddot", 4, ints, 1, np.ones(4), 1)
    ints.free()
    doubles = numrpc.put(np.ones(4))
    doubles.free()
    doubles.free()  # a second free does nothing
    with pytest.raises(ValueError, match="freed"):
        numrpc.call("dscal", 4, 1.0, doubles, 1)


def test_handle_too_small_is_the_librarys_bad_argument():
    with numrpc.put(np.ones(3)) as small:
        with pytest.raises(numrpc.BadArgument, match="x"):
            numrpc.call("dnrm2", 10, small, 1)


def test_put_refuses_what_a_handle_cannot_hold():
    with pytest.raises(TypeError, match="dtype"):
        numrpc.put(np.array(["a", "b"]))
    with pytest.raises(TypeError, match="3-D"):
        numrpc.put(np.ones((2, 2, 2)))
