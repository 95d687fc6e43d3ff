# _handles.py -- data handles: a numpy array kept on a server between calls
# (numrpc_data_put/get/free), passed wherever an array argument goes.
import ctypes
import threading

import numpy as np

from . import _lib
from ._errors import BadArgumentType, check
from ._interface import DTYPES
from ._lib import lib

_TYPE_OF_DTYPE = {dtype: t for t, dtype in DTYPES.items()}


class Handle:
    """An array on a server (numrpc.put). The library owns the server's copy
    until free() (or the end of the process); the lease is renewed meanwhile."""

    def __init__(self, pointer, dtype, shape, server):
        self._pointer = pointer  # numrpc_data*, owned by libnumrpc until free
        self._lock = threading.Lock()
        self.dtype, self.shape, self.server = dtype, shape, server

    @property
    def pointer(self):
        """The numrpc_data* (an int), what a call passes for this handle."""
        if self._pointer is None:
            raise ValueError("numrpc: this handle was freed")
        return self._pointer

    @property
    def type(self):
        return _TYPE_OF_DTYPE[self.dtype]

    def get(self):
        """A new Fortran-ordered array with the handle's contents."""
        out = np.empty(self.shape, dtype=self.dtype, order="F")
        check(lib.numrpc_data_get(self.pointer, out.ctypes.data, self.shape[0] if out.ndim else 1))
        return out

    def free(self):
        """Frees the server's copy; the handle cannot be used afterwards."""
        with self._lock:
            pointer, self._pointer = self._pointer, None
        if pointer is not None:
            check(lib.numrpc_data_free(pointer))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.free()

    def __repr__(self):
        state = "freed" if self._pointer is None else (self.server or "default server")
        return f"<numrpc.Handle {self.dtype} {self.shape} on {state}>"


def put(array, server=None):
    """Sends array (1-D or 2-D, numeric) to server ("host:port", or None for the
    metaserver's pick or the first configured server) and returns its Handle."""
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


def check_handle(routine, param, handle):
    """The handle's pointer for param, after checking its element type (the
    library checks that the parameter's block fits in it)."""
    pointer = handle.pointer  # raises for a freed handle
    if handle.dtype != param.dtype:
        raise BadArgumentType(-2, f"{routine}: parameter {param.name} is {_lib.TYPE_NAMES[param.type]} "
                                  f"({param.dtype}), the handle holds {handle.dtype}")
    return pointer
