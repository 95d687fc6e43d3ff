# test_routines_breadth.py -- the routines in single, double, complex and double
# complex precision (s, d, c, z), a representative subset, against numpy / scipy.
import numpy as np
import pytest
import scipy.linalg as sl

import numrpc

DTYPES = {"s": np.float32, "d": np.float64, "c": np.complex64, "z": np.complex128}
ALL = list(DTYPES)
COMPLEX = ["c", "z"]
F = np.asfortranarray


def eps(p):
    return float(np.finfo(DTYPES[p]).eps)


def rand(rng, p, *shape):
    a = rng.standard_normal(shape)
    if p in COMPLEX:
        a = a + 1j * rng.standard_normal(shape)
    return F(a.astype(DTYPES[p]))


def hermitian(rng, p, n):
    a = rand(rng, p, n, n)
    return F((a + a.conj().T) / 2)


def positive_definite(rng, p, n):
    g = rand(rng, p, n, n)
    return F(g @ g.conj().T + n * np.eye(n, dtype=DTYPES[p]))


def work_size(value):
    """The optimal size a LAPACK workspace query wrote in its first element."""
    return max(1, int(np.real(value)))


def rwork(p):
    """The rwork argument (server-side, None) of a complex routine, nothing for a real one."""
    return (None,) if p in COMPLEX else ()


@pytest.mark.parametrize("p", ALL)
def test_gemm_with_a_conjugate_transpose(rng, p):
    m, n, k = 17, 9, 13
    a, b, c0 = rand(rng, p, k, m), rand(rng, p, n, k), rand(rng, p, m, n)
    alpha, beta = (1.5 - 0.5j, 0.25j) if p in COMPLEX else (1.5, -0.5)
    c = c0.copy(order="F")
    assert numrpc.call(p + "gemm", "C", "T", m, n, k, alpha, a, k, b, n, beta, c, m) is None
    want = alpha * a.conj().T @ b.T + beta * c0
    np.testing.assert_allclose(c, want, rtol=100 * eps(p), atol=100 * k * eps(p))


@pytest.mark.parametrize("p", ALL)
def test_gesv_solves(rng, p):
    n = 30
    a0, b0 = rand(rng, p, n, n), rand(rng, p, n, 2)
    a, b = a0.copy(order="F"), b0.copy(order="F")
    info, ipiv = numrpc.call(p + "gesv", n, 2, a, n, None, b, n)
    assert info == 0 and ipiv.dtype == np.int32
    residual = np.linalg.norm(a0 @ b - b0) / (np.linalg.norm(a0) * np.linalg.norm(b))
    assert residual < 10 * n * eps(p)
    wide = a0.astype(np.result_type(a0, np.float64))  # numpy's solve in double precision
    np.testing.assert_allclose(b, np.linalg.solve(wide, b0), rtol=1e4 * eps(p), atol=1e4 * eps(p))


@pytest.mark.parametrize("p", ALL)
def test_dots_and_norm_on_strided_views(rng, p):
    n = 11
    x, y = rand(rng, p, 2 * n)[::2], rand(rng, p, 3 * n)[::3]
    rtol = 10 * n * eps(p)
    if p in COMPLEX:
        assert numrpc.call(p + "dotu", n, x, 2, y, 3) == pytest.approx(np.dot(x, y), rel=rtol)
        assert numrpc.call(p + "dotc", n, x, 2, y, 3) == pytest.approx(np.vdot(x, y), rel=rtol)
    else:
        assert numrpc.call(p + "dot", n, x, 2, y, 3) == pytest.approx(np.dot(x, y), rel=rtol)
    nrm2 = {"s": "snrm2", "d": "dnrm2", "c": "scnrm2", "z": "dznrm2"}[p]
    norm = numrpc.call(nrm2, n, x, 2)
    assert isinstance(norm, float) and norm == pytest.approx(np.linalg.norm(x), rel=rtol)


@pytest.mark.parametrize("p", ALL)
def test_syev_heev_eigenvalues_and_vectors(rng, p):
    n = 20
    name = p + ("heev" if p in COMPLEX else "syev")
    a0 = hermitian(rng, p, n)
    results = numrpc.call(name, "V", "L", n, a0.copy(order="F"), n, None, None, -1, *rwork(p))
    lwork = work_size(results[-1][0])
    a = a0.copy(order="F")
    info, w, _ = numrpc.call(name, "V", "L", n, a, n, None, None, lwork, *rwork(p))
    assert info == 0 and w.dtype == np.finfo(DTYPES[p]).dtype  # w is real for c and z too
    scale = np.linalg.norm(a0)
    np.testing.assert_allclose(w, np.linalg.eigvalsh(a0), atol=100 * n * eps(p) * scale)
    np.testing.assert_allclose(a0 @ a, a * w, atol=100 * n * eps(p) * scale)


@pytest.mark.parametrize("p", ALL)
def test_syevr_heevr_an_index_range(rng, p):
    n, il, iu = 24, 3, 7
    name = p + ("heevr" if p in COMPLEX else "syevr")
    a0 = hermitian(rng, p, n)
    lwork, lrwork, liwork = 64 * n, 24 * n, 10 * n
    sizes = (None, lwork, None, lrwork) if p in COMPLEX else (None, lwork)
    found, info, w, z, isuppz = numrpc.call(name, "V", "I", "U", n, a0.copy(order="F"), n, 0.0, 0.0,
                                            il, iu, 0.0, None, None, n, None, *sizes, None, liwork)[:5]
    assert info == 0 and found == iu - il + 1 and z.shape == (n, found)
    want = np.linalg.eigvalsh(a0)[il - 1:iu]
    np.testing.assert_allclose(w[:found], want, atol=100 * n * eps(p) * np.linalg.norm(a0))


@pytest.mark.parametrize("p", ALL)
def test_sygv_hegv_generalized(rng, p):
    n = 15
    name = p + ("hegv" if p in COMPLEX else "sygv")
    a0, b0 = hermitian(rng, p, n), positive_definite(rng, p, n)
    info, w, _ = numrpc.call(name, 1, "N", "U", n, a0.copy(order="F"), n, b0.copy(order="F"), n, None, None,
                             64 * n, *rwork(p))
    assert info == 0
    np.testing.assert_allclose(w, sl.eigh(a0, b0, eigvals_only=True), atol=1e3 * n * eps(p))


@pytest.mark.parametrize("p", ALL)
def test_gesdd_thin_svd(rng, p):
    m, n = 14, 9
    a0 = rand(rng, p, m, n)
    args = ["S", m, n, a0.copy(order="F"), m, None, None, m, None, n]
    lwork = work_size(numrpc.call(p + "gesdd", *args, None, -1, *rwork(p), None)[-1][0])
    info, s, u, vt, _ = numrpc.call(p + "gesdd", *args, None, lwork, *rwork(p), None)
    assert info == 0 and u.shape == (m, n) and vt.shape == (n, n)
    np.testing.assert_allclose(s, np.linalg.svd(a0, compute_uv=False), rtol=100 * n * eps(p))
    np.testing.assert_allclose(u * s @ vt, a0, atol=100 * n * eps(p) * s[0])


@pytest.mark.parametrize("p", ALL)
def test_geev_eigenvalues(rng, p):
    n = 12
    a0 = rand(rng, p, n, n)
    head = ["N", "N", n, a0.copy(order="F"), n]
    if p in COMPLEX:
        info, w, vl, vr, _ = numrpc.call(p + "geev", *head, None, None, 1, None, 1, None, 8 * n, None)
    else:
        info, wr, wi, vl, vr, _ = numrpc.call(p + "geev", *head, None, None, None, 1, None, 1, None, 8 * n)
        w = wr + 1j * wi
    assert info == 0 and vl.size == 0 and vr.size == 0
    want = np.linalg.eigvals(a0)
    distance = np.abs(w[:, None] - want[None, :])  # each eigenvalue has its match in the other set
    assert distance.min(axis=1).max() < 1e3 * eps(p) and distance.min(axis=0).max() < 1e3 * eps(p)


@pytest.mark.parametrize("p", ALL)
def test_qr_geqrf_then_orgqr_ungqr_and_ormqr_unmqr(rng, p):
    m, n = 16, 6
    a0, c0 = rand(rng, p, m, n), rand(rng, p, m, 2)
    a = a0.copy(order="F")
    info, tau, _ = numrpc.call(p + "geqrf", m, n, a, m, None, None, 64 * n)
    assert info == 0
    r = np.triu(a[:n])
    np.testing.assert_allclose(np.abs(np.diag(r)), np.abs(np.diag(np.linalg.qr(a0)[1])), rtol=100 * eps(p))
    q = a.copy(order="F")
    assert numrpc.call(p + ("ungqr" if p in COMPLEX else "orgqr"), m, n, n, q, m, tau, None, 64 * n)[0] == 0
    tol = 100 * m * eps(p)
    np.testing.assert_allclose(q @ r, a0, atol=tol * np.linalg.norm(a0))
    np.testing.assert_allclose(q.conj().T @ q, np.eye(n), atol=tol)
    c = c0.copy(order="F")
    trans = "C" if p in COMPLEX else "T"
    assert numrpc.call(p + ("unmqr" if p in COMPLEX else "ormqr"), "L", trans, m, 2, n, a, m, tau, c, m,
                       None, 64 * m)[0] == 0
    np.testing.assert_allclose(c[:n], q.conj().T @ c0, atol=tol * np.linalg.norm(c0))


@pytest.mark.parametrize("p", ALL)
def test_trsm_and_herk(rng, p):
    m, n = 10, 4
    a = F(np.triu(rand(rng, p, m, m)) + 4 * np.eye(m, dtype=DTYPES[p]))
    b0 = rand(rng, p, m, n)
    b = b0.copy(order="F")
    numrpc.call(p + "trsm", "L", "U", "N", "N", m, n, 2.0, a, m, b, m)
    np.testing.assert_allclose(b, sl.solve_triangular(a, 2 * b0), rtol=1e3 * eps(p), atol=1e3 * eps(p))
    if p in COMPLEX:  # C := A A^H in the upper triangle, real alpha and beta
        c = F(np.zeros((m, m), DTYPES[p]))
        numrpc.call(p + "herk", "U", "N", m, n, 1.0, b0, m, 0.0, c, m)
        np.testing.assert_allclose(np.triu(c), np.triu(b0 @ b0.conj().T), atol=100 * n * eps(p))


@pytest.mark.parametrize("p", ALL)
def test_banded_tridiagonal_and_positive_tridiagonal(rng, p):
    n, kl, ku = 12, 2, 1
    dense = np.zeros((n, n), DTYPES[p])
    for offset in range(-kl, ku + 1):
        dense += np.diag(rand(rng, p, n - abs(offset)), offset)
    dense += 6 * np.eye(n, dtype=DTYPES[p])
    ab = F(np.zeros((2 * kl + ku + 1, n), DTYPES[p]))
    for j in range(n):
        for i in range(max(0, j - ku), min(n, j + kl + 1)):
            ab[kl + ku + i - j, j] = dense[i, j]
    b0 = rand(rng, p, n, 1)
    b = b0.copy(order="F")
    info, _ = numrpc.call(p + "gbsv", n, kl, ku, 1, ab, 2 * kl + ku + 1, None, b, n)
    assert info == 0
    tol = 1e3 * eps(p)
    np.testing.assert_allclose(b, np.linalg.solve(dense, b0), rtol=tol, atol=tol)

    dl, d, du = np.diag(dense, -1).copy(), np.diag(dense).copy(), np.diag(dense, 1).copy()
    b = b0.copy(order="F")
    assert numrpc.call(p + "gtsv", n, 1, dl, d, du, b, n) == 0
    tri = np.diag(np.diag(dense)) + np.diag(np.diag(dense, -1), -1) + np.diag(np.diag(dense, 1), 1)
    np.testing.assert_allclose(b, np.linalg.solve(tri, b0), rtol=tol, atol=tol)

    real = np.finfo(DTYPES[p]).dtype
    e = F(rand(rng, p, n - 1) / 2)
    d = (8 + rng.random(n)).astype(real)  # diagonally dominant: positive definite
    spd = np.diag(d).astype(DTYPES[p]) + np.diag(e, -1) + np.diag(e.conj(), 1)
    b = b0.copy(order="F")
    assert numrpc.call(p + "ptsv", n, 1, d, e, b, n) == 0
    np.testing.assert_allclose(b, np.linalg.solve(spd, b0), rtol=tol, atol=tol)


@pytest.mark.parametrize("p", ALL)
def test_lange_and_gecon(rng, p):
    n = 20
    a0 = rand(rng, p, n, n)
    for norm, order in (("1", 1), ("I", np.inf), ("F", "fro")):
        got = numrpc.call(p + "lange", norm, n, n, a0, n, None)
        assert got == pytest.approx(np.linalg.norm(a0, order), rel=10 * n * eps(p))
    lu = a0.copy(order="F")
    assert numrpc.call(p + "getrf", n, n, lu, n, None)[0] == 0
    anorm = numrpc.call(p + "lange", "1", n, n, a0, n, None)
    rcond, info = numrpc.call(p + "gecon", "1", n, lu, n, anorm, None, None)
    assert info == 0
    cond = np.linalg.cond(a0.astype(complex), 1)
    assert cond / 10 <= 1 / rcond <= cond * (1 + 1e3 * eps(p))  # an estimate, never above the truth
