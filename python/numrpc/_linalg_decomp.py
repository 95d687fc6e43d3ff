# _linalg_decomp.py -- numrpc.linalg's orthogonal decompositions and norms: qr, svd and
# norm, each one LAPACK driver call (plus a workspace query the first time).
from __future__ import annotations

from typing import Any, Optional, Union

import numpy as np
from numpy.linalg import LinAlgError

from ._linalg_run import Matrix, buffer, f_view, illegal, release, scratch, validated, workspace
from ._ops import Call, Free, Get, OperationFuture, run
from ._remote import RemoteArray, lapack_type


def _matrix(a1, dtype, prefix, reuse):
    """An operation step: a matrix LAPACK may overwrite: a Fortran-ordered
    copy of an array (a itself when reuse allows), or a scratch copy of a
    RemoteArray made on its server."""
    if isinstance(a1, RemoteArray):
        return (yield from scratch(a1, dtype, prefix))
    return buffer(a1, dtype, reuse)


def _contents(matrix):
    """An operation step: what LAPACK left in matrix (a handle comes back)."""
    if isinstance(matrix, np.ndarray):
        return matrix
    return (yield Get(matrix))


# ---- qr ----


def qr(a: Matrix, overwrite_a: bool = False, lwork: Optional[int] = None, mode: str = "full",
       pivoting: bool = False, check_finite: bool = True, *, block: bool = True) -> Union[tuple, OperationFuture]:
    """QR decomposition on a numrpc server (scipy.linalg.qr).

    Parameters
    ----------
    a : (M, N) array_like or RemoteArray
    overwrite_a, check_finite : bool, optional
        As in numrpc.linalg.solve.
    lwork : int, optional
        Workspace size; by default LAPACK's optimum (asked once per shape).
    mode : {'full', 'r', 'economic', 'raw'}, optional
        Q (M, M) and R (M, N); R only; Q (M, K) and R (K, N) with
        K = min(M, N); or ((qr, tau), R) as LAPACK leaves them.
    pivoting : bool, optional
        Column pivoting (?geqp3): also return P with ``a[:, P] = Q @ R``.
    block : bool, optional
        False: return a concurrent.futures.Future of the result.

    Returns
    -------
    Q : ndarray
        Not for mode 'r'.
    R : ndarray
    P : (N,) ndarray of int32
        Only with pivoting.
    """
    return run(_qr(a, overwrite_a, lwork, mode, pivoting, check_finite), block)


def _qr(a, overwrite_a, lwork, mode, pivoting, check_finite):
    if mode not in ("full", "qr", "r", "economic", "raw"):
        raise ValueError("Mode argument should be one of ['full', 'r', 'economic', 'raw']")
    a1 = validated(a, check_finite)
    if len(a1.shape) != 2:
        raise ValueError("expected a 2-D array")
    m, n = a1.shape
    prefix, dtype = lapack_type(a1.dtype)
    cplx = dtype.kind == "c"
    matrix = yield from _matrix(a1, dtype, prefix, overwrite_a)
    remote = not isinstance(matrix, np.ndarray)
    try:
        if pivoting:
            jpvt = np.zeros(n, dtype=np.int32)
            extra = (None,) if cplx else ()
            size = lwork if lwork not in (None, -1) else (
                yield from workspace(prefix + "geqp3", (m, n, matrix, m, jpvt, None, None, -1) + extra, 2))
            info, tau, _ = yield Call(prefix + "geqp3", m, n, matrix, m, jpvt, None, None, size, *extra)
            jpvt -= 1
        else:
            size = lwork if lwork not in (None, -1) else (
                yield from workspace(prefix + "geqrf", (m, n, matrix, m, None, None, -1), 2))
            info, tau, _ = yield Call(prefix + "geqrf", m, n, matrix, m, None, None, size)
        if info < 0:
            raise illegal(info, "geqp3" if pivoting else "geqrf")
        factors = yield from _contents(matrix)
        r = np.triu(factors) if mode not in ("economic", "raw") or m < n else np.triu(factors[:n, :])
        rj = (r, jpvt) if pivoting else (r,)
        if mode == "r":
            q = None
        elif mode == "raw":
            return ((factors, tau),) + rj
        elif remote and m <= n or mode == "economic" and remote:  # Q formed where the reflectors are
            q = yield from _orgqr(prefix, m, min(m, n), tau, matrix, lwork)
            q = (yield Get(matrix))[:, :min(m, n)]
        elif m < n:
            q = yield from _orgqr(prefix, m, m, tau, factors[:, :m], lwork)
        elif mode == "economic":
            q = yield from _orgqr(prefix, m, n, tau, factors, lwork)
        else:
            room = np.empty((m, m), dtype=dtype, order="F")
            room[:, :n] = factors
            q = yield from _orgqr(prefix, m, m, tau, room, lwork)
    except BaseException:
        if remote:
            release(matrix)
        raise
    if remote:
        yield Free(matrix)
    return rj if q is None else (q,) + rj


def _orgqr(prefix, m, cols, tau, matrix, lwork):
    """An operation step: Q's first cols columns from the len(tau) reflectors in
    matrix (overwritten with them); gives matrix."""
    name = prefix + ("ungqr" if prefix in "cz" else "orgqr")
    k = len(tau)
    size = lwork if lwork not in (None, -1) else (
        yield from workspace(name, (m, cols, k, matrix, m, tau, None, -1), 1))
    info, _ = yield Call(name, m, cols, k, matrix, m, tau, None, size)
    if info < 0:
        raise illegal(info, "gorgqr/gungqr")
    return matrix


# ---- svd ----


def svd(a: Matrix, full_matrices: bool = True, compute_uv: bool = True, overwrite_a: bool = False,
        check_finite: bool = True, lapack_driver: str = "gesdd", *,
        block: bool = True) -> Union[tuple, np.ndarray, OperationFuture]:
    """Singular value decomposition ``a = U @ diag(s) @ Vh`` on a numrpc server
    (scipy.linalg.svd).

    Parameters
    ----------
    a : (M, N) array_like or RemoteArray
    full_matrices : bool, optional
        U (M, M) and Vh (N, N); else (M, K) and (K, N), K = min(M, N).
    compute_uv : bool, optional
        False: the singular values only.
    overwrite_a, check_finite : bool, optional
        As in numrpc.linalg.solve.
    lapack_driver : {'gesdd', 'gesvd'}, optional
        Divide and conquer (the default) or the plain algorithm.
    block : bool, optional
        False: return a concurrent.futures.Future of the result.

    Returns
    -------
    U : ndarray
    s : (K,) ndarray
        Singular values, descending.
    Vh : ndarray
        U and Vh only when compute_uv.

    Raises
    ------
    numpy.linalg.LinAlgError
        If the SVD does not converge.
    """
    return run(_svd(a, full_matrices, compute_uv, overwrite_a, check_finite, lapack_driver), block)


def svdvals(a: Matrix, overwrite_a: bool = False, check_finite: bool = True, *,
            block: bool = True) -> Union[np.ndarray, OperationFuture]:
    """Singular values of a matrix, descending (scipy.linalg.svdvals).

    Returns
    -------
    s : (min(M, N),) ndarray
    """
    return run(_svd(a, True, False, overwrite_a, check_finite, "gesdd", values_only=True), block)


def _svd(a, full_matrices, compute_uv, overwrite_a, check_finite, lapack_driver, values_only=False):
    a1 = validated(a, check_finite)
    if values_only and a1.size == 0 and len(a1.shape) == 2:
        return np.empty(0)
    if len(a1.shape) != 2:
        raise ValueError("expected matrix")
    m, n = a1.shape
    if not isinstance(lapack_driver, str):
        raise TypeError("lapack_driver must be a string")
    if lapack_driver not in ("gesdd", "gesvd"):
        raise ValueError(f'lapack_driver must be "gesdd" or "gesvd", not "{lapack_driver}"')
    prefix, dtype = lapack_type(a1.dtype)
    cplx, k = dtype.kind == "c", min(m, n)
    job = ("A" if full_matrices else "S") if compute_uv else "N"
    ldu = max(1, m) if compute_uv else 1
    ldvt = max(1, n if full_matrices else k) if compute_uv else 1
    matrix = yield from _matrix(a1, dtype, prefix, overwrite_a)
    name = prefix + lapack_driver
    if lapack_driver == "gesdd":
        head, extra = (job, m, n, matrix, m, None, None, ldu, None, ldvt, None), (None, None) if cplx else (None,)
    else:
        head, extra = (job, job, m, n, matrix, m, None, None, ldu, None, ldvt, None), (None,) if cplx else ()
    try:
        lwork = yield from workspace(name, head + (-1,) + extra, 4)
        info, s, u, vt = (yield Call(name, *head, lwork, *extra))[:4]
    except BaseException:
        if not isinstance(matrix, np.ndarray):
            release(matrix)
        raise
    if not isinstance(matrix, np.ndarray):
        yield Free(matrix)
    if info > 0:
        raise LinAlgError("SVD did not converge")
    if info < 0:
        raise ValueError(f"illegal value in {-info}th argument of internal gesdd")
    return (u, s, vt) if compute_uv else s


# ---- norm ----

_LANGE = {None: "F", "fro": "F", "f": "F", 1: "1", np.inf: "I"}


def norm(a: Matrix, ord: Any = None, axis: Any = None, keepdims: bool = False, check_finite: bool = True, *,
         block: bool = True) -> Union[float, np.ndarray, OperationFuture]:
    """Matrix or vector norm (scipy.linalg.norm), matrices' on a numrpc server.

    Parameters
    ----------
    a : array_like or RemoteArray
    ord : {None, 'fro', 1, inf, 2, -2, 'nuc', ...}, optional
        For a matrix: Frobenius (None, 'fro'), 1 and inf by ?lange, 2, -2
        and 'nuc' from the singular values (?gesdd); for a vector: 2 (None)
        by ?nrm2. Other orders, an `axis`, `keepdims`, integer arrays and
        empty ones are numpy.linalg.norm's, computed here (a RemoteArray is
        brought back for them).
    axis, keepdims : optional
        As numpy.linalg.norm.
    check_finite : bool, optional
        As in numrpc.linalg.solve.
    block : bool, optional
        False: return a concurrent.futures.Future of the result.

    Returns
    -------
    n : float
        The norm: a Python float for a vector and for orders 1 and inf (as
        scipy's BLAS and LAPACK paths give), else a numpy scalar of the
        array's real precision.
    """
    return run(_norm(a, ord, axis, keepdims, check_finite), block)


def _norm(a, ord, axis, keepdims, check_finite):
    a1 = validated(a, check_finite)
    remote = isinstance(a1, RemoteArray)
    served = (a1.size and a1.dtype.char in "fdFD" and axis is None and not keepdims and
              (a1.ndim == 1 and ord in (None, 2) or a1.ndim == 2 and (ord in _LANGE or ord in (2, -2, "nuc"))))
    if not served:
        if remote:
            a1 = yield Get(a1.handle)
        return np.linalg.norm(a1, ord=ord, axis=axis, keepdims=keepdims)
    prefix, dtype = lapack_type(a1.dtype)
    real = np.dtype(dtype.char.lower()).type
    if a1.ndim == 1:
        name = {"s": "snrm2", "d": "dnrm2", "c": "scnrm2", "z": "dznrm2"}[prefix]
        x = a1.handle if remote else np.ascontiguousarray(a1, dtype=dtype)
        return float((yield Call(name, a1.shape[0], x, 1)))  # a Python float, as scipy's BLAS nrm2
    if ord in _LANGE:
        which = _LANGE[ord]
        if remote:
            matrix = a1.handle
        else:
            view, flipped = f_view(a1)  # ||a^T||_1 = ||a||_inf
            matrix = np.asarray(view, dtype=dtype, order="F")
            if flipped:
                which = {"1": "I", "I": "1", "F": "F"}[which]
        m, n = a1.shape if remote else matrix.shape
        value = yield Call(prefix + "lange", which, m, n, matrix, m, None)
        return real(value) if _LANGE[ord] == "F" else float(value)  # the types scipy's own paths give
    source = a1 if remote else f_view(a1)[0]  # the singular values of a^T are a's
    s = yield from _svd(source, False, False, False, False, "gesdd")
    return real(s[0] if ord == 2 else s[-1] if ord == -2 else s.sum())
