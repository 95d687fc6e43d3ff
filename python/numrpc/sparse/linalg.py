# linalg.py -- numrpc.sparse.linalg.spsolve: scipy.sparse.linalg.spsolve's solve of
# A x = b run on a numrpc server (SuperLU's dgssv and zgssv, stubs/sparse.idl).
"""Sparse direct solves on a numrpc server, as scipy.sparse.linalg solves them.

    x = numrpc.sparse.linalg.spsolve(A, b)               # scipy's spsolve, run remotely
    f = numrpc.sparse.linalg.spsolve(A, b, block=False)  # a concurrent.futures.Future
"""
from __future__ import annotations

import concurrent.futures
from typing import TYPE_CHECKING, Optional, Union

import numpy as np
from numpy.typing import ArrayLike

from .._ops import Operation, Stage, WithWarning, run, warn

if TYPE_CHECKING:  # scipy is imported when spsolve is called, not with numrpc
    import scipy.sparse

__all__ = ["spsolve"]

_PERMC_SPECS = (None, "NATURAL", "MMD_ATA", "MMD_AT_PLUS_A", "COLAMD")  # scipy's; the server uses COLAMD
_INT32_MAX = 2**31 - 1
_SOLVED = tuple(np.dtype(t) for t in "fdFD")  # result dtypes; f and F are solved in d and D


def _floating(dtype: np.dtype) -> np.dtype:
    """scipy's asfptype: the first of float32, float64, complex64, complex128
    that holds dtype."""
    for t in "fdFD":
        if np.can_cast(dtype, t):
            return np.dtype(t)
    raise TypeError(f"cannot upcast [{dtype.name}] to a floating point format")


def _csc_arrays(A, sp):
    """A as (class of the result for a sparse b, CSC matrix in canonical form),
    with one copy of A at most and the caller's A unchanged."""
    if not sp.issparse(A):
        A = sp.csc_matrix(A)
        warn("spsolve requires A be CSC or CSR matrix format", sp.SparseEfficiencyWarning)
        owned = True
    elif A.format in ("csc", "csr"):
        owned = False
    else:
        warn("spsolve requires A be CSC or CSR matrix format", sp.SparseEfficiencyWarning)
        A = A.tocsc()
        owned = True
    result_class = A.__class__
    if A.format == "csr":
        A = A.tocsc()  # the server takes columns
        owned = True
    if not A.has_canonical_format:  # duplicates summed (scipy does it to the caller's A)
        if not owned:
            A = A.copy()
        A.sum_duplicates()
    return result_class, A


def spsolve(A: Union[scipy.sparse.spmatrix, ArrayLike], b: Union[ArrayLike, scipy.sparse.spmatrix],
            permc_spec: Optional[str] = None, use_umfpack: bool = True, *, block: bool = True
            ) -> Union[np.ndarray, scipy.sparse.spmatrix, concurrent.futures.Future]:
    """Solve A x = b for a sparse square A, as scipy.sparse.linalg.spsolve.

    The server runs SuperLU (dgssv for real, zgssv for complex systems) on
    A's compressed sparse columns.

    Parameters
    ----------
    A : scipy.sparse matrix or array, n x n
        CSC is sent as it is; CSR is converted to CSC (one copy); any other
        format (COO...) or a dense array is converted with scipy's
        SparseEfficiencyWarning. Duplicate entries are summed in a copy:
        A is never changed.
    b : array_like or scipy.sparse matrix, (n,) or (n, k)
        The right-hand side(s); never changed.
    permc_spec : {None, "NATURAL", "MMD_ATA", "MMD_AT_PLUS_A", "COLAMD"}, optional
        Taken for scipy's signature; the server always orders columns by
        COLAMD (scipy's default). Another value is scipy's ValueError.
    use_umfpack : bool, optional
        Ignored (scipy uses UMFPACK when scikit-umfpack is installed).
    block : bool, optional
        False: return a concurrent.futures.Future of the result at once; its
        result() raises what the blocking call would raise, and gives the
        MatrixRankWarning (below) when it is read.

    Returns
    -------
    numpy.ndarray, scipy.sparse matrix or concurrent.futures.Future
        x, 1-D when b is 1-D or (n, 1), else (n, k); sparse, of A's class
        (CSC for a non-CSR A), when b is sparse with k > 1. Its dtype is
        scipy's: float32 and complex64 systems are solved in double
        precision and the result cast back.

    Raises
    ------
    ValueError
        A not square, b's length not A's order, b of more than 2
        dimensions, an unknown permc_spec.
    TypeError
        A dtype without a float64 or complex128 solve (long double, say).
    RuntimeError
        A singular A with a sparse b (scipy's "Factor is exactly singular").
    numrpc.Error
        From the call.

    Warns
    -----
    scipy.sparse.linalg.MatrixRankWarning
        A is singular (exactly, or structurally): x is all nan, as scipy's.
    """
    return run(_spsolve(A, b, permc_spec), block)


def _spsolve(A, b, permc_spec) -> Operation:
    import scipy.sparse as sp

    if permc_spec not in _PERMC_SPECS:
        raise ValueError("invalid value for 'ColPerm' parameter")
    result_class, A = _csc_arrays(A, sp)
    b_is_sparse = sp.issparse(b)
    if not b_is_sparse:
        b = np.asarray(b)
    b_is_vector = b.ndim == 1 or (b.ndim == 2 and b.shape[1] == 1)
    if b_is_vector and b_is_sparse:
        b, b_is_sparse = b.toarray(), False
    result_dtype = np.promote_types(_floating(A.dtype), b.dtype)
    if result_dtype not in _SOLVED:
        raise TypeError(f"spsolve: the server solves float64 and complex128 systems, not {result_dtype}")
    M, N = A.shape
    if M != N:
        raise ValueError(f"matrix must be square (has shape {(M, N)})")
    if b.ndim not in (1, 2):
        raise ValueError(f"spsolve: b has {b.ndim} dimensions; give a vector or a matrix")
    if M != b.shape[0]:
        raise ValueError(f"matrix - rhs dimension mismatch ({A.shape} - {b.shape[0]})")
    if A.nnz > _INT32_MAX or N > _INT32_MAX - 1:
        raise ValueError(f"spsolve: {N} x {N} with {A.nnz} entries is past the server's int32 indices")

    complex_system = result_dtype.kind == "c"
    work = np.dtype(np.complex128 if complex_system else np.float64)
    routine = "zgssv" if complex_system else "dgssv"
    values = np.ascontiguousarray(A.data, dtype=work)
    rowind = np.ascontiguousarray(A.indices, dtype=np.int32)
    colptr = np.ascontiguousarray(A.indptr, dtype=np.int32)
    dense_b = b.toarray() if b_is_sparse else b
    x = np.array(dense_b, dtype=work, order="F", copy=True)  # B := X on the server
    nrhs = 1 if x.ndim == 1 else x.shape[1]

    def then(results):
        info = results[0] if results else 0
        if info < 0:
            raise ValueError(f"spsolve: the server refused A's CSC arrays (SuperLU info {info})")
        if info > 0:
            if b_is_sparse:
                raise RuntimeError("Factor is exactly singular")
            from scipy.sparse.linalg import MatrixRankWarning
            x.fill(np.nan)
            return WithWarning(_shaped(x), "Matrix is exactly singular", MatrixRankWarning)
        if b_is_sparse:
            return result_class(x.astype(result_dtype, copy=False))
        return _shaped(x)

    def _shaped(out):
        out = out.ravel() if b_is_vector else out
        return out.astype(result_dtype, copy=False)

    if N == 0:
        return then([])
    return then((yield Stage([(routine, (N, A.nnz, values, rowind, colptr, nrhs, x))])))
