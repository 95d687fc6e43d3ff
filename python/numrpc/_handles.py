# _handles.py -- data handles: a numpy array kept on a server between calls
# (numrpc_data_put/get/free), passed wherever an array argument goes.
import ctypes
import threading
from typing import Any, Optional, Tuple

import numpy as np

from . import _lib
from ._errors import BadArgumentType, check
from ._interface import DTYPES, Param
from ._lib import lib

_TYPE_OF_DTYPE = {dtype: t for t, dtype in DTYPES.items()}


class Handle:
    """An array kept on a server (`numrpc.put`), passed wherever an array goes.

    The library owns the server's copy until `free()` (or the end of the
    process) and renews its lease meanwhile. A handle is also a context
    manager that frees it at the end.

    Attributes
    ----------
    dtype : numpy.dtype
        The element type.
    shape : tuple of int
        The array's shape (rows, or rows and columns).
    server : str or None
        The "host:port" asked for at `put`, or None.
    """

    def __init__(self, pointer: int, dtype: np.dtype, shape: Tuple[int, ...], server: Optional[str]) -> None:
        self._pointer = pointer  # numrpc_data*, owned by libnumrpc until free
        self._lock = threading.Lock()
        self.dtype, self.shape, self.server = dtype, shape, server

    @property
    def pointer(self) -> int:
        """The numrpc_data* (an int), what a call passes for this handle."""
        if self._pointer is None:
            raise ValueError("numrpc: this handle was freed")
        return self._pointer

    @property
    def type(self) -> int:
        """The element type as a numrpc_type (numrpc.h's NUMRPC_T_*)."""
        return _TYPE_OF_DTYPE[self.dtype]

    def get(self) -> np.ndarray:
        """Read the array back from its server (numrpc_data_get).

        Returns
        -------
        numpy.ndarray
            A new Fortran-ordered array of the handle's dtype and shape with
            what the server holds now (after the calls that wrote into it).

        Raises
        ------
        ValueError
            The handle was freed.
        numrpc.Error
            The server could not be read (`CannotConnect`, ...).
        """
        out = np.empty(self.shape, dtype=self.dtype, order="F")
        check(lib.numrpc_data_get(self.pointer, out.ctypes.data, self.shape[0] if out.ndim else 1))
        return out

    def free(self) -> None:
        """Free the server's copy (numrpc_data_free); the handle is unusable afterwards.

        Freeing twice does nothing the second time.

        Raises
        ------
        numrpc.Error
            The server could not be told.
        """
        with self._lock:
            pointer, self._pointer = self._pointer, None
        if pointer is not None:
            check(lib.numrpc_data_free(pointer))

    def __enter__(self) -> "Handle":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.free()

    def __repr__(self) -> str:
        state = "freed" if self._pointer is None else (self.server or "default server")
        return f"<numrpc.Handle {self.dtype} {self.shape} on {state}>"


def put(array: Any, server: Optional[str] = None) -> Handle:
    """Send an array to a server once, to use in calls without sending it again.

    Parameters
    ----------
    array : array_like
        A vector or a matrix of a numeric dtype numrpc has a type for
        (int32, int64, float32, float64, complex64, complex128, int8).
    server : str, optional
        "host:port"; None for the metaserver's pick or the first configured
        server.

    Returns
    -------
    Handle
        Pass it wherever the array would go; a handle passed for an OUT or
        INOUT array keeps the result on the server (`Handle.get` reads it).

    Raises
    ------
    numrpc.BadArgumentType
        The dtype has no numrpc type, or the array is not 1-D or 2-D.
    numrpc.Error
        The server could not take it.
    """
    array = np.asarray(array)
    if array.dtype not in _TYPE_OF_DTYPE:
        raise BadArgumentType(-2, f"numrpc.put: dtype {array.dtype} has no numrpc type "
                                  f"(one of {', '.join(str(d) for d in _TYPE_OF_DTYPE)})")
    if array.ndim not in (1, 2):
        raise BadArgumentType(-2, f"numrpc.put: a handle holds a vector or a matrix, not {array.ndim}-D")
    block = np.asfortranarray(array)  # sent as rows x cols, column-major
    rows = block.shape[0]
    cols = block.shape[1] if block.ndim == 2 else 1
    pointer = ctypes.c_void_p()
    check(lib.numrpc_data_put(ctypes.byref(pointer), server.encode() if server else None,
                              _TYPE_OF_DTYPE[block.dtype], block.ctypes.data, rows, cols, max(rows, 1)))
    return Handle(pointer.value, block.dtype, block.shape, server)


def check_handle(routine: str, param: Param, handle: Handle) -> int:
    """The handle's pointer for param, after checking its element type (the
    library checks that the parameter's block fits in it)."""
    pointer = handle.pointer  # raises for a freed handle
    if handle.dtype != param.dtype:
        raise BadArgumentType(-2, f"{routine}: parameter {param.name} is {_lib.TYPE_NAMES[param.type]} "
                                  f"({param.dtype}), the handle holds {handle.dtype}")
    return pointer
