# test_linalg.py -- numrpc.linalg's linear systems against scipy.linalg on the same inputs:
# solve, lstsq, inv, det, LU and Cholesky factors kept on the server, remote arrays, futures.
import concurrent.futures
import warnings

import numpy as np
import pytest
import scipy.linalg as sl

import numrpc
import numrpc.linalg as la

DTYPES = [np.float32, np.float64, np.complex64, np.complex128]
N = 48


def tol(dtype):
    return 2e-4 if np.dtype(dtype) in (np.float32, np.complex64) else 1e-10


def close(got, want, dtype, scale=1.0):
    """got equals scipy's want within the precision of dtype."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape
    t = tol(dtype)
    np.testing.assert_allclose(got, want, rtol=t * scale, atol=t * scale * max(1.0, float(np.abs(want).max(initial=0))))


def matrix(rng, shape, dtype, order="F", kind="gen"):
    """A random matrix: 'gen' well conditioned (n on the diagonal), 'sym'
    symmetric, 'her' Hermitian, 'pos' Hermitian positive definite."""
    m = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        m = m + 1j * rng.standard_normal(shape)
    if kind != "gen" or len(shape) == 2 and shape[0] == shape[1]:
        n = shape[0]
        if kind == "sym":
            m = m + m.T + n * np.eye(n)
        elif kind == "her":
            m = m + m.conj().T + n * np.eye(n)
        elif kind == "pos":
            m = m @ m.conj().T / n + np.eye(n)
        elif len(shape) == 2:
            m = m + n * np.eye(n)
    return np.array(m.astype(dtype), order=order)


def polluted(a, lower, rng):
    """a with the triangle that a solver told `lower` does not read replaced by noise."""
    noise = rng.standard_normal(a.shape).astype(a.dtype)
    mask = np.triu(np.ones(a.shape, bool), 1) if lower else np.tril(np.ones(a.shape, bool), -1)
    out = a.copy(order="K")
    out[mask] = noise[mask]
    return out


def unchanged(*pairs):
    for array, copy in pairs:
        np.testing.assert_array_equal(array, copy)


# ---- solve ----


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("assume_a", ["gen", "sym", "her", "pos"])
@pytest.mark.parametrize("lower", [False, True])
@pytest.mark.filterwarnings("ignore::scipy.linalg.LinAlgWarning")  # scipy 1.10's sycon ignores lower
def test_solve_matches_scipy(rng, dtype, order, assume_a, lower):
    if assume_a == "gen" and lower:
        pytest.skip("lower is ignored for 'gen'")
    kind = "sym" if assume_a == "sym" else ("pos" if assume_a == "pos" else ("her" if assume_a == "her" else "gen"))
    a = matrix(rng, (N, N), dtype, order, kind)
    if assume_a != "gen":
        a = polluted(a, lower, rng)  # only the chosen triangle may be read, as scipy
    for b in (matrix(rng, (N,), dtype), matrix(rng, (N, 3), dtype, "C"), matrix(rng, (N, 2), dtype, "F")):
        a0, b0 = a.copy(order="K"), b.copy(order="K")
        x = la.solve(a, b, assume_a=assume_a, lower=lower)
        unchanged((a, a0), (b, b0))
        assert x.shape == b.shape and x.dtype == dtype
        close(x, sl.solve(a, b, assume_a=assume_a, lower=lower), dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("order", ["C", "F"])
def test_solve_transposed(rng, dtype, order):
    a, b = matrix(rng, (N, N), dtype, order), matrix(rng, (N, 2), dtype)
    close(la.solve(a, b, transposed=True), sl.solve(a, b, transposed=True), dtype)
    with pytest.raises(NotImplementedError):
        la.solve(a.astype(np.complex128), b, transposed=True)


def test_solve_overwrite_and_types(rng):
    a = matrix(rng, (N, N), np.float64)
    b = np.asfortranarray(rng.standard_normal((N, 2)))
    want = sl.solve(a, b)
    x = la.solve(a.copy(order="F"), b, overwrite_b=True)
    assert x is b  # LAPACK worked in b, as scipy may
    close(b, want, np.float64)
    ints = rng.integers(-5, 5, (6, 6)) + 20 * np.eye(6, dtype=np.int64)
    assert la.solve(ints, np.arange(6)).dtype == np.float64
    assert la.solve(ints.astype(np.int16), np.arange(6, dtype=np.int16)).dtype == np.float32
    mixed = la.solve(a.astype(np.float32), b.astype(np.complex64))
    assert mixed.dtype == sl.solve(a.astype(np.float32), b.astype(np.complex64)).dtype == np.complex64
    close(la.solve(a.tolist(), b[:, 0].tolist()), sl.solve(a, b[:, 0]), np.float64)  # lists are array_like
    close(la.solve([[2.0]], [1.0, 2.0, 3.0]), sl.solve([[2.0]], [1.0, 2.0, 3.0]), np.float64)


def test_solve_errors_are_scipys(rng):
    a = matrix(rng, (5, 5), np.float64)
    singular = a.copy()
    singular[2] = 0.0  # an exact zero pivot
    with pytest.raises(np.linalg.LinAlgError, match="singular"):
        la.solve(singular, np.ones(5))
    with pytest.raises(np.linalg.LinAlgError):
        la.solve(-np.eye(5), np.ones(5), assume_a="pos")
    with pytest.raises(ValueError, match="square"):
        la.solve(np.ones((5, 4)), np.ones(5))
    with pytest.raises(ValueError, match="same number of rows"):
        la.solve(a, np.ones(4))
    with pytest.raises(ValueError, match="infs or NaNs"):
        la.solve(a, np.array([1, 2, np.nan, 4, 5]))
    with pytest.raises(ValueError, match="recognized"):
        la.solve(a, np.ones(5), assume_a="tri")


# ---- lstsq ----


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("driver", ["gelsd", "gelss", "gelsy"])
@pytest.mark.parametrize("shape", [(60, 25), (25, 40)])
def test_lstsq_matches_scipy(rng, dtype, driver, shape):
    a = matrix(rng, shape, dtype, "C")
    for b in (matrix(rng, (shape[0],), dtype), matrix(rng, (shape[0], 3), dtype)):
        a0, b0 = a.copy(), b.copy()
        x, res, rank, s = la.lstsq(a, b, lapack_driver=driver)
        unchanged((a, a0), (b, b0))
        xs, ress, ranks, ss = sl.lstsq(a, b, lapack_driver=driver)
        close(x, xs, dtype, 10)
        assert rank == ranks and np.shape(res) == np.shape(ress)
        close(res, ress, dtype, 10)
        if driver == "gelsy":
            assert s is None
        else:
            close(s, ss, dtype)


def test_lstsq_rank_deficient_and_errors(rng):
    a = rng.standard_normal((30, 4)) @ rng.standard_normal((4, 10))  # rank 4
    b = rng.standard_normal(30)
    x, res, rank, s = la.lstsq(a, b)
    assert rank == 4 and res.size == 0
    close(x, sl.lstsq(a, b)[0], np.float64, 100)
    with pytest.raises(ValueError, match="Shape mismatch"):
        la.lstsq(a, np.ones(29))
    with pytest.raises(ValueError, match="driver"):
        la.lstsq(a, b, lapack_driver="gels")


# ---- inv and det ----


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("order", ["C", "F"])
def test_inv_and_det_match_scipy(rng, dtype, order):
    a = matrix(rng, (N, N), dtype, order) / N
    a0 = a.copy(order="K")
    close(la.inv(a), sl.inv(a), dtype, 10)
    d = la.det(a)
    assert type(d) is type(sl.det(a))
    close(d, sl.det(a), dtype, 10)
    unchanged((a, a0))


def test_inv_det_singular_and_shapes(rng):
    singular = np.ones((4, 4))
    with pytest.raises(np.linalg.LinAlgError, match="singular matrix"):
        la.inv(singular)
    assert la.det(singular) == sl.det(singular) == 0.0
    assert la.det(np.eye(3)[[1, 0, 2]]) == -1.0  # one interchange: the sign
    with pytest.raises(ValueError, match="square"):
        la.inv(np.ones((3, 4)))
    with pytest.raises(ValueError, match="square"):
        la.det(np.ones(3))


# ---- LU and Cholesky factors on the server ----


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("order", ["C", "F"])
def test_lu_factor_lu_solve_match_scipy(rng, dtype, order):
    a = matrix(rng, (N, N), dtype, order)
    a0 = a.copy(order="K")
    lu, piv = la.lu_factor(a)
    unchanged((a, a0))
    lus, pivs = sl.lu_factor(a)
    assert isinstance(lu, numrpc.RemoteArray) and lu.shape == (N, N) and lu.dtype == dtype
    np.testing.assert_array_equal(piv, pivs)  # 0-based, as scipy's
    assert piv.dtype == pivs.dtype
    close(np.asarray(lu), lus, dtype)
    for trans in (0, 1, 2):
        for b in (matrix(rng, (N,), dtype), matrix(rng, (N, 3), dtype, "C")):
            b0 = b.copy()
            x = la.lu_solve((lu, piv), b, trans=trans)
            unchanged((b, b0))
            close(x, sl.lu_solve((lus, pivs), b, trans=trans), dtype)
    close(la.lu_solve((lus, pivs), b), sl.lu_solve((lus, pivs), b), dtype)  # scipy's own factors, sent
    lu.free()


def test_lu_solve_real_factors_complex_rhs_and_rectangular(rng):
    a = matrix(rng, (N, N), np.float64)
    lu, piv = la.lu_factor(a)
    b = matrix(rng, (N, 2), np.complex128)
    close(la.lu_solve((lu, piv), b), sl.lu_solve(sl.lu_factor(a), b), np.complex128)
    tall = rng.standard_normal((9, 5))
    lu2, piv2 = la.lu_factor(tall)
    lus, pivs = sl.lu_factor(tall)
    close(np.asarray(lu2), lus, np.float64)
    np.testing.assert_array_equal(piv2, pivs)


def test_lu_factor_of_a_singular_matrix_warns(rng):
    a = np.ones((4, 4))
    with pytest.warns(la.LinAlgWarning, match="exactly zero"):
        lu, piv = la.lu_factor(a)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        close(np.asarray(lu), sl.lu_factor(a)[0], np.float64)


def test_lu_factor_future_warns_at_each_result():
    future = la.lu_factor(np.ones((4, 4)), block=False)
    for _ in range(2):
        with pytest.warns(la.LinAlgWarning, match="exactly zero") as seen:
            lu, piv = future.result(timeout=30)
        assert seen[0].filename == __file__
    with pytest.warns(la.LinAlgWarning):
        np.testing.assert_array_equal(piv, sl.lu_factor(np.ones((4, 4)))[1])
    assert isinstance(future, numrpc.OperationFuture) and la.LinalgFuture is numrpc.OperationFuture
    assert all(isinstance(c, numrpc.CallInfo) for c in future.calls) and len(future.calls) == 2  # put, getrf
    lu.free()


def test_factors_travel_once_then_only_right_hand_sides(rng):
    """One lu_factor, ten lu_solve: A's bytes go on the wire once."""
    n, nrhs = 200, 2
    a = matrix(rng, (n, n), np.float64, "C")
    lu, piv = la.lu_factor(a)
    factor_calls = la.last_calls()
    sent = sum(c.bytes_sent for c in factor_calls)
    assert 8 * n * n <= sent < 8 * n * n + 4096  # the put: A once; getrf names the handle
    assert all(c.bytes_received < 4 * n + 1024 for c in factor_calls)  # only the pivots come back
    lus = sl.lu_factor(a)
    for _ in range(10):
        b = rng.standard_normal((n, nrhs))
        x = la.lu_solve((lu, piv), b)
        calls = la.last_calls()
        assert len(calls) == 1
        assert calls[0].bytes_sent < 8 * n * nrhs + 4 * n + 1024 < 8 * n * n // 10
        assert calls[0].bytes_received < 8 * n * nrhs + 1024
        np.testing.assert_allclose(x, sl.lu_solve(lus, b), rtol=1e-10, atol=1e-12)
    lu.free()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("lower", [False, True])
def test_cholesky_family_matches_scipy(rng, dtype, order, lower):
    a = polluted(matrix(rng, (N, N), dtype, order, "pos"), lower, rng)
    a0 = a.copy(order="K")
    close(la.cholesky(a, lower=lower), sl.cholesky(a, lower=lower), dtype)
    c, low = la.cho_factor(a, lower=lower)
    unchanged((a, a0))
    cs, lows = sl.cho_factor(a, lower=lower)
    assert isinstance(c, numrpc.RemoteArray) and low == lows
    close(np.asarray(c), cs, dtype)  # the factor's triangle and a's other one, as scipy
    for b in (matrix(rng, (N,), dtype), matrix(rng, (N, 2), dtype, "C")):
        close(la.cho_solve((c, low), b), sl.cho_solve((cs, lows), b), dtype)
        close(la.cho_solve((np.ascontiguousarray(cs), lows), b), sl.cho_solve((cs, lows), b), dtype)
    c.free()


def test_cholesky_not_positive_definite(rng):
    with pytest.raises(np.linalg.LinAlgError, match="not positive definite"):
        la.cholesky(-np.eye(3))
    with pytest.raises(np.linalg.LinAlgError, match="not positive definite"):
        la.cho_factor(np.diag([1.0, -1.0]))
    with pytest.raises(ValueError, match="square"):
        la.cholesky(np.ones((2, 3)))


# ---- Remote arrays ----


def test_asarray_round_trip_and_lifetime(rng):
    a = rng.standard_normal((7, 5))
    with numrpc.asarray(a) as r:
        assert r.shape == (7, 5) and r.dtype == np.float64 and r.ndim == 2 and len(r) == 7
        np.testing.assert_array_equal(np.asarray(r), a)
        assert numrpc.asarray(r) is r
    with pytest.raises(ValueError, match="freed"):
        np.asarray(r)
    assert numrpc.asarray(np.arange(4)).dtype == np.float64  # the precision linalg computes in
    assert numrpc.asarray(np.ones(3, np.float32)).dtype == np.float32


@pytest.mark.parametrize("dtype", [np.float64, np.complex64])
def test_every_function_takes_a_remote_array(rng, dtype):
    a = matrix(rng, (N, N), dtype, "C")
    pos = matrix(rng, (N, N), dtype, "C", "pos")
    b = matrix(rng, (N, 2), dtype)
    r, rpos = numrpc.asarray(a), numrpc.asarray(pos)
    close(la.solve(r, b), sl.solve(a, b), dtype)
    close(la.solve(r, b, transposed=dtype == np.float64), sl.solve(a, b, transposed=dtype == np.float64), dtype)
    close(la.solve(rpos, b, assume_a="pos"), sl.solve(pos, b, assume_a="pos"), dtype)
    close(la.solve(rpos, b, assume_a="her"), sl.solve(pos, b, assume_a="her"), dtype)
    close(la.solve(r, numrpc.asarray(b)), sl.solve(a, b), dtype)
    close(la.inv(r), sl.inv(a), dtype, 10)
    with numrpc.asarray(a / N) as scaled:  # a's determinant overflows single precision
        close(la.det(scaled), sl.det(a / N), dtype, 10)
    close(la.lstsq(r, b)[0], sl.lstsq(a, b)[0], dtype, 10)
    close(la.cholesky(rpos), sl.cholesky(pos), dtype)
    c, low = la.cho_factor(rpos)
    close(la.cho_solve((c, low), b), sl.cho_solve(sl.cho_factor(pos), b), dtype)
    lu, piv = la.lu_factor(r)
    np.testing.assert_array_equal(piv, sl.lu_factor(a)[1])
    close(la.lu_solve((lu, piv), b), sl.lu_solve(sl.lu_factor(a), b), dtype)
    np.testing.assert_array_equal(np.asarray(r), a)  # still a: the work was on copies
    np.testing.assert_array_equal(np.asarray(rpos), pos)
    lu2, _ = la.lu_factor(r, overwrite_a=True)  # in place: lu is r
    assert lu2 is r
    close(np.asarray(r), sl.lu_factor(a)[0], dtype)


# ---- Futures ----


def test_block_false_gives_futures_of_the_same_results(rng, servers):
    a = matrix(rng, (N, N), np.float64, "C")
    b = rng.standard_normal((N, 2))
    futures = [la.solve(a, b, block=False) for _ in range(8)]
    f_inv, f_det = la.inv(a, block=False), la.det(a, block=False)
    f_lu = la.lu_factor(a, block=False)
    for f in futures:
        close(f.result(timeout=60), sl.solve(a, b), np.float64)
    # Farmed by the library over the servers (which ones depends on how the calls
    # overlap: test_async.py holds calls to show the spread).
    assert {c.server for f in futures for c in f.calls} <= set(servers)
    close(f_inv.result(timeout=60), sl.inv(a), np.float64)
    close(f_det.result(timeout=60), sl.det(a), np.float64)
    lu, piv = f_lu.result(timeout=60)
    np.testing.assert_array_equal(piv, sl.lu_factor(a)[1])
    solves = [la.lu_solve((lu, piv), b[:, k], block=False) for k in range(2)]
    for k, f in enumerate(solves):
        close(f.result(timeout=60), sl.lu_solve(sl.lu_factor(a), b[:, k]), np.float64)
    c, low = la.cho_factor(a @ a.T + np.eye(N), block=False).result(timeout=60)
    close(la.cho_solve((c, low), b, block=False).result(timeout=60), sl.cho_solve(sl.cho_factor(a @ a.T + np.eye(N)), b),
          np.float64)


def test_futures_raise_what_blocking_calls_raise(rng):
    singular = np.ones((4, 4))
    with pytest.raises(np.linalg.LinAlgError, match="singular"):
        la.solve(singular, np.ones(4), block=False).result(timeout=30)
    with pytest.raises(ValueError, match="square"):
        la.inv(np.ones((3, 4)), block=False).result(timeout=30)
    with pytest.raises(np.linalg.LinAlgError):
        la.cholesky(-np.eye(3), block=False).result(timeout=30)


def test_remote_futures_precisions_and_cancel(rng):
    a = matrix(rng, (N, N), np.float32)
    b = rng.standard_normal(N)  # float64: scipy solves with float64 factors
    with numrpc.asarray(a) as r:
        f = la.inv(r, block=False)
        close(f.result(timeout=60), sl.inv(a), np.float32, 10)
        assert f.calls and all(c.server == r.server for c in f.calls)  # worked where r is
        lu, piv = la.lu_factor(r)
        close(la.lu_solve((lu, piv), b), sl.lu_solve(sl.lu_factor(a), b), np.float32, 10)
        close(la.norm(numrpc.asarray(b)), sl.norm(b), np.float64)
    big = matrix(rng, (700, 700), np.float64)
    future = la.solve(big, np.ones(700), block=False)
    assert future.cancel() and future.cancelled()
    with pytest.raises(concurrent.futures.CancelledError):
        future.result(timeout=60)
    close(la.solve(big, np.ones(700)), sl.solve(big, np.ones(700)), np.float64)  # the library goes on
