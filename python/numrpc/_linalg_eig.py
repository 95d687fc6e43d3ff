# _linalg_eig.py -- numrpc.linalg's eigenproblems: eigh / eigvalsh (?syev, ?syevd,
# ?syevr, ?sygv and their Hermitian twins) and eig / eigvals (?geev, ?ggev).
from __future__ import annotations

from typing import Any, Optional, Union

import numpy as np
from numpy.linalg import LinAlgError

from ._linalg_decomp import _contents, _matrix
from ._linalg_run import Matrix, buffer, f_view, release, square, validated, workspace
from ._ops import Call, Free, OperationFuture, run, warn
from ._remote import RemoteArray, lapack_type


# ---- eigh ----

_DRIVERS = [None, "ev", "evd", "evr", "evx", "gv", "gvd", "gvx"]
_SERVED = ("ev", "evd", "evr", "gv")


def eigh(a: Matrix, b: Optional[Matrix] = None, lower: bool = True, eigvals_only: bool = False,
         overwrite_a: bool = False, overwrite_b: bool = False, turbo: bool = False, eigvals: Any = None,
         type: int = 1, check_finite: bool = True, subset_by_index: Any = None, subset_by_value: Any = None,
         driver: Optional[str] = None, *, block: bool = True) -> Union[tuple, np.ndarray, OperationFuture]:
    """Eigenvalues (and vectors) of a Hermitian or real symmetric matrix on a
    numrpc server (scipy.linalg.eigh).

    Parameters
    ----------
    a : (N, N) array_like or RemoteArray
        Only the triangle `lower` chooses is read.
    b : (N, N) array_like, optional
        Positive definite: solve the generalized problem (?sygv / ?hegv).
    lower : bool, optional
        Read the lower triangle (the default) or the upper one.
    eigvals_only : bool, optional
        Only the eigenvalues.
    overwrite_a, overwrite_b, check_finite : bool, optional
        As in numrpc.linalg.solve.
    turbo, eigvals : optional
        Deprecated in scipy (``driver='gvd'``, `subset_by_index`).
    type : {1, 2, 3}, optional
        Generalized problem: ``a v = w b v``, ``a b v = w v`` or ``b a v = w v``.
    subset_by_index : (int, int), optional
        Eigenvalues lo..hi (0-based, ascending); driver 'evr'.
    subset_by_value : (float, float), optional
        Eigenvalues in (lo, hi]; driver 'evr'.
    driver : {'ev', 'evd', 'evr', 'gv'}, optional
        ?syev, ?syevd, ?syevr (the default), ?sygv (the default with `b`).
        'evx', 'gvd' and 'gvx' are not served: NotImplementedError.
    block : bool, optional
        False: return a concurrent.futures.Future of the result.

    Returns
    -------
    w : (M,) ndarray
        Eigenvalues, ascending, each repeated by its multiplicity.
    v : (N, M) ndarray
        Normalized eigenvectors in columns (not with `eigvals_only`).

    Raises
    ------
    numpy.linalg.LinAlgError
        If the algorithm does not converge, or `b` is not positive definite.
    ValueError
        If the shapes, the driver or the subset are not valid.
    """
    return run(_eigh(a, b, lower, eigvals_only, overwrite_a, overwrite_b, turbo, eigvals, type, check_finite,
                     subset_by_index, subset_by_value, driver), block)


def eigvalsh(a: Matrix, b: Optional[Matrix] = None, lower: bool = True, overwrite_a: bool = False,
             overwrite_b: bool = False, turbo: bool = False, eigvals: Any = None, type: int = 1,
             check_finite: bool = True, subset_by_index: Any = None, subset_by_value: Any = None,
             driver: Optional[str] = None, *, block: bool = True) -> Union[np.ndarray, OperationFuture]:
    """Eigenvalues of a Hermitian or real symmetric matrix (scipy.linalg.eigvalsh):
    `eigh` with ``eigvals_only=True``.

    Returns
    -------
    w : (M,) ndarray
        Eigenvalues, ascending.
    """
    return run(_eigh(a, b, lower, True, overwrite_a, overwrite_b, turbo, eigvals, type, check_finite,
                     subset_by_index, subset_by_value, driver), block)


def _eigh(a, b, lower, eigvals_only, overwrite_a, overwrite_b, turbo, eigvals, itype, check_finite,
          subset_by_index, subset_by_value, driver):
    if turbo:
        warn("Keyword argument 'turbo' is deprecated in favour of 'driver=gvd' keyword instead and "
             "will be removed in SciPy 1.12.0.", DeprecationWarning)
    if eigvals:
        warn("Keyword argument 'eigvals' is deprecated in favour of 'subset_by_index' keyword instead "
             "and will be removed in SciPy 1.12.0.", DeprecationWarning)
    job = "N" if eigvals_only else "V"
    if driver not in _DRIVERS:
        raise ValueError('"{}" is unknown. Possible values are "None", "{}".'.format(
            driver, '", "'.join(_DRIVERS[1:])))
    a1 = validated(a, check_finite)
    n = square(a1, 'expected square "a" matrix')
    b1 = None
    if b is not None:
        b1 = validated(b, check_finite)
        if len(b1.shape) != 2 or b1.shape[0] != b1.shape[1]:
            raise ValueError('expected square "b" matrix')
        if b1.shape != a1.shape:
            raise ValueError(f"wrong b dimensions {b1.shape}, should be {a1.shape}")
        if itype not in (1, 2, 3):
            raise ValueError('"type" keyword only accepts 1, 2, and 3.')
    subset_by_index = subset_by_index if eigvals is None else eigvals
    subset = subset_by_index is not None or subset_by_value is not None
    if subset_by_index and subset_by_value:
        raise ValueError("Either index or value subset can be requested.")
    if turbo and b is not None:
        driver = "gvx" if subset else "gvd"
    span = ("A", 0.0, 0.0, 1, max(n, 1))  # range, vl, vu, il, iu
    if subset_by_index:
        lo, hi = [int(x) for x in subset_by_index]
        if not 0 <= lo <= hi < n:
            raise ValueError("Requested eigenvalue indices are not valid. Valid range is [0, {}] and start <= end, "
                             "but start={}, end={} is given".format(n - 1, lo, hi))
        span = ("I", 0.0, 0.0, lo + 1, hi + 1)
    if subset_by_value:
        lo, hi = subset_by_value
        if not -np.inf <= lo < hi <= np.inf:
            raise ValueError("Requested eigenvalue bounds are not valid. Valid range is (-inf, inf) and low < "
                             "high, but low={}, high={} is given".format(lo, hi))
        span = ("V", float(lo), float(hi), 1, max(n, 1))
    if driver:
        if b is None and driver in ("gv", "gvd", "gvx"):
            raise ValueError(f"{driver} requires input b array to be supplied for generalized eigenvalue problems.")
        if b is not None and driver in ("ev", "evd", "evr", "evx"):
            raise ValueError(f'"{driver}" does not accept input b array for standard eigenvalue problems.')
        if subset and driver in ("ev", "evd", "gv", "gvd"):
            raise ValueError(f'"{driver}" cannot compute subsets of eigenvalues')
    else:
        driver = "evr" if b is None else ("gvx" if subset else "gv")
    if driver not in _SERVED:
        raise NotImplementedError(f"eigh: driver {driver!r} is not served by numrpc (?syev 'ev', ?syevd 'evd', "
                                  "?syevr 'evr' and ?sygv 'gv' are)")
    prefix, dtype = lapack_type(*[x.dtype for x in (a1, b1) if x is not None])
    cplx = dtype.kind == "c"
    # A C-ordered a is a^T in Fortran order: the other triangle of the same
    # symmetric matrix, or of conj(a) when Hermitian (then the vectors are conjugated).
    flipped = not isinstance(a1, RemoteArray) and f_view(a1)[1] and (
        b1 is None or not isinstance(b1, RemoteArray) and f_view(b1)[1])
    uplo = "L" if lower != flipped else "U"
    matrix = buffer(a1.T, dtype, overwrite_a) if flipped else (yield from _matrix(a1, dtype, prefix, overwrite_a))
    handles = [] if isinstance(matrix, np.ndarray) else [matrix]
    try:
        if b1 is not None:
            other = buffer(b1.T, dtype, overwrite_b) if flipped else (
                yield from _matrix(b1, dtype, prefix, overwrite_b))
            if not isinstance(other, np.ndarray):
                handles.append(other)
            w, v, found, info = yield from _generalized(prefix, cplx, itype, job, uplo, n, matrix, other)
        else:
            w, v, found, info = yield from _standard(prefix, cplx, driver, job, uplo, n, matrix, span)
        if info == 0 and v is None and job == "V":
            v = yield from _contents(matrix)
    except BaseException:
        for h in handles:
            release(h)
        raise
    for h in handles:
        yield Free(h)
    if info != 0:
        raise _eigh_error(info, n, driver, eigvals_only, prefix + ("he" if cplx else "sy") + driver)
    if subset:
        w = w[:found]
        v = v[:, :found] if v is not None else v
    if eigvals_only:
        return w
    if flipped and cplx:
        v = np.conjugate(v, out=v)
    return w, v


def _standard(prefix, cplx, driver, job, uplo, n, matrix, span):
    """An operation step: ?syev / ?syevd / ?syevr (?heev... for complex);
    gives (w, the vectors when they are not in matrix, how many, info)."""
    name = prefix + ("he" if cplx else "sy") + driver
    if driver == "ev":
        extra = (None,) if cplx else ()
        lwork = yield from workspace(name, (job, uplo, n, matrix, n, None, None, -1) + extra, 2)
        info, w, _ = yield Call(name, job, uplo, n, matrix, n, None, None, lwork, *extra)
        return w, None, n, info
    if driver == "evd":
        if cplx:
            lwork, lrwork, liwork = yield from workspace(
                name, (job, uplo, n, matrix, n, None, None, -1, None, -1, None, -1), 2, 3, 4)
            info, w = (yield Call(name, job, uplo, n, matrix, n, None, None, lwork, None, lrwork, None, liwork))[:2]
        else:
            lwork, liwork = yield from workspace(name, (job, uplo, n, matrix, n, None, None, -1, None, -1), 2, 3)
            info, w = (yield Call(name, job, uplo, n, matrix, n, None, None, lwork, None, liwork))[:2]
        return w, None, n, info
    ldz = max(n, 1) if job == "V" else 1
    head = (job, span[0], uplo, n, matrix, n) + span[1:] + (0.0, None, None, ldz, None, None)
    if cplx:
        sizes = yield from workspace(name, head + (-1, None, -1, None, -1), 5, 6, 7)
        found, info, w, z = (yield Call(name, *head, sizes[0], None, sizes[1], None, sizes[2]))[:4]
    else:
        sizes = yield from workspace(name, head + (-1, None, -1), 5, 6)
        found, info, w, z = (yield Call(name, *head, sizes[0], None, sizes[1]))[:4]
    return w, (z if job == "V" else None), found, info


def _generalized(prefix, cplx, itype, job, uplo, n, matrix, other):
    """An operation step: ?sygv / ?hegv; gives (w, None, n, info)."""
    name = prefix + ("hegv" if cplx else "sygv")
    extra = (None,) if cplx else ()
    lwork = yield from workspace(name, (itype, job, uplo, n, matrix, n, other, n, None, None, -1) + extra, 2)
    info, w, _ = yield Call(name, itype, job, uplo, n, matrix, n, other, n, None, None, lwork, *extra)
    return w, None, n, info


def _eigh_error(info, n, driver, eigvals_only, routine):
    if info < -1:
        return LinAlgError(f"Illegal value in argument {-info} of internal {routine}")
    if info > n:
        return LinAlgError(f"The leading minor of order {info - n} of B is not positive definite. The "
                           "factorization of B could not be completed and no eigenvalues or eigenvectors were "
                           "computed.")
    if driver in ("ev", "gv") or driver == "evd" and eigvals_only:
        return LinAlgError(f"The algorithm failed to converge; {info} off-diagonal elements of an intermediate "
                           "tridiagonal form did not converge to zero.")
    if driver == "evd":
        return LinAlgError(f"The algorithm failed to compute an eigenvalue while working on the submatrix lying "
                           f"in rows and columns {info}/{n + 1} through mod({info},{n + 1}).")
    return LinAlgError("Internal Error.")


# ---- eig ----


def eig(a: Matrix, b: Optional[Matrix] = None, left: bool = False, right: bool = True, overwrite_a: bool = False,
        overwrite_b: bool = False, check_finite: bool = True, homogeneous_eigvals: bool = False, *,
        block: bool = True) -> Union[tuple, np.ndarray, OperationFuture]:
    """Eigenvalues and right (or left) eigenvectors of a square matrix on a
    numrpc server (scipy.linalg.eig).

    Parameters
    ----------
    a : (M, M) array_like or RemoteArray
    b : (M, M) array_like, optional
        Solve the generalized problem ``a vr = w b vr`` (?ggev).
    left, right : bool, optional
        Return the left (``a^H vl = conj(w) vl``) and right eigenvectors.
    overwrite_a, overwrite_b, check_finite : bool, optional
        As in numrpc.linalg.solve.
    homogeneous_eigvals : bool, optional
        Return the eigenvalues as (alpha, beta) pairs, shape (2, M).
    block : bool, optional
        False: return a concurrent.futures.Future of the result.

    Returns
    -------
    w : (M,) or (2, M) complex ndarray
        Eigenvalues.
    vl, vr : (M, M) ndarray
        Normalized eigenvectors in columns, when asked (complex unless all
        eigenvalues of a real matrix are real).

    Raises
    ------
    numpy.linalg.LinAlgError
        If the algorithm does not converge.
    ValueError
        If the matrices are not square or differ in shape.
    """
    return run(_eig(a, b, left, right, overwrite_a, overwrite_b, check_finite, homogeneous_eigvals), block)


def eigvals(a: Matrix, b: Optional[Matrix] = None, overwrite_a: bool = False, check_finite: bool = True,
            homogeneous_eigvals: bool = False, *, block: bool = True) -> Union[np.ndarray, OperationFuture]:
    """Eigenvalues of a square matrix (scipy.linalg.eigvals): `eig` without vectors.

    Returns
    -------
    w : (M,) or (2, M) complex ndarray
    """
    return run(_eig(a, b, False, False, overwrite_a, False, check_finite, homogeneous_eigvals), block)


def _make_complex_eigvecs(w, vin, dtype):
    """LAPACK's real pairs of columns (re, im) as complex conjugate vectors (scipy's rule)."""
    v = np.array(vin, dtype=dtype)
    m = w.imag > 0
    m[:-1] |= w.imag[1:] < 0  # LAPACK bug workaround, as scipy
    for i in np.flatnonzero(m):
        v.imag[:, i] = vin[:, i + 1]
        np.conj(v[:, i], v[:, i + 1])
    return v


def _make_eigvals(alpha, beta, homogeneous):
    if homogeneous:
        return np.vstack((alpha, np.ones_like(alpha) if beta is None else beta))
    if beta is None:
        return alpha
    w = np.empty_like(alpha)
    alpha_zero, beta_zero = alpha == 0, beta == 0
    w[~beta_zero] = alpha[~beta_zero] / beta[~beta_zero]
    w[~alpha_zero & beta_zero] = np.inf
    w[alpha_zero & beta_zero] = np.nan if np.all(alpha.imag == 0) else complex(np.nan, np.nan)
    return w


def _eig(a, b, left, right, overwrite_a, overwrite_b, check_finite, homogeneous):
    a1 = validated(a, check_finite)
    n = square(a1, "expected square matrix")
    b1 = None
    if b is not None:
        b1 = validated(b, check_finite)
        square(b1, "expected square matrix")
        if b1.shape != a1.shape:
            raise ValueError("a and b must have the same shape")
    prefix, dtype = lapack_type(*[x.dtype for x in (a1, b1) if x is not None])
    cplx = dtype.kind == "c"
    jobvl, jobvr = "V" if left else "N", "V" if right else "N"
    ldvl, ldvr = (max(n, 1) if left else 1), (max(n, 1) if right else 1)
    matrix = yield from _matrix(a1, dtype, prefix, overwrite_a)
    handles = [] if isinstance(matrix, np.ndarray) else [matrix]
    beta = None
    try:
        if b1 is None:
            name, routine = prefix + "geev", "eig algorithm (geev)"
            head = (jobvl, jobvr, n, matrix, n) + ((None,) if cplx else (None, None))
            tail = (None, ldvl, None, ldvr, None)
            extra = (None,) if cplx else ()
            lwork = yield from workspace(name, head + tail + (-1,) + extra, 4 if cplx else 5)
            result = yield Call(name, *head, *tail, lwork, *extra)
            if cplx:
                info, alpha, vl, vr = result[:4]
            else:
                info, wr, wi, vl, vr = result[:5]
                alpha = wr + np.complex64(1j) * wi
        else:
            other = yield from _matrix(b1, dtype, prefix, overwrite_b)
            if not isinstance(other, np.ndarray):
                handles.append(other)
            name, routine = prefix + "ggev", "generalized eig algorithm (ggev)"
            head = (jobvl, jobvr, n, matrix, n, other, n) + ((None, None) if cplx else (None, None, None))
            tail = (None, ldvl, None, ldvr, None)
            extra = (None,) if cplx else ()
            lwork = yield from workspace(name, head + tail + (-1,) + extra, 5 if cplx else 6)
            result = yield Call(name, *head, *tail, lwork, *extra)
            if cplx:
                info, alpha, beta, vl, vr = result[:5]
            else:
                info, ar, ai, beta, vl, vr = result[:6]
                alpha = ar + np.complex64(1j) * ai
    except BaseException:
        for h in handles:
            release(h)
        raise
    for h in handles:
        yield Free(h)
    if info < 0:
        raise ValueError(f"illegal value in argument {-info} of internal {routine}")
    if info > 0:
        if b1 is None:
            raise LinAlgError(f"{routine} did not converge (only eigenvalues with order >= {info} have converged)")
        raise LinAlgError(f"{routine} did not converge (LAPACK info={info})")
    w = _make_eigvals(alpha, beta, homogeneous)
    if not (cplx or np.all(w.imag == 0.0)):
        if left:
            vl = _make_complex_eigvecs(w, vl, w.dtype.char)
        if right:
            vr = _make_complex_eigvecs(w, vr, w.dtype.char)
    if b1 is not None:  # ?ggev's vectors are not normalized
        for i in range(n):
            if right:
                vr[:, i] /= np.linalg.norm(vr[:, i])
            if left:
                vl[:, i] /= np.linalg.norm(vl[:, i])
    if not (left or right):
        return w
    if left:
        return (w, vl, vr) if right else (w, vl)
    return w, vr
