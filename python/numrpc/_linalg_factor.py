# _linalg_factor.py -- numrpc.linalg's factorisations kept on a server (lu_factor,
# cho_factor: RemoteArrays) and the solves that send only right-hand sides.
from __future__ import annotations

from typing import Union

import numpy as np
from numpy.linalg import LinAlgError

from ._linalg_run import Matrix, buffer, f_view, linalg_warning, readable, release, rhs, scratch, validated
from ._ops import Call, Free, Get, OperationFuture, Put, WithWarning, run
from ._remote import RemoteArray, lapack_type


# ---- LU: factors kept on the server ----


def lu_factor(a: Matrix, overwrite_a: bool = False, check_finite: bool = True, *,
              block: bool = True) -> Union[tuple, OperationFuture]:
    """LU factorisation with partial pivoting, the factors kept on a server
    (scipy.linalg.lu_factor).

    Parameters
    ----------
    a : (M, N) array_like or RemoteArray
    overwrite_a : bool, optional
        For a RemoteArray: factor it in place (the returned `lu` is `a`).
        An array is never changed (it is sent, not written).
    check_finite : bool, optional
        As in `solve`.
    block : bool, optional
        False: return a concurrent.futures.Future of the result.

    Returns
    -------
    lu : RemoteArray
        L (unit diagonal, not stored) and U in one matrix, on the server:
        ``np.asarray(lu)`` is scipy's `lu`.
    piv : (min(M, N),) ndarray of int32
        Pivots, 0-based as scipy's: row i was interchanged with row piv[i].

    Warns
    -----
    LinAlgWarning
        If U has an exact zero on its diagonal (the matrix is singular); with
        block=False, given by every result() of the future.

    Notes
    -----
    `a` travels once (numrpc.put, Fortran order), ?getrf runs on it there;
    only the pivots come back. `lu_solve` then sends only right-hand sides.
    """
    return run(_lu_factor(a, overwrite_a, check_finite), block)


def _lu_factor(a, overwrite_a, check_finite):
    a1 = validated(a, check_finite)
    if len(a1.shape) != 2:
        raise ValueError("expected a 2-D array")
    m, n = a1.shape
    prefix, dtype = lapack_type(a1.dtype)
    in_place = isinstance(a1, RemoteArray) and overwrite_a and a1.dtype == dtype
    if in_place:
        handle = a1.handle
    elif isinstance(a1, RemoteArray):
        handle = yield from scratch(a1, dtype, prefix)
    else:
        if a1.size == 0:
            raise ValueError("lu_factor: an empty matrix has no factors to keep on a server")
        handle = yield Put(np.asfortranarray(a1, dtype=dtype))
    try:
        info, ipiv = yield Call(prefix + "getrf", m, n, handle, m, None)
        if info < 0:
            raise ValueError(f"illegal value in {-info}th argument of internal getrf (lu_factor)")
    except BaseException:
        if not in_place:
            release(handle)
        raise
    ipiv -= 1
    factors = (a1 if in_place else RemoteArray(handle)), ipiv
    if info > 0:
        return WithWarning(factors, f"Diagonal number {info} is exactly zero. Singular matrix.", linalg_warning())
    return factors


_TRANS = {0: "N", 1: "T", 2: "C", "N": "N", "T": "T", "C": "C"}


def lu_solve(lu_and_piv: tuple, b: Matrix, trans: Union[int, str] = 0, overwrite_b: bool = False,
             check_finite: bool = True, *, block: bool = True) -> Union[np.ndarray, OperationFuture]:
    """Solves ``a x = b`` with lu_factor's factors (scipy.linalg.lu_solve).

    Parameters
    ----------
    (lu, piv) : tuple
        lu_factor's result: `lu` a RemoteArray (only `b` travels) or an
        array (scipy's own factors, sent with the call); `piv` 0-based.
    b : (N,) or (N, K) array_like
    trans : {0, 1, 2, 'N', 'T', 'C'}, optional
        Solve ``a x = b``, ``a^T x = b`` or ``a^H x = b``.
    overwrite_b, check_finite : bool, optional
        As in `solve`.
    block : bool, optional
        False: return a concurrent.futures.Future of the result.

    Returns
    -------
    x : ndarray
        Shaped as `b`.

    Raises
    ------
    ValueError
        If `lu` and `b` do not match.
    """
    return run(_lu_solve(lu_and_piv, b, trans, overwrite_b, check_finite), block)


def _lu_solve(lu_and_piv, b, trans, overwrite_b, check_finite):
    lu, piv = lu_and_piv
    b1 = yield from rhs(b, check_finite)
    if not isinstance(lu, RemoteArray):
        lu = np.asarray(lu)
    if lu.shape[0] != b1.shape[0]:
        raise ValueError(f"Shapes of lu {lu.shape} and b {b1.shape} are incompatible")
    if trans not in _TRANS:
        raise ValueError(f"trans must be 0, 1, 2, 'N', 'T' or 'C', not {trans!r}")
    n = lu.shape[0]
    ipiv = np.add(piv, 1, dtype=np.int32, casting="unsafe")
    info, x = yield from _solve_with("getrs", (_TRANS[trans], n), (ipiv,), lu, b1, overwrite_b)
    if info != 0:
        raise ValueError(f"illegal value in {-info}th argument of internal gesv|posv")
    return x


def _solve_with(routine: str, head: tuple, tail: tuple, factors, b1: np.ndarray, overwrite_b: bool,
                flip_triangle: bool = False):
    """An operation step: LAPACK's ?getrs / ?potrs, routine(*head, nrhs,
    factors, n, *tail, x, n), with factors a RemoteArray (its handle; real
    factors with complex right-hand sides as twice as many real ones) or an
    array (sent with the call; with flip_triangle, a C-ordered one as the
    other triangle of its transpose). Gives (info, x)."""
    remote = isinstance(factors, RemoteArray)
    prefix, dtype = lapack_type(factors.dtype, b1.dtype)
    n = factors.shape[0]
    split = remote and dtype.kind == "c" and factors.dtype == np.dtype(dtype.char.lower())
    conjugated = False
    if split:  # x = A^-1 Re(b) + i A^-1 Im(b), with the real factors where they are
        columns = b1.reshape(n, -1)
        x = np.asfortranarray(np.concatenate([columns.real, columns.imag], axis=1), dtype=factors.dtype)
        prefix, arg = lapack_type(factors.dtype)[0], factors.handle
    else:
        x = buffer(b1, dtype, overwrite_b)
        if remote:
            arg = yield from readable(factors, dtype)
        else:
            view, flipped = f_view(factors) if flip_triangle else (factors, False)
            arg = np.asarray(view, dtype=dtype, order="F")
            if flipped:  # the triangle of a^T; complex: conj(A) y = conj(b), x = conj(y)
                head = ({"U": "L", "L": "U"}[head[0]],) + head[1:]
                conjugated = dtype.kind == "c"
    if conjugated:
        np.conjugate(x, out=x)
    nrhs = 1 if x.ndim == 1 else x.shape[1]
    try:
        info = yield Call(prefix + routine, *head, nrhs, arg, n, *tail, x, n)
    finally:
        if remote and arg is not factors.handle:
            release(arg)
    if split:
        k = x.shape[1] // 2
        x = (x[:, :k] + 1j * x[:, k:]).astype(dtype).reshape(b1.shape)
    elif conjugated:
        np.conjugate(x, out=x)
    return info, x


# ---- Cholesky ----


def cholesky(a: Matrix, lower: bool = False, overwrite_a: bool = False, check_finite: bool = True, *,
             block: bool = True) -> Union[np.ndarray, OperationFuture]:
    """Cholesky factor of a Hermitian positive definite matrix on a numrpc
    server (scipy.linalg.cholesky).

    Parameters
    ----------
    a : (N, N) array_like or RemoteArray
        Only the triangle `lower` chooses is read.
    lower : bool, optional
        Return L (``a = L L^H``) rather than U (``a = U^H U``, the default).
    overwrite_a, check_finite : bool, optional
        As in `solve`.
    block : bool, optional
        False: return a concurrent.futures.Future of the result.

    Returns
    -------
    c : (N, N) ndarray
        The factor, the other triangle zero.

    Raises
    ------
    numpy.linalg.LinAlgError
        If `a` is not positive definite.
    ValueError
        If `a` is not square.

    Notes
    -----
    A C-ordered `a` goes as it lies: the other triangle of a^T with ?potrf
    gives the same factor, transposed in memory.
    """
    return run(_cholesky(a, lower, overwrite_a, check_finite, True), block)


def cho_factor(a: Matrix, lower: bool = False, overwrite_a: bool = False, check_finite: bool = True, *,
               block: bool = True) -> Union[tuple, OperationFuture]:
    """Cholesky factorisation kept on a server, for cho_solve (scipy.linalg.cho_factor).

    Parameters
    ----------
    a : (N, N) array_like or RemoteArray
        Only the triangle `lower` chooses is read.
    lower : bool, optional
        Factor into the lower triangle (default: the upper).
    overwrite_a : bool, optional
        For a RemoteArray: factor it in place (the returned `c` is `a`).
    check_finite : bool, optional
        As in `solve`.
    block : bool, optional
        False: return a concurrent.futures.Future of the result.

    Returns
    -------
    c : RemoteArray
        On the server: the factor in the chosen triangle, the other holding
        `a`'s entries (``np.asarray(c)`` is scipy's `c`).
    lower : bool
        As given.

    Raises
    ------
    numpy.linalg.LinAlgError
        If `a` is not positive definite.
    ValueError
        If `a` is not square.
    """
    return run(_cholesky(a, lower, overwrite_a, check_finite, False), block)


def _cholesky(a, lower, overwrite_a, check_finite, clean):
    a1 = validated(a, check_finite)
    remote = isinstance(a1, RemoteArray)
    if not remote:
        a1 = np.atleast_2d(a1)
    if a1.ndim != 2:
        raise ValueError(f"Input array needs to be 2D but received a {a1.ndim}d-array.")
    if a1.shape[0] != a1.shape[1]:
        raise ValueError(f"Input array is expected to be square but has the shape: {a1.shape}.")
    if a1.size == 0:
        return a1.copy() if clean else (a1.copy(), lower)
    n = a1.shape[0]
    prefix, dtype = lapack_type(a1.dtype)
    uplo = "L" if lower else "U"
    if clean and not remote:  # the factor comes back: a C-ordered a goes as it lies
        view, flipped = f_view(a1)
        factor = buffer(view, dtype, overwrite_a)
        info = yield Call(prefix + "potrf", uplo if not flipped else "LU"[lower], n, factor, n)
        _definite(info)
        c = factor.T if flipped else factor
        return np.tril(c) if lower else np.triu(c)
    in_place = remote and overwrite_a and a1.dtype == dtype
    if in_place:
        handle = a1.handle
    elif remote:
        handle = yield from scratch(a1, dtype, prefix)
    else:
        handle = yield Put(np.asfortranarray(a1, dtype=dtype))
    try:
        info = yield Call(prefix + "potrf", uplo, n, handle, n)
        _definite(info)
        if clean:
            c = yield Get(handle)
    except BaseException:
        if not in_place:
            release(handle)
        raise
    if clean:
        yield Free(handle)
        return np.tril(c) if lower else np.triu(c)
    return (a1 if in_place else RemoteArray(handle)), lower


def _definite(info: int) -> None:
    if info > 0:
        raise LinAlgError(f"{info}-th leading minor of the array is not positive definite")
    if info < 0:
        raise ValueError(f'LAPACK reported an illegal value in {-info}-th argumenton entry to "POTRF".')


def cho_solve(c_and_lower: tuple, b: Matrix, overwrite_b: bool = False, check_finite: bool = True, *,
              block: bool = True) -> Union[np.ndarray, OperationFuture]:
    """Solves ``a x = b`` with cho_factor's factor (scipy.linalg.cho_solve).

    Parameters
    ----------
    (c, lower) : tuple
        cho_factor's result: `c` a RemoteArray (only `b` travels) or an
        array (sent with the call).
    b : (N,) or (N, K) array_like
    overwrite_b, check_finite : bool, optional
        As in `solve`.
    block : bool, optional
        False: return a concurrent.futures.Future of the result.

    Returns
    -------
    x : ndarray
        Shaped as `b`.

    Raises
    ------
    ValueError
        If `c` is not square or does not match `b`.
    """
    return run(_cho_solve(c_and_lower, b, overwrite_b, check_finite), block)


def _cho_solve(c_and_lower, b, overwrite_b, check_finite):
    c, lower = c_and_lower
    b1 = yield from rhs(b, check_finite)
    if not isinstance(c, RemoteArray):
        c = validated(c, check_finite)
    if len(c.shape) != 2 or c.shape[0] != c.shape[1]:
        raise ValueError("The factored matrix c is not square.")
    if c.shape[1] != b1.shape[0]:
        raise ValueError(f"incompatible dimensions ({c.shape} and {b1.shape})")
    info, x = yield from _solve_with("potrs", ("L" if lower else "U", c.shape[0]), (), c, b1, overwrite_b, True)
    if info != 0:
        raise ValueError(f"illegal value in {-info}th argument of internal potrs")
    return x
