# test_routines.py -- every BLAS, LAPACK and LINPACK routine the server ships,
# called from Python, against numpy / scipy.linalg on the same inputs.
import warnings

import numpy as np
import pytest
import scipy.linalg as sl

import numrpc

F = np.asfortranarray


def matrix(rng, m, n, dtype=np.float64):
    a = rng.standard_normal((m, n))
    if np.issubdtype(dtype, np.complexfloating):
        a = a + 1j * rng.standard_normal((m, n))
    return F(a.astype(dtype))


@pytest.mark.parametrize("order", ["F", "C"])
def test_dgesv_solves_like_numpy(rng, order):
    n, nrhs = 30, 3
    a0, b0 = matrix(rng, n, n), matrix(rng, n, nrhs)
    a, b = np.array(a0, order=order), np.array(b0, order=order)
    ipiv = np.zeros(n, np.int32)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        info = numrpc.call("dgesv", n, nrhs, a, n, ipiv, b, n)
    assert info == 0
    np.testing.assert_allclose(b, np.linalg.solve(a0, b0), rtol=1e-10, atol=1e-12)
    lu, piv = sl.lu_factor(a0)
    np.testing.assert_allclose(a, lu, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(ipiv, piv + 1)
    copies = [w for w in seen if issubclass(w.category, numrpc.CopyWarning)]
    assert len(copies) == (0 if order == "F" else 2)  # a and b, once each


def test_dgesv_singular_matrix_reports_info(rng):
    n = 4
    a = F(np.ones((n, n)))
    info = numrpc.call("dgesv", n, 1, a, n, np.zeros(n, np.int32), np.ones(n), n)
    assert info > 0  # LAPACK: U(info, info) is exactly zero


def test_zgesv_complex(rng):
    n = 12
    a0, b0 = matrix(rng, n, n, np.complex128), matrix(rng, n, 2, np.complex128)
    a, b = a0.copy(order="F"), b0.copy(order="F")
    info, ipiv = numrpc.call("zgesv", n, 2, a, n, None, b, n)
    assert info == 0 and ipiv.dtype == np.int32 and ipiv.shape == (n,)
    np.testing.assert_allclose(b, np.linalg.solve(a0, b0), rtol=1e-10, atol=1e-12)


def test_dgetrf_then_dgetrs_transposed(rng):
    m = n = 20
    a0, b0 = matrix(rng, m, n), matrix(rng, n, 2)
    a = a0.copy(order="F")
    info, ipiv = numrpc.call("dgetrf", m, n, a, m, None)
    assert info == 0
    lu, piv = sl.lu_factor(a0)
    np.testing.assert_allclose(a, lu, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(ipiv, piv + 1)
    b = b0.copy(order="F")
    assert numrpc.call("dgetrs", "T", n, 2, a, n, ipiv, b, n) == 0
    np.testing.assert_allclose(b, np.linalg.solve(a0.T, b0), rtol=1e-10, atol=1e-12)


def spd(rng, n):
    g = rng.standard_normal((n, n))
    return F(g @ g.T + n * np.eye(n))


def test_dposv_and_dpotrf(rng):
    n = 16
    a0, b0 = spd(rng, n), matrix(rng, n, 1)
    a, b = a0.copy(order="F"), b0.copy(order="F")
    assert numrpc.call("dposv", "L", n, 1, a, n, b, n) == 0
    np.testing.assert_allclose(b, np.linalg.solve(a0, b0), rtol=1e-10)
    a = a0.copy(order="F")
    assert numrpc.call("dpotrf", "U", n, a, n) == 0
    np.testing.assert_allclose(np.triu(a), sl.cholesky(a0, lower=False), rtol=1e-12, atol=1e-12)


def query_lwork(*args):
    """Runs a LAPACK workspace query (lwork = -1): the optimal lwork."""
    results = numrpc.call(*args)
    assert results[0] == 0
    return int(results[-1][0])


def test_dgels_least_squares(rng):
    m, n = 40, 6
    a0, b0 = matrix(rng, m, n), matrix(rng, m, 1)
    lwork = query_lwork("dgels", "N", m, n, 1, a0.copy(order="F"), m, b0.copy(order="F"), m, None, -1)
    b = b0.copy(order="F")
    info, _ = numrpc.call("dgels", "N", m, n, 1, a0.copy(order="F"), m, b, m, None, lwork)
    assert info == 0
    np.testing.assert_allclose(b[:n], np.linalg.lstsq(a0, b0, rcond=None)[0], rtol=1e-9)


def test_dsyev_eigenvalues_and_vectors(rng):
    n = 25
    a0 = spd(rng, n)
    lwork = query_lwork("dsyev", "V", "U", n, a0.copy(order="F"), n, None, None, -1)
    a = a0.copy(order="F")
    info, w, _ = numrpc.call("dsyev", "V", "U", n, a, n, None, None, lwork)
    assert info == 0
    np.testing.assert_allclose(w, np.linalg.eigvalsh(a0), rtol=1e-10)
    np.testing.assert_allclose(a0 @ a, a * w, rtol=1e-8, atol=1e-8)  # A v = w v, column by column


def test_dgesvd(rng):
    m, n = 12, 8
    a0 = matrix(rng, m, n)
    lwork = query_lwork("dgesvd", "A", "A", m, n, a0.copy(order="F"), m, None, None, m, None, n, None, -1)
    info, s, u, vt, _ = numrpc.call("dgesvd", "A", "A", m, n, a0.copy(order="F"), m, None, None, m, None, n,
                                    None, lwork)
    assert info == 0
    np.testing.assert_allclose(s, np.linalg.svd(a0, compute_uv=False), rtol=1e-10)
    np.testing.assert_allclose(u[:, :n] * s @ vt, a0, atol=1e-10)


def test_dgeev_eigenvalues(rng):
    n = 10
    a0 = matrix(rng, n, n)
    lwork = query_lwork("dgeev", "N", "N", n, a0.copy(order="F"), n, None, None, None, 1, None, 1, None, -1)
    info, wr, wi, vl, vr, _ = numrpc.call("dgeev", "N", "N", n, a0.copy(order="F"), n, None, None, None, 1,
                                          None, 1, None, lwork)
    assert info == 0 and vl.size == 0 and vr.size == 0
    got = np.sort_complex(wr + 1j * wi)
    np.testing.assert_allclose(got, np.sort_complex(np.linalg.eigvals(a0)), rtol=1e-9)


@pytest.mark.parametrize("transa,transb", [("N", "N"), ("T", "N"), ("N", "T")])
def test_dgemm(rng, transa, transb):
    m, n, k = 17, 9, 13
    a0 = matrix(rng, m, k) if transa == "N" else matrix(rng, k, m)
    b0 = matrix(rng, k, n) if transb == "N" else matrix(rng, n, k)
    c0 = matrix(rng, m, n)
    c = c0.copy(order="F")
    numrpc.call("dgemm", transa, transb, m, n, k, 1.5, a0, a0.shape[0], b0, b0.shape[0], -0.5, c, m)
    op = {"N": lambda x: x, "T": lambda x: x.T}
    np.testing.assert_allclose(c, 1.5 * op[transa](a0) @ op[transb](b0) - 0.5 * c0, rtol=1e-12, atol=1e-12)


def test_dgemv_both_ways(rng):
    m, n = 11, 7
    a = matrix(rng, m, n)
    x, y0 = rng.standard_normal(n), rng.standard_normal(m)
    y = y0.copy()
    numrpc.call("dgemv", "N", m, n, 2.0, a, m, x, 1, 3.0, y, 1)
    np.testing.assert_allclose(y, 2 * a @ x + 3 * y0, rtol=1e-12)
    x2, y2 = rng.standard_normal(m), np.zeros(n)
    numrpc.call("dgemv", "T", m, n, 1.0, a, m, x2, 1, 0.0, y2, 1)
    np.testing.assert_allclose(y2, a.T @ x2, rtol=1e-12)


def test_dmmul(rng):
    n = 20
    a, b = matrix(rng, n, n), matrix(rng, n, n)
    c = numrpc.call("dmmul", n, a, b, None)
    np.testing.assert_allclose(c, a @ b, rtol=1e-12)


def test_level1_strided_views_pass_without_copy(rng):
    n = 8
    xbase, ybase = rng.standard_normal(3 * n), rng.standard_normal(2 * n)
    x, y = xbase[::3], ybase[::2]  # BLAS increments 3 and 2 on numpy views
    y0, ybase0 = y.copy(), ybase.copy()
    with warnings.catch_warnings():
        warnings.simplefilter("error", numrpc.CopyWarning)
        assert numrpc.call("ddot", n, x, 3, y, 2) == pytest.approx(np.dot(x, y), rel=1e-12)
        numrpc.call("daxpy", n, 0.25, x, 3, y, 2)
    np.testing.assert_allclose(y, y0 + 0.25 * x, rtol=1e-12)
    np.testing.assert_array_equal(ybase[1::2], ybase0[1::2])  # elements between the increments untouched
    assert numrpc.call("dnrm2", n, x, 3) == pytest.approx(np.linalg.norm(x), rel=1e-12)
    numrpc.call("dscal", n, -2.0, y, 2)
    np.testing.assert_allclose(y, -2 * (y0 + 0.25 * x), rtol=1e-12)


def test_negative_increment_walks_backwards(rng):
    n = 9
    x, y = rng.standard_normal(n), rng.standard_normal(n)
    assert numrpc.call("ddot", n, x, -1, y, 1) == pytest.approx(np.dot(x[::-1], y), rel=1e-12)


def test_dcopy_out_allocated_from_none(rng):
    n = 10
    x = rng.standard_normal(n)
    y = numrpc.call("dcopy", n, x, 1, None, 1)
    assert y.dtype == np.float64 and y.shape == (n,)
    np.testing.assert_array_equal(y, x)


def test_linpack_dgefa_dgesl_and_one_call_solver(rng):
    n = 25
    a0, b0 = matrix(rng, n, n), rng.standard_normal(n)
    a = a0.copy(order="F")
    info, ipvt = numrpc.call("dgefa", a, n, n, None)
    assert info == 0
    b = b0.copy()
    assert numrpc.call("dgesl", a, n, n, ipvt, b, 0) is None
    np.testing.assert_allclose(b, np.linalg.solve(a0, b0), rtol=1e-10)
    b = b0.copy()
    info, _ = numrpc.call("linpack", a0, n, n, None, b)
    assert info == 0
    np.testing.assert_allclose(b, np.linalg.solve(a0, b0), rtol=1e-10)
