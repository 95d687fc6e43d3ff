# _interface.py -- a routine's interface as the server describes it
# (numrpc_routine_*): parameters, IDL text, array shapes for given scalars.
import ctypes
import threading

import numpy as np

from . import _lib
from ._errors import check
from ._lib import lib

# The numpy dtype of each numeric IDL type (char arrays are bytes).
DTYPES = {_lib.T_CHAR: np.dtype(np.int8), _lib.T_INT: np.dtype(np.int32),
          _lib.T_LONG: np.dtype(np.int64), _lib.T_FLOAT: np.dtype(np.float32),
          _lib.T_DOUBLE: np.dtype(np.float64), _lib.T_SCOMPLEX: np.dtype(np.complex64),
          _lib.T_DCOMPLEX: np.dtype(np.complex128)}
# Also taken for char arrays: any one-byte element.
CHAR_DTYPES = (np.dtype(np.int8), np.dtype(np.uint8), np.dtype("S1"))


class Param:
    """One parameter: name, type (numrpc_type), mode (numrpc_mode), rank (0: scalar)."""

    __slots__ = ("index", "name", "type", "mode", "rank")

    def __init__(self, index, info):
        self.index = index
        self.name = info.name.decode()
        self.type, self.mode, self.rank = info.type, info.mode, info.rank

    @property
    def dtype(self):
        """The numpy dtype an array of this parameter has (None for strings, files)."""
        return DTYPES.get(self.type)

    @property
    def returned(self):
        """True for a scalar the call returns (mode OUT or INOUT) instead of taking a pointer
        (an OUT filename is not: the caller names the file the result is written to)."""
        return self.rank == 0 and self.mode in (_lib.MODE_OUT, _lib.MODE_INOUT) and self.type != _lib.T_FILE

    @property
    def passed(self):
        """True for a parameter the Python caller passes (all but the returned OUT scalars)."""
        return not (self.returned and self.mode == _lib.MODE_OUT)

    def __repr__(self):
        dims = "[]" * self.rank
        return f"<{_lib.MODE_NAMES.get(self.mode, '?')} {_lib.TYPE_NAMES.get(self.type, '?')} {self.name}{dims}>"


class Interface:
    """What numrpc.describe(name) returns; str() gives the routine's IDL."""

    def __init__(self, name):
        handle = ctypes.c_void_p()
        check(lib.numrpc_routine_get(name.encode(), ctypes.byref(handle)))
        self._handle = handle  # freed by __del__ (numrpc_routine_free)
        self.name = lib.numrpc_routine_name(handle).decode()
        self.module = lib.numrpc_routine_module(handle).decode()
        self.description = lib.numrpc_routine_description(handle).decode()
        self.hash = lib.numrpc_routine_hash(handle)
        params = []
        info = _lib.ParamInfo()
        for i in range(check(lib.numrpc_routine_nparams(handle))):
            check(lib.numrpc_routine_param(handle, i, ctypes.byref(info)))
            params.append(Param(i, info))
        self.params = tuple(params)
        self.passed = tuple(p for p in self.params if p.passed)

    def __del__(self):
        handle = getattr(self, "_handle", None)
        if handle and lib is not None:
            lib.numrpc_routine_free(handle)
            self._handle = None

    def shapes(self, args):
        """Every parameter's numrpc_param_shape for the in scalars of args
        (a ctypes array of len(params) numrpc_arg)."""
        out = (_lib.ParamShape * max(len(self.params), 1))()
        check(lib.numrpc_routine_shapes(self._handle, args, len(self.params), out))
        return out

    def idl(self):
        text = ctypes.c_void_p()
        check(lib.numrpc_routine_idl(self._handle, ctypes.byref(text)))
        try:
            return ctypes.string_at(text).decode()
        finally:
            _lib.free(text)

    def __str__(self):
        return self.idl()

    def __repr__(self):
        return f"<numrpc.Interface {self.module}.{self.name}({', '.join(p.name for p in self.params)})>"


_cache = {}
_cache_lock = threading.Lock()


def describe(name):
    """The interface of routine name (a routine or numrpc://host:port/routine),
    fetched once and kept until numrpc.Client reconfigures the library."""
    with _cache_lock:
        found = _cache.get(name)
    if found is None:
        found = Interface(name)
        with _cache_lock:
            found = _cache.setdefault(name, found)
    return found


def forget_interfaces():
    with _cache_lock:
        _cache.clear()
