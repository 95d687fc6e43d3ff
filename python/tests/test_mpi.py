# test_mpi.py -- the six ScaLAPACK routines of stubs/scalapack.idl from Python, through a server
# with an MPI job of 2 ranks (conftest's mpi_server), against scipy's LAPACK and BLAS.
import numpy as np
import pytest
import scipy.linalg.blas as blas
import scipy.linalg.lapack as lapack

import numrpc

F = np.asfortranarray


@pytest.fixture
def on_job(mpi_server):
    """The routine name that runs on mpi_server's job: numrpc://host:port/name."""
    return lambda name: f"numrpc://{mpi_server}/{name}"


def padded(a, ld):
    """a in the first rows of a Fortran array of ld rows (a leading dimension
    beyond the row count), the rest -7."""
    out = np.full((ld, a.shape[1]), -7.0, order="F")
    out[:a.shape[0]] = a
    return out


def spd(rng, n):
    g = rng.standard_normal((n, n))
    return F(g @ g.T + n * np.eye(n))


@pytest.mark.parametrize("n, nrhs, lda", [(1, 1, 1), (40, 2, 43), (130, 3, 130)])
def test_pdgesv_equals_dgesv(rng, on_job, n, nrhs, lda):
    a0, b0 = F(rng.standard_normal((n, n))), F(rng.standard_normal((n, nrhs)))
    a, b = padded(a0, lda), padded(b0, n + 1)
    info, ipiv = numrpc.call(on_job("pdgesv"), n, nrhs, a, lda, None, b, n + 1)
    lu, piv, x, info_l = lapack.dgesv(a0, b0)
    assert info == info_l == 0
    np.testing.assert_array_equal(ipiv, piv + 1)
    np.testing.assert_allclose(a[:n], lu, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(b[:n], x, rtol=1e-9, atol=1e-12)
    assert (a[n:] == -7).all() and (b[n:] == -7).all()


@pytest.mark.parametrize("uplo", ["U", "L"])
def test_pdposv_equals_dposv(rng, on_job, uplo):
    n = 70
    a0, b0 = spd(rng, n), F(rng.standard_normal((n, 2)))
    a, b = a0.copy(order="F"), b0.copy(order="F")
    assert numrpc.call(on_job("pdposv"), uplo, n, 2, a, n, b, n) == 0
    c, x, info_l = lapack.dposv(a0, b0, lower=uplo == "L")
    assert info_l == 0
    np.testing.assert_allclose(b, x, rtol=1e-10)
    triangle = np.triu if uplo == "U" else np.tril
    np.testing.assert_allclose(triangle(a), triangle(c), rtol=1e-10, atol=1e-12)


def test_pdposv_of_a_matrix_not_positive_definite(rng, on_job):
    n = 30
    a0 = spd(rng, n)
    a0[11, 11] = -n
    b0 = F(rng.standard_normal((n, 1)))
    b = b0.copy(order="F")
    info = numrpc.call(on_job("pdposv"), "L", n, 1, a0.copy(order="F"), n, b, n)
    info_l = lapack.dposv(a0, b0, lower=True)[2]
    assert info == info_l == 12  # the leading minor of order 12 is not positive definite
    np.testing.assert_array_equal(b, b0)


@pytest.mark.parametrize("ta, tb, alpha, beta", [("N", "N", 1.0, 0.0), ("T", "N", -0.5, 2.0),
                                                 ("N", "T", 2.0, 1.0), ("T", "T", 1.5, -1.0)])
def test_pdgemm_equals_dgemm(rng, on_job, ta, tb, alpha, beta):
    m, n, k = 50, 37, 64
    a = F(rng.standard_normal((m, k) if ta == "N" else (k, m)))
    b = F(rng.standard_normal((k, n) if tb == "N" else (n, k)))
    c0 = F(rng.standard_normal((m, n)))
    c = c0.copy(order="F")
    numrpc.call(on_job("pdgemm"), ta, tb, m, n, k, alpha, a, a.shape[0], b, b.shape[0], beta, c, m)
    expected = blas.dgemm(alpha, a, b, beta, c0, trans_a=ta == "T", trans_b=tb == "T")
    np.testing.assert_allclose(c, expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("jobz", ["N", "V"])
def test_pdsyev_equals_dsyev(rng, on_job, jobz):
    n = 60
    g = rng.standard_normal((n, n))
    a0 = F(g + g.T)
    a = a0.copy(order="F")
    info, w, _ = numrpc.call(on_job("pdsyev"), jobz, "U", n, a, n, None, None, 3 * n)
    w_l, v_l, info_l = lapack.dsyev(a0, compute_v=jobz == "V", lower=False)
    assert info == info_l == 0
    np.testing.assert_allclose(w, w_l, rtol=1e-10, atol=1e-12)
    if jobz == "V":
        signs = np.sign(np.sum(a * v_l, axis=0))  # an eigenvector's sign is either
        np.testing.assert_allclose(a * signs, v_l, rtol=1e-8, atol=1e-10)


def test_pdgetrf_then_pdgetrs_equal_dgetrf_and_dgetrs(rng, on_job):
    n = 90
    a0, b0 = F(rng.standard_normal((n, n))), F(rng.standard_normal((n, 2)))
    a = a0.copy(order="F")
    info, ipiv = numrpc.call(on_job("pdgetrf"), n, n, a, n, None)
    lu, piv, info_l = lapack.dgetrf(a0)
    assert info == info_l == 0
    np.testing.assert_array_equal(ipiv, piv + 1)
    np.testing.assert_allclose(a, lu, rtol=1e-9, atol=1e-12)
    for trans in ("N", "T"):
        b = b0.copy(order="F")
        assert numrpc.call(on_job("pdgetrs"), trans, n, 2, a, n, ipiv, b, n) == 0
        x, info_l = lapack.dgetrs(lu, piv, b0, trans=0 if trans == "N" else 1)
        np.testing.assert_allclose(b, x, rtol=1e-9, atol=1e-12)


def test_pdgesv_as_a_future(rng, on_job, mpi_server):
    n = 100
    a0, b0 = F(rng.standard_normal((n, n))), rng.standard_normal(n)
    a, b = a0.copy(order="F"), b0.copy()
    future = numrpc.call_async(on_job("pdgesv"), n, 1, a, n, None, b, n)
    info, ipiv = future.result(timeout=60)
    assert info == 0
    np.testing.assert_array_equal(ipiv, lapack.dgesv(a0, b0)[1] + 1)
    np.testing.assert_allclose(b, np.linalg.solve(a0, b0), rtol=1e-9)
    assert future.call_info.server == mpi_server


def test_pdgesv_on_a_server_without_a_job(mpi_server):
    """The session's servers load scalapack but run no job: a clear error."""
    a, b = F(np.eye(2)), np.ones(2)
    with pytest.raises(numrpc.Error) as caught:
        numrpc.call("pdgesv", 2, 1, a, 2, None, b, 2)
    assert caught.value.name == "NUMRPC_ESERVER"
    assert "pdgesv runs on an MPI job, and this server was started without --mpi-ranks" in str(caught.value)
