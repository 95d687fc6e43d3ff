# _linalg_solve.py -- numrpc.linalg's linear systems in one call or a few: solve,
# lstsq, inv and det, for arrays and for RemoteArrays (worked on where they are).
from __future__ import annotations

from typing import Optional, Union

import numpy as np
from numpy.linalg import LinAlgError

from ._call import call as numrpc_call
from ._linalg_run import (Matrix, all_finite, buffer, f_view, illegal, release, rhs, scratch, square, validated,
                          workspace)
from ._ops import Call, Free, Get, OperationFuture, record_one, run, warn
from ._remote import RemoteArray, lapack_type


# ---- solve ----


def solve(a: Matrix, b: Matrix, sym_pos: bool = False, lower: bool = False, overwrite_a: bool = False,
          overwrite_b: bool = False, check_finite: bool = True, assume_a: str = "gen", transposed: bool = False, *,
          block: bool = True) -> Union[np.ndarray, OperationFuture]:
    """Solves ``a @ x == b`` for square `a` on a numrpc server (scipy.linalg.solve).

    Parameters
    ----------
    a : (N, N) array_like or RemoteArray
        Square matrix. Only the triangle `lower` chooses is read for 'sym',
        'her' and 'pos'.
    b : (N,) or (N, NRHS) array_like
        Right-hand side(s).
    sym_pos : bool, optional
        Deprecated in scipy: ``assume_a='pos'``.
    lower : bool, optional
        Use the lower triangle (default: the upper); ignored for 'gen'.
    overwrite_a, overwrite_b : bool, optional
        Allow LAPACK to work in `a` / `b` (no copy when already Fortran-ordered
        of the computing dtype); otherwise they are never changed.
    check_finite : bool, optional
        Refuse infs and NaNs (ValueError). Not applied to a RemoteArray.
    assume_a : {'gen', 'sym', 'her', 'pos'}, optional
        ?gesv, ?sysv, ?hesv or ?posv.
    transposed : bool, optional
        Solve ``a.T @ x == b`` (real `a` only).
    block : bool, optional
        False: return a concurrent.futures.Future of the result.

    Returns
    -------
    x : (N,) or (N, NRHS) ndarray
        The solution, shaped as `b`.

    Raises
    ------
    numpy.linalg.LinAlgError
        If `a` is singular (not positive definite for 'pos').
    ValueError
        If `a` is not square, `b` has another number of rows, or the arrays
        hold infs or NaNs.
    NotImplementedError
        If `transposed` and `a` is complex.

    Notes
    -----
    One remote call (?gesv etc.); the condition number is not estimated, so
    scipy's LinAlgWarning for an ill-conditioned `a` is not given. A
    C-ordered `a` is read as the transpose it is in Fortran order where that
    is exact (``transposed``, and the symmetric solvers with the other
    triangle); otherwise it is copied once.
    """
    if block and assume_a == "gen" and not (sym_pos or transposed):
        x = _solve_now(a, b, overwrite_a, overwrite_b, check_finite)
        if x is not None:
            return x
    return run(_solve(a, b, sym_pos, lower, overwrite_a, overwrite_b, check_finite, assume_a, transposed), block)


def _solve_now(a, b, overwrite_a, overwrite_b, check_finite):
    """The common case of solve without the generator's bookkeeping: two
    numpy arrays of one LAPACK dtype, a square, b a matching vector or
    matrix, blocking, 'gen'. None for anything else (then _solve decides,
    and raises what scipy raises)."""
    if type(a) is not np.ndarray or type(b) is not np.ndarray or a.ndim != 2 or not 1 <= b.ndim <= 2:
        return None
    dtype = a.dtype
    n = a.shape[0]
    if (dtype is not b.dtype and dtype != b.dtype or dtype.char not in "fdFD" or a.shape[1] != n or n < 2
            or b.shape[0] != n or b.size == 0):
        return None
    if check_finite and not (all_finite(a) and all_finite(b)):
        return None
    lu = a if overwrite_a and a.flags.f_contiguous and a.flags.writeable else a.copy(order="F")
    x = b if overwrite_b and b.flags.f_contiguous and b.flags.writeable else b.copy(order="F")
    info, _ = numrpc_call(_GESV[dtype.char], n, 1 if b.ndim == 1 else b.shape[1], lu, n, None, x, n)
    record_one()
    _solved(info, "gesv")
    return x


_GESV = {"f": "sgesv", "d": "dgesv", "F": "cgesv", "D": "zgesv"}


def _solve(a, b, sym_pos, lower, overwrite_a, overwrite_b, check_finite, assume_a, transposed):
    a1 = validated(a, check_finite)
    remote = isinstance(a1, RemoteArray)
    if not remote and a1.ndim < 2:
        a1 = np.atleast_2d(a1)
    b1 = validated(b, check_finite) if not isinstance(b, RemoteArray) else (yield from rhs(b, False))
    if b1.ndim == 0:
        b1 = b1.reshape(1)
    n = square(a1, "Input a needs to be a square matrix.")
    if n != b1.shape[0] and not (n == 1 and b1.size != 0):
        raise ValueError("Input b has to have same number of rows as input a")
    if b1.size == 0:
        return np.asfortranarray(b1.copy())
    b_is_1d = b1.ndim == 1
    if b_is_1d and n == 1:
        b1 = b1[None, :]
    if b1.ndim > 2:
        raise ValueError("Input b has to be a vector or a matrix")
    nrhs = 1 if b1.ndim == 1 else b1.shape[1]
    if sym_pos:
        warn("The 'sym_pos' keyword is deprecated and should be replaced by using "
             "'assume_a = \"pos\"'. 'sym_pos' will be removed in SciPy 1.11.0.", DeprecationWarning)
        assume_a = "pos"
    if assume_a not in ("gen", "sym", "her", "pos"):
        raise ValueError(f"{assume_a} is not a recognized matrix structure")
    if assume_a == "her" and a1.dtype.kind != "c":
        assume_a = "sym"
    if transposed and a1.dtype.kind == "c":
        raise NotImplementedError("scipy.linalg.solve can currently not solve a^T x = b or a^H x = b for "
                                  "complex matrices.")
    prefix, dtype = lapack_type(a1.dtype, b1.dtype)
    x = buffer(b1, dtype, overwrite_b)
    if remote:
        x = yield from _solve_remote(a1, x, n, nrhs, prefix, dtype, lower, assume_a, transposed)
    elif assume_a == "gen":  # a C-ordered a is a^T in Fortran order: transposed needs no transposing copy
        lu = buffer(a1.T if transposed else a1, dtype, overwrite_a)
        info, _ = yield Call(prefix + "gesv", n, nrhs, lu, n, None, x, n)
        _solved(info, "gesv")
    else:
        view, flipped = f_view(a1)  # the other triangle of a^T is the same symmetric matrix
        factor = buffer(view, dtype, overwrite_a)
        uplo = "L" if lower != flipped else "U"
        conjugated = flipped and dtype.kind == "c" and assume_a != "sym"  # a^T is conj(a) when Hermitian
        if conjugated:
            np.conjugate(x, out=x)
        yield from _symmetric(prefix, assume_a, uplo, n, nrhs, factor, x)
        if conjugated:
            np.conjugate(x, out=x)
    return x.ravel() if b_is_1d else x


def _solved(info: int, routine: str) -> None:
    if info < 0:
        raise ValueError(f"LAPACK reported an illegal value in {-info}-th argument of internal {routine}.")
    if info > 0:
        raise LinAlgError("Matrix is singular.")


def _symmetric(prefix, assume_a, uplo, n, nrhs, factor, x):
    """An operation step: ?posv, ?sysv or ?hesv on factor (an array or a handle)."""
    if assume_a == "pos":
        info = yield Call(prefix + "posv", uplo, n, nrhs, factor, n, x, n)
        _solved(info, "posv")
        return
    name = prefix + ("hesv" if assume_a == "her" else "sysv")
    lwork = yield from workspace(name, (uplo, n, nrhs, factor, n, None, x, n, None, -1), 2)
    info, _, _ = yield Call(name, uplo, n, nrhs, factor, n, None, x, n, None, lwork)
    _solved(info, name[1:])


def _solve_remote(a1, x, n, nrhs, prefix, dtype, lower, assume_a, transposed):
    """An operation step: the solve on a scratch copy of a remote matrix."""
    copy = yield from scratch(a1, dtype, prefix)
    try:
        if assume_a == "gen":
            info, ipiv = yield Call(prefix + "getrf", n, n, copy, n, None)
            _solved(info, "getrf")
            info = yield Call(prefix + "getrs", "T" if transposed else "N", n, nrhs, copy, n, ipiv, x, n)
            _solved(info, "getrs")
        else:
            yield from _symmetric(prefix, assume_a, "L" if lower else "U", n, nrhs, copy, x)
    except BaseException:
        release(copy)
        raise
    yield Free(copy)
    return x


# ---- lstsq ----


def lstsq(a: Matrix, b: Matrix, cond: Optional[float] = None, overwrite_a: bool = False, overwrite_b: bool = False,
          check_finite: bool = True, lapack_driver: Optional[str] = None, *,
          block: bool = True) -> Union[tuple, OperationFuture]:
    """Least-squares solution of ``a @ x = b`` on a numrpc server (scipy.linalg.lstsq).

    Parameters
    ----------
    a : (M, N) array_like or RemoteArray
    b : (M,) or (M, K) array_like
    cond : float, optional
        Singular values below ``cond * s[0]`` count as zero (default: machine
        precision).
    overwrite_a, overwrite_b, check_finite : bool, optional
        As in `solve`.
    lapack_driver : {'gelsd', 'gelsy', 'gelss'}, optional
        Default 'gelsd'.
    block : bool, optional
        False: return a concurrent.futures.Future of the result.

    Returns
    -------
    x : (N,) or (N, K) ndarray
    residues : (K,) ndarray or float
        Squared 2-norms of ``b - a @ x`` when M > N and rank N, else empty.
    rank : int
        Effective rank of `a`.
    s : (min(M, N),) ndarray or None
        Singular values of `a` (None for 'gelsy').

    Raises
    ------
    numpy.linalg.LinAlgError
        If the SVD does not converge.
    ValueError
        If the shapes do not match, or the driver is unknown.
    """
    return run(_lstsq(a, b, cond, overwrite_a, overwrite_b, check_finite, lapack_driver), block)


def _lstsq(a, b, cond, overwrite_a, overwrite_b, check_finite, lapack_driver):
    a1 = validated(a, check_finite)
    b1 = yield from rhs(b, check_finite)
    if len(a1.shape) != 2:
        raise ValueError("Input array a should be 2D")
    m, n = a1.shape
    nrhs = b1.shape[1] if b1.ndim == 2 else 1
    if m != b1.shape[0]:
        raise ValueError(f"Shape mismatch: a and b should have the same number of rows ({m} != {b1.shape[0]}).")
    if m == 0 or n == 0:  # nothing for LAPACK to do (a RemoteArray is never empty)
        x = np.zeros((n,) + b1.shape[1:], dtype=np.common_type(a1, b1))
        residues = np.linalg.norm(b1, axis=0) ** 2 if n == 0 else np.empty((0,))
        return x, residues, 0, np.empty((0,))
    driver = lapack_driver if lapack_driver is not None else "gelsd"
    if driver not in ("gelsd", "gelsy", "gelss"):
        raise ValueError(f'LAPACK driver "{driver}" is not found')
    prefix, dtype = lapack_type(a1.dtype, b1.dtype)
    cplx = dtype.kind == "c"
    if m < n:  # b has room for the longer solution
        x = np.zeros((n, nrhs) if b1.ndim == 2 else (n,), dtype=dtype, order="F")
        x[:m] = b1
    else:
        x = buffer(b1, dtype, overwrite_b)
    if cond is None:
        cond = float(np.finfo(dtype).eps)
    remote = isinstance(a1, RemoteArray)
    matrix = (yield from scratch(a1, dtype, prefix)) if remote else buffer(a1, dtype, overwrite_a)
    name, ld = prefix + driver, max(m, n)
    try:
        if driver == "gelsd":
            extra = (None, None) if cplx else (None,)  # rwork (c, z), iwork
            lwork = yield from workspace(name, (m, n, nrhs, matrix, m, x, ld, None, cond, None, -1) + extra, 3)
            rank, info, s = (yield Call(name, m, n, nrhs, matrix, m, x, ld, None, cond, None, lwork, *extra))[:3]
        elif driver == "gelss":
            extra = (None,) if cplx else ()  # the rwork of c and z
            lwork = yield from workspace(name, (m, n, nrhs, matrix, m, x, ld, None, cond, None, -1) + extra, 3)
            rank, info, s = (yield Call(name, m, n, nrhs, matrix, m, x, ld, None, cond, None, lwork, *extra))[:3]
        else:
            extra = (None,) if cplx else ()
            jpvt = np.zeros(n, dtype=np.int32)
            lwork = yield from workspace(name, (m, n, nrhs, matrix, m, x, ld, jpvt, cond, None, -1) + extra, 2)
            rank, info, _ = yield Call(name, m, n, nrhs, matrix, m, x, ld, jpvt, cond, None, lwork, *extra)
            s = None
    except BaseException:
        if remote:
            release(matrix)
        raise
    if remote:
        yield Free(matrix)
    if info > 0:
        raise LinAlgError("SVD did not converge in Linear Least Squares")
    if info < 0:
        raise illegal(info, driver)
    residues = np.asarray([], dtype=x.dtype)
    if m > n:
        if rank == n and driver != "gelsy":
            residues = np.sum(np.abs(x[n:]) ** 2, axis=0)
        x = x[:n]
    return x, residues, rank, s


# ---- inv and det ----


def inv(a: Matrix, overwrite_a: bool = False, check_finite: bool = True, *,
        block: bool = True) -> Union[np.ndarray, OperationFuture]:
    """Inverse of a square matrix on a numrpc server (scipy.linalg.inv).

    Parameters
    ----------
    a : (N, N) array_like or RemoteArray
    overwrite_a, check_finite : bool, optional
        As in `solve`.
    block : bool, optional
        False: return a concurrent.futures.Future of the result.

    Returns
    -------
    ainv : (N, N) ndarray

    Raises
    ------
    numpy.linalg.LinAlgError
        If `a` is singular.
    ValueError
        If `a` is not square.

    Notes
    -----
    An array: one ?gesv with the identity as right-hand sides (inv(a^T) is
    inv(a)^T, so a C-ordered `a` needs no transposing copy). A RemoteArray:
    ?getrf and ?getri on a copy made on its server, then the inverse comes
    back.
    """
    return run(_inv(a, overwrite_a, check_finite), block)


def _inv(a, overwrite_a, check_finite):
    a1 = validated(a, check_finite)
    n = square(a1, "expected square matrix")
    prefix, dtype = lapack_type(a1.dtype)
    if not isinstance(a1, RemoteArray):
        view, flipped = f_view(a1)
        lu = buffer(view, dtype, overwrite_a)
        x = np.eye(n, dtype=dtype, order="F")
        info, _ = yield Call(prefix + "gesv", n, n, lu, n, None, x, n)
        if info > 0:
            raise LinAlgError("singular matrix")
        if info < 0:
            raise illegal(info, "getrf|getri")
        return x.T if flipped else x
    copy = yield from scratch(a1, dtype, prefix)
    try:
        info, ipiv = yield Call(prefix + "getrf", n, n, copy, n, None)
        if info == 0:
            lwork = yield from workspace(prefix + "getri", (n, copy, n, ipiv, None, -1), 1)
            info, _ = yield Call(prefix + "getri", n, copy, n, ipiv, None, lwork)
        if info > 0:
            raise LinAlgError("singular matrix")
        if info < 0:
            raise illegal(info, "getrf|getri")
        x = yield Get(copy)
    except BaseException:
        release(copy)
        raise
    yield Free(copy)
    return x


def det(a: Matrix, overwrite_a: bool = False, check_finite: bool = True, *,
        block: bool = True) -> Union[float, complex, OperationFuture]:
    """Determinant of a square matrix on a numrpc server (scipy.linalg.det).

    Parameters
    ----------
    a : (N, N) array_like or RemoteArray
    overwrite_a, check_finite : bool, optional
        As in `solve`.
    block : bool, optional
        False: return a concurrent.futures.Future of the result.

    Returns
    -------
    det : float or complex
        0.0 for a singular matrix, as scipy.

    Raises
    ------
    ValueError
        If `a` is not square.

    Notes
    -----
    ?getrf, then the product of U's diagonal signed by the pivots (det(a^T)
    is det(a): a C-ordered `a` is factored as it lies). For a RemoteArray
    only the diagonal comes back (?copy with stride n+1).
    """
    return run(_det(a, overwrite_a, check_finite), block)


def _det(a, overwrite_a, check_finite):
    a1 = validated(a, check_finite)
    n = square(a1, "expected square matrix")
    prefix, dtype = lapack_type(a1.dtype)
    if not isinstance(a1, RemoteArray):
        lu = buffer(f_view(a1)[0], dtype, overwrite_a)
        info, ipiv = yield Call(prefix + "getrf", n, n, lu, n, None)
        diagonal = lu.diagonal()
    else:
        copy = yield from scratch(a1, dtype, prefix)
        try:
            info, ipiv = yield Call(prefix + "getrf", n, n, copy, n, None)
            diagonal = yield Call(prefix + "copy", n, copy, n + 1, None, 1)
        except BaseException:
            release(copy)
            raise
        yield Free(copy)
    if info < 0:
        raise ValueError(f"illegal value in {-info}-th argument of internal det.getrf")
    value = np.prod(diagonal) * (-1 if np.count_nonzero(ipiv != np.arange(1, n + 1)) % 2 else 1)
    return complex(value) if dtype.kind == "c" else float(value)
