# test_linalg_decomp.py -- numrpc.linalg's decompositions against scipy.linalg on the same
# inputs: qr, eigh/eigvalsh, eig/eigvals, svd/svdvals, norm; remote arrays and futures.
import numpy as np
import pytest
import scipy.linalg as sl

import numrpc
import numrpc.linalg as la
from test_linalg import DTYPES, close, matrix, polluted, tol, unchanged

N = 40


def same_columns_up_to_phase(got, want, dtype):
    """Each column of got is the matching column of want times a unit scalar
    (eigen- and singular vectors are unique only so)."""
    assert got.shape == want.shape
    for k in range(want.shape[1]):
        g, w = got[:, k], want[:, k]
        phase = np.vdot(w, g)
        assert abs(abs(phase) - 1) < 100 * tol(dtype), k
        np.testing.assert_allclose(g, w * phase, atol=100 * tol(dtype))


# ---- qr ----


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(50, 30), (30, 50), (40, 40)])
@pytest.mark.parametrize("mode", ["full", "economic", "r", "raw"])
def test_qr_matches_scipy(rng, dtype, shape, mode):
    a = matrix(rng, shape, dtype, "C")
    a0 = a.copy()
    got, want = la.qr(a, mode=mode), sl.qr(a, mode=mode)
    unchanged((a, a0))
    assert len(got) == len(want)
    if mode == "raw":
        (qr, tau), r = got
        (qrs, taus), rs = want
        close(qr, qrs, dtype, 10)
        close(tau, taus, dtype, 10)
    else:
        for g, w in zip(got, want):
            close(g, w, dtype, 10)


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_qr_pivoting_and_remote(rng, dtype):
    a = matrix(rng, (30, 20), dtype, "F")
    q, r, p = la.qr(a, pivoting=True)
    qs, rs, ps = sl.qr(a, pivoting=True)
    np.testing.assert_array_equal(p, ps)
    close(q, qs, dtype, 10)
    close(r, rs, dtype, 10)
    for shape in ((30, 20), (20, 30), (25, 25)):
        a = matrix(rng, shape, dtype)
        with numrpc.asarray(a) as remote:
            for mode in ("full", "economic", "r"):
                for g, w in zip(la.qr(remote, mode=mode), sl.qr(a, mode=mode)):
                    close(g, w, dtype, 10)
            np.testing.assert_array_equal(np.asarray(remote), a)


# ---- eigh ----


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("driver", ["ev", "evd", "evr"])
@pytest.mark.parametrize("lower", [True, False])
def test_eigh_matches_scipy(rng, dtype, order, driver, lower):
    a = polluted(matrix(rng, (N, N), dtype, order, "her"), lower, rng)
    a0 = a.copy(order="K")
    w, v = la.eigh(a, lower=lower, driver=driver)
    unchanged((a, a0))
    ws, vs = sl.eigh(a, lower=lower, driver=driver)
    assert w.dtype == ws.dtype and v.dtype == vs.dtype
    close(w, ws, dtype, 10)
    same_columns_up_to_phase(v, vs, dtype)
    close(la.eigvalsh(a, lower=lower, driver=driver), ws, dtype, 10)


@pytest.mark.parametrize("dtype", [np.float32, np.complex128])
def test_eigh_subsets_and_generalized(rng, dtype):
    a = matrix(rng, (N, N), dtype, "C", "her")
    b = matrix(rng, (N, N), dtype, "C", "pos")
    w, v = la.eigh(a, subset_by_index=(3, 9))
    ws, vs = sl.eigh(a, subset_by_index=(3, 9))
    close(w, ws, dtype, 10)
    same_columns_up_to_phase(v, vs, dtype)
    lo, hi = float(ws[0]) - 0.5, float(ws[-1]) + 0.5
    close(la.eigh(a, subset_by_value=(lo, hi), eigvals_only=True),
          sl.eigh(a, subset_by_value=(lo, hi), eigvals_only=True), dtype, 10)
    for itype in (1, 2, 3):
        w, v = la.eigh(a, b, type=itype)
        ws, vs = sl.eigh(a, b, type=itype, driver="gv")
        close(w, ws, dtype, 100)
        same_columns_up_to_phase(v / np.linalg.norm(v, axis=0), vs / np.linalg.norm(vs, axis=0), dtype)
    with pytest.raises(NotImplementedError, match="gvd"):
        la.eigh(a, b, driver="gvd")
    with pytest.raises(ValueError, match="square"):
        la.eigh(np.ones((3, 4)))
    with pytest.raises(np.linalg.LinAlgError, match="positive definite"):
        la.eigh(a, -b)


# ---- eig ----


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("order", ["C", "F"])
def test_eig_matches_scipy(rng, dtype, order):
    a = matrix(rng, (N, N), dtype, order) - N * np.eye(N, dtype=dtype)  # complex pairs for real a
    a0 = a.copy(order="K")
    w, vl, vr = la.eig(a, left=True)
    unchanged((a, a0))
    ws, vls, vrs = sl.eig(a, left=True)
    assert w.dtype == ws.dtype and vr.dtype == vrs.dtype and vl.dtype == vls.dtype
    close(w, ws, dtype, 100)
    same_columns_up_to_phase(vr, vrs, dtype)
    same_columns_up_to_phase(vl, vls, dtype)
    close(la.eigvals(a), ws, dtype, 100)
    w2, vr2 = la.eig(a)
    same_columns_up_to_phase(vr2, vrs, dtype)
    assert la.eig(a, homogeneous_eigvals=True, right=False).shape == (2, N)


@pytest.mark.parametrize("dtype", [np.float64, np.complex64])
def test_eig_generalized(rng, dtype):
    a, b = matrix(rng, (20, 20), dtype), matrix(rng, (20, 20), dtype)
    w, vr = la.eig(a, b)
    ws, vrs = sl.eig(a, b)
    order, orders = np.argsort(w, kind="stable"), np.argsort(ws, kind="stable")
    close(w[order], ws[orders], dtype, 100)
    np.testing.assert_allclose(a @ vr, b @ vr * w, atol=1e3 * tol(dtype) * np.abs(a).max())


# ---- svd ----


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(50, 30), (30, 50)])
@pytest.mark.parametrize("driver", ["gesdd", "gesvd"])
@pytest.mark.parametrize("full", [True, False])
def test_svd_matches_scipy(rng, dtype, shape, driver, full):
    a = matrix(rng, shape, dtype, "C")
    a0 = a.copy()
    u, s, vh = la.svd(a, full_matrices=full, lapack_driver=driver)
    unchanged((a, a0))
    us, ss, vhs = sl.svd(a, full_matrices=full, lapack_driver=driver)
    assert u.shape == us.shape and vh.shape == vhs.shape and s.dtype == ss.dtype
    close(s, ss, dtype, 10)
    k = len(s)
    same_columns_up_to_phase(u[:, :k], us[:, :k], dtype)
    same_columns_up_to_phase(vh[:k].conj().T, vhs[:k].conj().T, dtype)
    close(la.svd(a, compute_uv=False, lapack_driver=driver), ss, dtype, 10)
    close(la.svdvals(a), ss, dtype, 10)


# ---- norm ----


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("order", ["C", "F"])
def test_norm_matches_scipy(rng, dtype, order):
    a = matrix(rng, (30, 20), dtype, order)
    for ord in (None, "fro", 1, np.inf, 2, -2, "nuc", -1, -np.inf):
        got, want = la.norm(a, ord), sl.norm(a, ord)
        assert np.asarray(got).dtype == np.asarray(want).dtype, ord
        close(got, want, dtype, 10)
    x = matrix(rng, (25,), dtype)
    for ord in (None, 2, 1, np.inf, 0):
        close(la.norm(x, ord), sl.norm(x, ord), dtype)
    close(la.norm(a, axis=0), sl.norm(a, axis=0), dtype)
    with numrpc.asarray(a) as remote:
        for ord in (None, 1, np.inf, 2, -1):
            close(la.norm(remote, ord), sl.norm(a, ord), dtype, 10)


# ---- remote arrays and futures ----


def test_decompositions_of_a_remote_array(rng):
    a = matrix(rng, (N, N), np.float64, "C", "sym")
    with numrpc.asarray(a) as remote:
        close(la.eigh(remote)[0], sl.eigh(a)[0], np.float64, 10)
        close(la.eigvals(remote), sl.eigvals(a), np.float64, 100)
        close(la.svdvals(remote), sl.svdvals(a), np.float64, 10)
        u, s, vh = la.svd(remote)
        close(u * s @ vh, a, np.float64, 100)
        np.testing.assert_array_equal(np.asarray(remote), a)


def test_decomposition_futures(rng):
    a = matrix(rng, (N, N), np.float64, "C", "sym")
    futures = {"eigh": la.eigh(a, block=False), "svd": la.svd(a, block=False), "qr": la.qr(a, block=False),
               "eig": la.eigvals(a, block=False), "norm": la.norm(a, 2, block=False)}
    close(futures["eigh"].result(timeout=60)[0], sl.eigh(a)[0], np.float64, 10)
    close(futures["svd"].result(timeout=60)[1], sl.svd(a)[1], np.float64, 10)
    for g, w in zip(futures["qr"].result(timeout=60), sl.qr(a)):
        close(g, w, np.float64, 10)
    close(np.sort(futures["eig"].result(timeout=60)), np.sort(sl.eigvals(a)), np.float64, 100)
    close(futures["norm"].result(timeout=60), sl.norm(a, 2), np.float64, 10)
    with pytest.raises(ValueError, match="Mode"):
        la.qr(a, mode="q", block=False).result(timeout=30)
