# numrpc -- remote numerical routines from Python: numpy arrays in and out,
# one line a call, futures for many at once (docs/python.md).
"""numrpc for Python.

    info = numrpc.call("dgesv", n, 1, a, n, ipiv, b, n)   # the solution is in b

Arguments go in the routine's IDL order, as in C, less the OUT scalars, which
are returned. See numrpc.describe(name) for a routine's interface.
"""
from ._args import reset_copy_warnings
from ._call import CallFuture, CallInfo, call, call_async, calls_in_progress, last_call_info, set_timeout
from ._client import Client, finalize
from ._each import EachResult, call_each
from ._events import Event, events
from ._errors import (BadArgument, BadArgumentType, Cancelled, CannotConnect, ConnectionLost, CopyWarning,
                      Error, ServerCrashed, Timeout, UnknownRoutine)
from ._handles import Handle, put
from ._interface import Interface, Param, describe
from ._lib import path as library_path
from ._ops import OperationFuture
from ._progress import Progress, set_progress_period
from ._version import __version__
from ._remote import RemoteArray, asarray
from . import fft, linalg, sparse

__all__ = ["call", "call_async", "calls_in_progress", "describe", "put", "Client", "finalize", "last_call_info", "set_timeout",
           "Handle", "Interface", "Param", "CallFuture", "CallInfo", "CopyWarning", "reset_copy_warnings",
           "Error", "UnknownRoutine", "BadArgument", "BadArgumentType", "Timeout", "Cancelled",
           "ServerCrashed", "CannotConnect", "ConnectionLost", "library_path"]
__all__ += ["Progress", "set_progress_period", "call_each", "EachResult", "events", "Event", "asarray", "RemoteArray", "OperationFuture", "linalg", "fft", "sparse", "__version__"]
