# test_sparse_api.py -- numrpc.sparse.linalg.spsolve against scipy.sparse.linalg.spsolve
# on the same inputs: formats, dtypes, right-hand sides, singular A, errors, futures.
import concurrent.futures
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as spl

import numrpc
from conftest import SPARSE

try:
    from numrpc.sparse import linalg as nsl
except ImportError as e:  # the installed package lacks the subpackage: a packaging fault, not a skip
    nsl, MISSING = None, e

pytestmark = pytest.mark.filterwarnings("error::numrpc.CopyWarning")


@pytest.fixture(autouse=True)
def sparse_module():
    if not SPARSE.exists():
        pytest.skip(f"{SPARSE} not built: SuperLU (libsuperlu-dev) is absent")
    if nsl is None:
        pytest.fail(f"numrpc.sparse is not installed ({MISSING}): the package must list it")


def matrix(rng, n, dtype=np.float64, fmt="csc", density=0.05):
    """A random sparse n x n matrix with a strong diagonal."""
    a = sp.random(n, n, density=density, random_state=rng, format="coo")
    if np.issubdtype(dtype, np.complexfloating):
        a = a + 1j * sp.random(n, n, density=density, random_state=rng, format="coo")
    return (a + sp.diags(np.full(n, 6.0))).astype(dtype).asformat(fmt)


def vectors(rng, shape, dtype=np.float64, order="C"):
    b = rng.standard_normal(shape)
    if np.issubdtype(dtype, np.complexfloating):
        b = b + 1j * rng.standard_normal(shape)
    return np.asarray(b, dtype=dtype, order=order)


def snapshot(a):
    """What A holds, to check it is unchanged (its arrays and its format's flags)."""
    if sp.issparse(a):
        parts = [a.format, a.shape, a.dtype]
        if a.format in ("csc", "csr", "bsr"):
            parts += [a.data.copy(), a.indices.copy(), a.indptr.copy(), a.has_sorted_indices]
        elif a.format == "coo":
            parts += [a.data.copy(), a.row.copy(), a.col.copy()]
        return parts
    return [np.array(a, copy=True)]


def assert_same(before, after):
    assert len(before) == len(after)
    for x, y in zip(before, after):
        if isinstance(x, np.ndarray):
            np.testing.assert_array_equal(x, y)
        else:
            assert x == y


def assert_solution(got, want, dtype):
    assert type(got) is type(want) and got.shape == want.shape and got.dtype == want.dtype
    single = np.dtype(dtype) in (np.dtype(np.float32), np.dtype(np.complex64))
    if sp.issparse(want):
        got, want = got.toarray(), want.toarray()
    assert np.isfinite(want).all()  # a regular system (the singular ones have their own test)
    np.testing.assert_allclose(got, want, rtol=1e-5 if single else 1e-11, atol=1e-6 if single else 1e-12)


@pytest.mark.parametrize("fmt", ["csc", "csr", "coo"])
@pytest.mark.parametrize("dtype", [np.float64, np.complex128, np.float32, np.complex64])
@pytest.mark.parametrize("b_shape", ["n", "n1", "nk"])
@pytest.mark.parametrize("order", ["C", "F"])
def test_spsolve_is_scipys(rng, fmt, dtype, b_shape, order):
    n = 60
    a = matrix(rng, n, dtype, fmt)
    b = vectors(rng, {"n": (n,), "n1": (n, 1), "nk": (n, 3)}[b_shape], dtype, order)
    a_before, b_before = snapshot(a), b.copy(order="K")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sp.SparseEfficiencyWarning)  # both warn for COO
        want = spl.spsolve(a.copy(), b.copy())
        got = nsl.spsolve(a, b)
    assert_solution(got, want, dtype)
    assert got.ndim == (1 if b_shape != "nk" else 2)  # scipy's rule: (n, 1) gives a vector
    assert_same(a_before, snapshot(a))
    np.testing.assert_array_equal(b, b_before)


def test_mixed_and_integer_dtypes_promote_as_scipys(rng):
    n = 30
    a = matrix(rng, n)
    cases = [(a.astype(np.int64) + sp.identity(n, dtype=np.int64, format="csc") * 5, np.arange(n)),
             (a.astype(np.float32), np.ones(n, dtype=np.float64)),
             (a, vectors(rng, n, np.complex64)),
             (a.astype(np.complex64), np.ones(n, dtype=np.float32)),
             (a.astype(np.int8), np.ones(n, dtype=np.int8))]
    for m, b in cases:
        want, got = spl.spsolve(m.copy(), b.copy()), nsl.spsolve(m, b)
        assert_solution(got, want, want.dtype)


def test_duplicates_and_unsorted_indices_are_summed_in_a_copy(rng):
    n = 40
    base = matrix(rng, n).tocoo()
    rows = np.concatenate([base.row, base.row[:10]])  # ten entries twice
    cols = np.concatenate([base.col, base.col[:10]])
    data = np.concatenate([base.data, np.full(10, 0.5)])
    a = sp.csc_matrix((data, (rows, cols)), shape=(n, n))
    order = np.concatenate([np.arange(a.indptr[j + 1] - 1, a.indptr[j] - 1, -1) for j in range(n)])
    a = sp.csc_matrix((a.data[order], a.indices[order], a.indptr), shape=(n, n))  # rows falling in each column
    a.has_sorted_indices = False
    raw = sp.csc_matrix((np.concatenate([a.data, [1.0]]), np.concatenate([a.indices, [a.indices[-1]]]),
                         np.concatenate([a.indptr[:-1], [a.indptr[-1] + 1]])), shape=(n, n))  # one duplicate
    for m in (a, raw):
        before = snapshot(m)
        assert not m.has_canonical_format
        b = vectors(rng, n)
        want = spl.spsolve(m.copy(), b)
        assert_solution(nsl.spsolve(m, b), want, np.float64)
        assert_same(before, snapshot(m))


def test_dense_a_warns_as_scipy(rng):
    n = 12
    a = matrix(rng, n).toarray()
    b = vectors(rng, n)
    with pytest.warns(sp.SparseEfficiencyWarning):
        want = spl.spsolve(a, b)
    with pytest.warns(sp.SparseEfficiencyWarning):
        got = nsl.spsolve(a, b)
    assert_solution(got, want, np.float64)


@pytest.mark.parametrize("fmt", ["csc", "csr"])
def test_sparse_b_gives_a_sparse_x_of_as_class(rng, fmt):
    n = 50
    a = matrix(rng, n, fmt=fmt)
    b = sp.random(n, 4, density=0.3, random_state=rng, format="csc")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sp.SparseEfficiencyWarning)
        want = spl.spsolve(a.copy(), b)
    got = nsl.spsolve(a, b)
    assert_solution(got, want, np.float64)
    column = sp.csc_matrix(vectors(rng, (n, 1)))
    assert_solution(nsl.spsolve(a, column), spl.spsolve(a.copy(), column), np.float64)  # (n, 1): a vector


def singular_matrices(rng):
    n = 20
    empty_column = matrix(rng, n).tolil()
    empty_column[:, 7] = 0
    empty_column = empty_column.tocsc()
    empty_column.eliminate_zeros()
    zero_pivot = sp.csc_matrix(np.array([[1.0, 2.0], [2.0, 4.0]]))
    return [empty_column, zero_pivot, sp.csc_matrix(zero_pivot * (1 + 2j))]


def test_singular_a_warns_and_gives_nan_as_scipy(rng):
    for a in singular_matrices(rng):
        n = a.shape[0]
        for b in (np.ones(n), np.ones((n, 2))):
            with pytest.warns(spl.MatrixRankWarning, match="Matrix is exactly singular"):
                want = spl.spsolve(a.copy(), b)
            with pytest.warns(spl.MatrixRankWarning, match="Matrix is exactly singular"):
                got = nsl.spsolve(a, b)
            assert got.shape == want.shape and got.dtype == want.dtype
            assert np.isnan(got).all() and np.isnan(want).all()
            future = nsl.spsolve(a, b, block=False)
            with pytest.warns(spl.MatrixRankWarning):  # given when the result is read
                assert np.isnan(future.result(timeout=30)).all()
        with pytest.raises(RuntimeError, match="singular"):  # a sparse b: scipy's splu refuses it
            spl.spsolve(a.copy(), sp.csc_matrix(np.ones((n, 2))))
        with pytest.raises(RuntimeError, match="singular"):
            nsl.spsolve(a, sp.csc_matrix(np.ones((n, 2))))


def test_warnings_point_at_the_caller_blocking_or_not():
    singular = np.array([[1.0, 2.0], [2.0, 4.0]])  # dense: SparseEfficiencyWarning at the call
    for block in (True, False):
        with pytest.warns(Warning) as seen:
            got = nsl.spsolve(singular, np.ones(2), block=block)
            if not block:
                got = got.result(timeout=30)
        assert [w.category for w in seen] == [sp.SparseEfficiencyWarning, spl.MatrixRankWarning]
        assert all(w.filename == __file__ for w in seen)  # this test, not numrpc's driver
        assert np.isnan(got).all()


def test_empty_system_and_no_right_hand_side(rng):
    empty = sp.csc_matrix((0, 0))
    assert_solution(nsl.spsolve(empty, np.ones(0)), spl.spsolve(empty, np.ones(0)), np.float64)
    a = matrix(rng, 5)
    assert_solution(nsl.spsolve(a, np.ones((5, 0))), spl.spsolve(a, np.ones((5, 0))), np.float64)


A4 = sp.identity(4, format="csc")
BAD = [(sp.csc_matrix(np.ones((3, 4))), np.ones(3), {}), (A4, np.ones(5), {}), (A4, np.ones((3, 2)), {}),
       (A4, np.ones(4), dict(permc_spec="SIDEWAYS")), (A4, np.ones((4, 2, 1)), {})]


@pytest.mark.parametrize("a,b,kwargs", BAD, ids=["not-square", "short-b", "short-B", "permc", "3-D b"])
def test_bad_arguments_raise_what_scipy_raises(a, b, kwargs):
    with pytest.raises(Exception) as scipys:
        spl.spsolve(a.copy(), b, **kwargs)
    with pytest.raises(type(scipys.value)) as ours:
        nsl.spsolve(a, b, **kwargs)
    future = nsl.spsolve(a, b, block=False, **kwargs)
    with pytest.raises(type(ours.value)) as later:
        future.result(timeout=30)
    assert str(later.value) == str(ours.value)


def test_long_double_is_refused():
    a = sp.identity(3, dtype=np.longdouble, format="csc")
    with pytest.raises(TypeError):
        nsl.spsolve(a, np.ones(3))


def test_permc_spec_is_taken(rng):
    a, b = matrix(rng, 30), vectors(rng, 30)
    for spec in ["NATURAL", "MMD_ATA", "MMD_AT_PLUS_A", "COLAMD"]:
        assert_solution(nsl.spsolve(a, b, permc_spec=spec, use_umfpack=False), spl.spsolve(a, b), np.float64)


def test_futures_give_the_blocking_result(rng, servers):
    systems = [(matrix(rng, 80, dtype), vectors(rng, (80, 2), dtype))
               for dtype in (np.float64, np.complex128) for _ in range(4)]
    futures = {nsl.spsolve(a, b, block=False): (a, b) for a, b in systems}
    for future in concurrent.futures.as_completed(futures, timeout=60):
        a, b = futures[future]
        assert isinstance(future, concurrent.futures.Future)
        np.testing.assert_allclose(future.result(), nsl.spsolve(a, b), rtol=1e-13, atol=1e-14)
        assert future.calls[0].server in servers
    assert numrpc.calls_in_progress() == 0
