# _linalg_run.py -- what numrpc.linalg's operations share (run by _ops' driver): argument
# checks, work buffers, scratch copies on a server, workspace queries, its warning class.
from __future__ import annotations

import math
from typing import Union

import numpy as np
from numpy.typing import ArrayLike

from ._ops import Call, Get, New, Put
from ._remote import RemoteArray

Matrix = Union[ArrayLike, RemoteArray]  # what numrpc.linalg's functions take for an array


# ---- What every function does with its arguments ----


def validated(a, check_finite: bool):
    """a as a numpy array (a RemoteArray stays one), refused as scipy refuses
    it: object arrays, and infs or NaNs when check_finite."""
    if type(a) is not np.ndarray:
        if isinstance(a, RemoteArray):
            return a
        a = np.asarray(a)
        if a.dtype.hasobject:
            raise ValueError("object arrays are not supported")
    if check_finite and a.dtype.kind in "fc" and not all_finite(a):
        raise ValueError("array must not contain infs or NaNs")
    return a


def all_finite(a: np.ndarray) -> bool:
    """True when no element of a (floating or complex) is inf or NaN: the sum of
    squares is finite then, and any inf or NaN makes it so; only an overflow
    of finite elements needs the element by element check."""
    flat = a.ravel(order="K")
    if a.dtype.kind == "c":
        flat = flat.view(flat.real.dtype)
    return math.isfinite(flat.dot(flat)) or bool(np.isfinite(a).all())


def buffer(x: np.ndarray, dtype: np.dtype, reuse: bool) -> np.ndarray:
    """x as a Fortran-ordered array of dtype that LAPACK may overwrite: x itself
    when reuse (the caller allowed it) and it is one already, else a copy."""
    if x.dtype == dtype:
        if reuse and type(x) is np.ndarray and x.flags.f_contiguous and x.flags.writeable:
            return x
        return x.copy(order="F")
    return np.array(x, dtype=dtype, order="F")


def scratch(r: RemoteArray, dtype: np.dtype, prefix: str):
    """An operation step: a server-side copy of r's matrix that a routine may
    overwrite (an empty handle filled by ?copy on r's server), nothing sent."""
    if r.dtype != dtype:  # another precision: through the client, converted
        array = yield Get(r.handle)
        return (yield Put(np.asfortranarray(array, dtype=dtype), r.server))
    copy = yield New(dtype, r.shape, r.server)
    yield Call(prefix + "copy", r.size, r.handle, 1, copy, 1)
    return copy


def readable(r: RemoteArray, dtype: np.dtype):
    """An operation step: r's handle for a routine that only reads it, or (of
    another precision) its contents converted and sent again."""
    if r.dtype == dtype:
        return r.handle
    array = yield Get(r.handle)
    return (yield Put(np.asfortranarray(array, dtype=dtype), r.server))


def release(handle) -> None:
    """Frees a scratch handle at once, whatever happened (quietly)."""
    try:
        handle.free()
    except Exception:
        pass


_lworks: dict = {}
_LWORKS_KEPT = 4096


def workspace(name: str, args: tuple, *positions: int):
    """An operation step: LAPACK's optimal workspace sizes, the first element
    of each result at positions of a query call (name with args, the sizes
    -1), asked once per routine and scalar arguments, then remembered. Gives
    one size, or a tuple for several positions."""
    key = (name,) + tuple(a for a in args if a is None or isinstance(a, (int, float, str)))
    sizes = _lworks.get(key)
    if sizes is None:
        result = yield Call(name, *args)
        sizes = tuple(max(1, int(np.real(result[p][0]))) for p in positions)
        if len(_lworks) >= _LWORKS_KEPT:
            _lworks.clear()
        _lworks[key] = sizes
    return sizes[0] if len(sizes) == 1 else sizes


def illegal(info: int, routine: str) -> ValueError:
    return ValueError(f"illegal value in {-info}-th argument of internal {routine}")


def linalg_warning() -> type:
    """scipy.linalg.LinAlgWarning when scipy is there, else numrpc's own."""
    global _warning_class
    if _warning_class is None:
        try:
            from scipy.linalg import LinAlgWarning as found
        except ImportError:
            found = type("LinAlgWarning", (RuntimeWarning,), {"__module__": "numrpc.linalg"})
        _warning_class = found
    return _warning_class


_warning_class = None


def f_view(a: np.ndarray) -> tuple[np.ndarray, bool]:
    """a's memory as a Fortran-ordered matrix: (a, False), or (a.T, True) when a
    is C-ordered only (its memory is then A^T in Fortran order)."""
    if not a.flags.f_contiguous and a.flags.c_contiguous:
        return a.T, True
    return a, False


def rhs(b, check_finite: bool):
    """An operation step: b as a numpy array (a RemoteArray brought back)."""
    if isinstance(b, RemoteArray):
        b = yield Get(b.handle)
    return np.atleast_1d(validated(b, check_finite))


def square(a1, message: str) -> int:
    if len(a1.shape) != 2 or a1.shape[0] != a1.shape[1]:
        raise ValueError(message)
    return a1.shape[0]
