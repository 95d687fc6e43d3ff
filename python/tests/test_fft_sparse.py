# test_fft_sparse.py -- the fft module (FFTW) against numpy.fft and the sparse
# module (SuperLU) against scipy.sparse.linalg.spsolve, on the same inputs.
import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as spl

import numrpc
from conftest import FFT, SPARSE

F = np.asfortranarray


@pytest.fixture
def fft():
    if not FFT.exists():
        pytest.skip(f"{FFT} not built: FFTW 3 (libfftw3-dev) is absent")


@pytest.fixture
def sparse():
    if not SPARSE.exists():
        pytest.skip(f"{SPARSE} not built: SuperLU (libsuperlu-dev) is absent")


def complexes(rng, shape, dtype=np.complex128):
    return F((rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype))


@pytest.mark.parametrize("n", [1, 13, 64, 1000])
def test_zfft_1d_is_numpys_fft_and_unnormalised_inverse(fft, rng, n):
    x = complexes(rng, n)
    y = x.copy()
    numrpc.call("zfft_1d", n, y, -1)
    np.testing.assert_allclose(y, np.fft.fft(x), rtol=1e-12, atol=1e-12 * n)
    numrpc.call("zfft_1d", n, y, +1)  # backward: n times the input, as FFTW leaves it
    np.testing.assert_allclose(y, n * x, rtol=1e-12, atol=1e-12 * n)


def test_zfft_2d_on_a_column_major_array_is_fft2(fft, rng):
    n1, n2 = 24, 10
    x = complexes(rng, (n1, n2))
    y = x.copy(order="F")
    numrpc.call("zfft_2d", n1, n2, y, -1)
    np.testing.assert_allclose(y, np.fft.fft2(x), rtol=1e-12, atol=1e-11)
    numrpc.call("zfft_2d", n1, n2, y, +1)
    np.testing.assert_allclose(y, n1 * n2 * x, rtol=1e-12, atol=1e-11)


@pytest.mark.parametrize("n", [1, 7, 360])
def test_real_transforms_1d_are_rfft_and_irfft(fft, rng, n):
    x = rng.standard_normal(n)
    y = numrpc.call("dfft_r2c_1d", n, x, None)
    assert y.dtype == np.complex128 and y.shape == (n // 2 + 1,)
    np.testing.assert_allclose(y, np.fft.rfft(x), rtol=1e-12, atol=1e-12 * n)
    back = numrpc.call("dfft_c2r_1d", n, y, None)
    np.testing.assert_allclose(back, n * np.fft.irfft(np.fft.rfft(x), n), rtol=1e-12, atol=1e-12 * n)


def test_real_transforms_2d_halve_the_first_dimension(fft, rng):
    n1, n2 = 9, 16
    x = F(rng.standard_normal((n1, n2)))
    y = numrpc.call("dfft_r2c_2d", n1, n2, x, None)
    assert y.shape == (n1 // 2 + 1, n2)
    # numpy's rfftn halves the last axis it is given: axis 0 here, as FFTW's Fortran layout.
    np.testing.assert_allclose(y, np.fft.rfftn(x, axes=(1, 0)), rtol=1e-12, atol=1e-11)
    back = numrpc.call("dfft_c2r_2d", n1, n2, y, None)
    np.testing.assert_allclose(back, n1 * n2 * x, rtol=1e-12, atol=1e-11)


def test_single_precision(fft, rng):
    n = 256
    x = complexes(rng, n, np.complex64)
    y = x.copy()
    numrpc.call("cfft_1d", n, y, -1)
    np.testing.assert_allclose(y, np.fft.fft(x.astype(np.complex128)), rtol=1e-4, atol=1e-4)
    r = rng.standard_normal(n).astype(np.float32)
    half = numrpc.call("sfft_r2c_1d", n, r, None)
    assert half.dtype == np.complex64
    np.testing.assert_allclose(half, np.fft.rfft(r.astype(np.float64)), rtol=1e-4, atol=1e-4)


def test_a_sign_other_than_plus_or_minus_one_is_refused(fft):
    x = np.ones(4, np.complex128)
    with pytest.raises(numrpc.BadArgument) as caught:
        numrpc.call("zfft_1d", 4, x, 3)
    assert "zfft_1d: sign is 3" in caught.value.detail
    np.testing.assert_array_equal(x, np.ones(4))


def random_csc(rng, n, dtype=np.float64):
    """A random sparse n x n matrix with a strong diagonal, in CSC form (int32 indices)."""
    a = sp.random(n, n, density=0.03, random_state=rng, format="csc", dtype=np.float64)
    if np.issubdtype(dtype, np.complexfloating):
        a = a + 1j * sp.random(n, n, density=0.03, random_state=rng, format="csc")
    a = (a + sp.diags(np.full(n, 8.0))).astype(dtype).tocsc()
    a.sum_duplicates()
    return a


def gssv(routine, a, b):
    """The remote solve of a x = b with a's CSC arrays; b (n x nrhs) becomes x."""
    n = a.shape[0]
    nrhs = 1 if b.ndim == 1 else b.shape[1]
    return numrpc.call(routine, n, a.nnz, a.data, a.indices.astype(np.int32), a.indptr.astype(np.int32),
                       nrhs, b)


@pytest.mark.parametrize("nrhs", [1, 4])
def test_dgssv_is_spsolve(sparse, rng, nrhs):
    n = 200
    a = random_csc(rng, n)
    b0 = F(rng.standard_normal((n, nrhs)))
    b = b0.copy(order="F")
    assert gssv("dgssv", a, b) == 0
    np.testing.assert_allclose(b, spl.spsolve(a, b0).reshape(n, nrhs), rtol=1e-10, atol=1e-12)


def test_zgssv_is_spsolve(sparse, rng):
    n = 120
    a = random_csc(rng, n, np.complex128)
    b0 = complexes(rng, (n, 3))
    b = b0.copy(order="F")
    assert gssv("zgssv", a, b) == 0
    np.testing.assert_allclose(b, spl.spsolve(a, b0), rtol=1e-10, atol=1e-12)


def test_singular_and_hostile_matrices_get_their_info_and_the_server_goes_on(sparse, rng):
    n = 50
    a = random_csc(rng, n).tolil()
    a[:, 17] = 0  # an empty column: structurally singular
    a = a.tocsc()
    a.eliminate_zeros()
    b = np.ones(n)
    assert gssv("dgssv", a, b) == 18
    np.testing.assert_array_equal(b, np.ones(n))
    good = random_csc(rng, n)
    bad_rows, bad_columns = good.copy(), good.copy()
    bad_rows.indices[5] = n  # a row index past the last row
    bad_columns.indptr[3] = bad_columns.indptr[4] + 1  # colptr falls
    assert gssv("dgssv", bad_rows, np.ones(n)) == -4
    assert gssv("dgssv", bad_columns, np.ones(n)) == -5
    b = np.ones(n)
    assert gssv("dgssv", good, b) == 0
    np.testing.assert_allclose(b, spl.spsolve(good, np.ones(n)), rtol=1e-10, atol=1e-12)
