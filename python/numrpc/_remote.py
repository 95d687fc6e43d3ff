# _remote.py -- numrpc.asarray: an array kept on a numrpc server (a data handle)
# that numrpc.linalg takes wherever an array goes and np.asarray brings back.
from __future__ import annotations

import ctypes
import sys
from typing import Optional

import numpy as np

from ._call import last_call_info
from ._errors import check
from ._handles import _TYPE_OF_DTYPE, Handle, put
from ._lib import lib

# numrpc_data_new is not among _lib's declarations: a prototype of our own.
_data_new = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_void_p), ctypes.c_char_p, ctypes.c_int,
                             ctypes.c_size_t, ctypes.c_size_t, ctypes.c_size_t)(("numrpc_data_new", lib))

# scipy.linalg's choice of LAPACK precision (scipy.linalg.blas.find_best_blas_type):
# each dtype character scores 1 (single), 2 (double), 3 (single complex), 4
# (double complex); anything else counts as double.
_SCORE = {**{c: 1 for c in "?bBhHef"}, **{c: 2 for c in "iIlLqQdg"}, "F": 3, "D": 4, "G": 4}
_OF_SCORE = {1: ("s", np.dtype(np.float32)), 2: ("d", np.dtype(np.float64)),
             3: ("c", np.dtype(np.complex64)), 4: ("z", np.dtype(np.complex128))}


def lapack_type(*dtypes: np.dtype) -> tuple[str, np.dtype]:
    """The LAPACK prefix and dtype scipy.linalg computes in for arrays of these
    dtypes: float32 -> s, float64 -> d, complex64 -> c, complex128 -> z; small
    ints and float16 -> s, other ints -> d; float64 with complex64 -> z."""
    found = _chosen.get(dtypes)
    if found is None:
        scores = [_SCORE.get(np.dtype(d).char, 2) for d in dtypes]
        best = max(scores)
        if best == 3 and 2 in scores:
            best = 4
        found = _chosen[dtypes] = _OF_SCORE[best]
    return found


_chosen: dict = {}  # dtypes -> (prefix, dtype): lapack_type's answers


class _OwnedHandle(Handle):
    """A Handle freed on its server when the last reference goes: the remote
    array and any call in flight that passes it (Bound keeps it) hold one."""

    def __del__(self):
        if self._pointer is None or sys.is_finalizing():
            return
        try:
            self.free()
        except Exception:  # the server is gone, or numrpc.finalize freed it already
            pass


def _adopt(handle: Handle, server: Optional[str]) -> _OwnedHandle:
    """handle's pointer moved into an _OwnedHandle that knows its server."""
    owned = _OwnedHandle(handle.pointer, handle.dtype, handle.shape, handle.server or server)
    handle._pointer = None  # the plain handle no longer frees it
    return owned


def put_owned(array: np.ndarray, server: Optional[str] = None) -> _OwnedHandle:
    """numrpc.put, into a handle freed with its last reference, whose server is
    the one the library chose ("host:port")."""
    handle = put(array, server)
    return _adopt(handle, server or last_call_info().server)


def new_owned(dtype: np.dtype, shape: tuple, server: Optional[str]) -> _OwnedHandle:
    """An empty handle (numrpc_data_new: zeros) of dtype and shape, on server."""
    rows = shape[0]
    cols = shape[1] if len(shape) == 2 else 1
    pointer = ctypes.c_void_p()
    check(_data_new(ctypes.byref(pointer), server.encode() if server else None, _TYPE_OF_DTYPE[np.dtype(dtype)],
                    rows, cols, max(rows, 1)))
    handle = Handle(pointer.value, np.dtype(dtype), tuple(shape), server)
    return _adopt(handle, server or last_call_info().server)


class RemoteArray:
    """An array kept on a numrpc server (a data handle), made by numrpc.asarray
    or returned by numrpc.linalg.lu_factor / cho_factor.

    Every numrpc.linalg function takes it wherever an array goes and computes
    on its server: the array does not travel again. ``np.asarray(r)`` brings a
    copy back; ``r.free()`` (or leaving a ``with`` block, or dropping the last
    reference) frees it on the server.

    Attributes
    ----------
    shape : tuple of int
        The array's shape (1-D or 2-D).
    dtype : numpy.dtype
        Its element type: float32, float64, complex64 or complex128.
    handle : numrpc.Handle
        The data handle holding it, column-major.
    """

    def __init__(self, handle: Handle):
        self.handle = handle
        self.shape = tuple(handle.shape)
        self.dtype = np.dtype(handle.dtype)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape))

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    @property
    def server(self) -> Optional[str]:
        """The server holding it, "host:port"."""
        return self.handle.server

    def get(self) -> np.ndarray:
        """A new Fortran-ordered numpy array with the contents (one transfer)."""
        return self.handle.get()

    def __array__(self, dtype=None, copy=None):
        array = self.handle.get()  # a new array whatever copy says: the data is on the server
        return array if dtype is None else array.astype(dtype, copy=False)

    def __len__(self) -> int:
        return self.shape[0]

    def free(self) -> None:
        """Frees the server's copy; the array cannot be used afterwards."""
        self.handle.free()

    def __enter__(self) -> "RemoteArray":
        return self

    def __exit__(self, *exc) -> None:
        self.free()

    def __repr__(self) -> str:
        where = "freed" if self.handle._pointer is None else self.server
        return f"<numrpc.RemoteArray {self.dtype} {self.shape} on {where}>"


def asarray(a, dtype=None, server: Optional[str] = None) -> RemoteArray:
    """Sends an array to a server once and returns it as a RemoteArray.

    Parameters
    ----------
    a : array_like or RemoteArray
        A vector or a matrix. A RemoteArray is returned as it is (when dtype
        is None or its own).
    dtype : data-type, optional
        The element type kept on the server. By default the precision
        numrpc.linalg computes in, as scipy.linalg chooses it: float32,
        float64, complex64 or complex128 (ints become float64).
    server : str, optional
        "host:port"; by default the metaserver's pick, else the first
        configured server.

    Returns
    -------
    RemoteArray
        The array on the server (one copy in Fortran order travelled).
    """
    if isinstance(a, RemoteArray):
        if dtype is None or np.dtype(dtype) == a.dtype:
            return a
        a = a.get()
    array = np.asarray(a)
    if array.ndim not in (1, 2):
        raise ValueError(f"numrpc.asarray: a remote array is a vector or a matrix, not {array.ndim}-D")
    if array.size == 0:
        raise ValueError("numrpc.asarray: a remote array cannot be empty")
    target = np.dtype(dtype) if dtype is not None else lapack_type(array.dtype)[1]
    return RemoteArray(put_owned(np.asfortranarray(array, dtype=target), server))
