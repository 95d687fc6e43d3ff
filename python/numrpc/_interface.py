# _interface.py -- a routine's interface as the server describes it
# (numrpc_routine_*): parameters, IDL text, array shapes for given scalars.
import ctypes
import threading
from typing import Dict, Optional, Tuple

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
    """One parameter of a routine's interface.

    Attributes
    ----------
    index : int
        Its place in the IDL (0 first).
    name : str
        As the IDL names it.
    type : int
        A numrpc_type (numrpc.h's NUMRPC_T_*).
    mode : int
        A numrpc_mode: 1 IN, 2 OUT, 3 INOUT, 4 WORK.
    rank : int
        0 for a scalar, else the array's number of dimensions.
    """

    __slots__ = ("index", "name", "type", "mode", "rank")

    def __init__(self, index: int, info: _lib.ParamInfo) -> None:
        self.index = index
        self.name = info.name.decode()
        self.type, self.mode, self.rank = info.type, info.mode, info.rank

    @property
    def dtype(self) -> Optional[np.dtype]:
        """The numpy dtype an array of this parameter has (None for strings, files)."""
        return DTYPES.get(self.type)

    @property
    def returned(self) -> bool:
        """True for a scalar the call returns (mode OUT or INOUT) instead of taking a pointer
        (an OUT filename is not: the caller names the file the result is written to)."""
        return self.rank == 0 and self.mode in (_lib.MODE_OUT, _lib.MODE_INOUT) and self.type != _lib.T_FILE

    @property
    def passed(self) -> bool:
        """True for a parameter the Python caller passes (all but the returned OUT scalars)."""
        return not (self.returned and self.mode == _lib.MODE_OUT)

    def __repr__(self) -> str:
        dims = "[]" * self.rank
        return f"<{_lib.MODE_NAMES.get(self.mode, '?')} {_lib.TYPE_NAMES.get(self.type, '?')} {self.name}{dims}>"


class Interface:
    """A routine's interface as its server describes it: what `describe` returns.

    str() gives the routine's IDL.

    Attributes
    ----------
    name, module, description : str
        The routine's name, its module and its one-line description.
    hash : int
        The interface hash (what a pin checks).
    params : tuple of Param
        Every parameter, in IDL order.
    passed : tuple of Param
        The parameters a Python caller passes (all but the OUT scalars).
    """

    def __init__(self, name: str) -> None:
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
        self.params: Tuple[Param, ...] = tuple(params)
        self.passed: Tuple[Param, ...] = tuple(p for p in self.params if p.passed)

    def __del__(self):
        handle = getattr(self, "_handle", None)
        if handle and lib is not None:
            lib.numrpc_routine_free(handle)
            self._handle = None

    def shapes(self, args: ctypes.Array) -> ctypes.Array:
        """Every parameter's extents for given scalars (numrpc_routine_shapes).

        Parameters
        ----------
        args : ctypes array of numrpc_arg
            len(params) tagged arguments; only the IN scalars are read.

        Returns
        -------
        ctypes array of ParamShape
            One numrpc_param_shape a parameter (rank 0 for scalars).

        Raises
        ------
        numrpc.BadArgument
            A shape expression fails for these scalars (a negative extent...).
        """
        out = (_lib.ParamShape * max(len(self.params), 1))()
        check(lib.numrpc_routine_shapes(self._handle, args, len(self.params), out))
        return out

    def idl(self) -> str:
        """The interface as IDL text (numrpc_routine_idl)."""
        text = ctypes.c_void_p()
        check(lib.numrpc_routine_idl(self._handle, ctypes.byref(text)))
        try:
            return ctypes.string_at(text).decode()
        finally:
            _lib.free(text)

    def __str__(self) -> str:
        return self.idl()

    def __repr__(self) -> str:
        return f"<numrpc.Interface {self.module}.{self.name}({', '.join(p.name for p in self.params)})>"


_cache: Dict[str, Interface] = {}
_cache_lock = threading.Lock()


def describe(name: str) -> Interface:
    """The interface of a routine, as its server describes it.

    Fetched once and kept until `numrpc.Client` or `numrpc.finalize`
    reconfigures the library.

    Parameters
    ----------
    name : str
        The routine ("dgesv"), or "numrpc://host:port/routine".

    Returns
    -------
    Interface
        Its parameters (`params`); str() of it is the IDL.

    Raises
    ------
    numrpc.UnknownRoutine
        No configured server offers the routine.
    numrpc.CannotConnect
        No configured server could be reached.
    """
    with _cache_lock:
        found = _cache.get(name)
    if found is None:
        found = Interface(name)
        with _cache_lock:
            found = _cache.setdefault(name, found)
    return found


def forget_interfaces() -> None:
    """Drop the interfaces read so far (the library is reconfigured)."""
    with _cache_lock:
        _cache.clear()
