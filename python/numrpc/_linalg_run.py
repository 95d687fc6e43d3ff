# _linalg_run.py -- how numrpc.linalg's functions run: each is a generator of remote
# requests (calls, puts, gets) that one driver runs blocking and another as a Future.
from __future__ import annotations

import concurrent.futures
import ctypes
import functools
import math
import threading
from typing import Any, Callable, Generator, Optional, Union

import numpy as np
from numpy.typing import ArrayLike

from ._call import CallInfo, call, call_async
from ._lib import CallInfoC, lib
from ._remote import RemoteArray, new_owned, put_owned

# ---- The requests an operation yields; the driver sends back what each gives ----


class Call:
    """numrpc.call(name, *args): gives what the call returns."""
    __slots__ = ("name", "args")

    def __init__(self, name: str, *args: Any):
        self.name, self.args = name, args

    def run(self):
        return call(self.name, *self.args)


class Put:
    """Sends an array to a server: gives its handle (freed with its last reference)."""
    __slots__ = ("array", "server")

    def __init__(self, array: np.ndarray, server: Optional[str] = None):
        self.array, self.server = array, server

    def run(self):
        return put_owned(self.array, self.server)


class New:
    """An empty handle (zeros) of dtype and shape on server: gives the handle."""
    __slots__ = ("dtype", "shape", "server")

    def __init__(self, dtype: np.dtype, shape: tuple, server: Optional[str]):
        self.dtype, self.shape, self.server = dtype, shape, server

    def run(self):
        return new_owned(self.dtype, self.shape, self.server)


class Get:
    """Brings a handle's contents back: gives a Fortran-ordered array."""
    __slots__ = ("handle",)

    def __init__(self, handle):
        self.handle = handle

    def run(self):
        return self.handle.get()


class Free:
    """Frees a handle on its server: gives None."""
    __slots__ = ("handle",)

    def __init__(self, handle):
        self.handle = handle

    def run(self):
        self.handle.free()


Operation = Generator[Any, Any, Any]
Matrix = Union[ArrayLike, RemoteArray]  # what numrpc.linalg's functions take for an array
_last_call_info = lib.numrpc_last_call_info

# ---- The blocking driver ----

_thread = threading.local()
_FIGURES_KEPT = 16  # requests of one blocking function whose figures last_calls gives


def _figures() -> CallInfoC:
    info = CallInfoC()
    lib.numrpc_last_call_info(ctypes.byref(info))
    return info


class _Figures:
    """A thread's record of its last blocking function's requests: CallInfoC
    slots filled in place (no allocation per request)."""

    def __init__(self):
        self.slots = (CallInfoC * _FIGURES_KEPT)()
        self.pointers = [ctypes.byref(self.slots[i]) for i in range(_FIGURES_KEPT)]
        self.count = 0


def run(operation: Operation, block: bool):
    """Runs operation: to its result when block, else as a LinalgFuture."""
    if not block:
        return _start(operation)
    figures = getattr(_thread, "figures", None)
    if figures is None:
        figures = _thread.figures = _Figures()
    figures.count = count = 0
    send, value = operation.send, None
    while True:
        try:
            step = send(value)
        except StopIteration as stop:
            return stop.value
        try:
            value = step.run()
        except BaseException as e:  # into the operation, which frees what it made
            send, value = operation.throw, e
        else:
            send = operation.send
            if count < _FIGURES_KEPT:
                _last_call_info(figures.pointers[count])
                figures.count = count = count + 1


def record_one() -> None:
    """The figures of a function that made its one call itself (not through run)."""
    figures = getattr(_thread, "figures", None)
    if figures is None:
        figures = _thread.figures = _Figures()
    _last_call_info(figures.pointers[0])
    figures.count = 1


def last_calls() -> list:
    """The requests of the calling thread's last blocking numrpc.linalg function.

    Returns
    -------
    list of numrpc.CallInfo
        One per request that succeeded (calls, puts, gets, frees; the first 16), in order:
        bytes sent and received, seconds, server.
    """
    figures = getattr(_thread, "figures", None)
    return [] if figures is None else [CallInfo.from_c(figures.slots[i]) for i in range(figures.count)]


# ---- The asynchronous driver ----


class LinalgFuture(concurrent.futures.Future):
    """The Future of a numrpc.linalg function called with block=False.

    result() is what the blocking call returns and raises what it raises.
    Its remote calls are numrpc.call_async calls (spread over the servers by
    the library's farm, or on the server holding their handles); puts and
    gets run on a helper thread. ``calls`` lists the numrpc.CallInfo of each
    request as it completes; cancel() also cancels the call in flight.
    """

    def __init__(self, operation: Operation):
        super().__init__()
        self.calls: list = []
        self._operation = operation
        self._inner = None  # the call in flight (a CallFuture)

    def cancel(self) -> bool:
        if not super().cancel():
            return False
        inner = self._inner
        if inner is not None:
            inner.cancel()
        return True


_pool = None
_pool_lock = threading.Lock()


def _helpers() -> concurrent.futures.ThreadPoolExecutor:
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = concurrent.futures.ThreadPoolExecutor(max_workers=4, thread_name_prefix="numrpc-linalg")
        return _pool


def _start(operation: Operation) -> LinalgFuture:
    future = LinalgFuture(operation)
    _advance(future, operation.send, None)  # up to the first request, in the caller's thread
    return future


def _advance(future: LinalgFuture, send: Callable, value: Any) -> None:
    """Runs the operation from where it waits until its next request is under
    way (or it ends): a call is started with call_async, anything else goes to
    a helper thread; either one resumes it when done."""
    operation = future._operation
    while True:
        if future.cancelled():
            operation.close()
            return
        try:
            step = send(value)
        except StopIteration as stop:
            _settle(future, stop.value, None)
            return
        except BaseException as e:
            _settle(future, None, e)
            return
        if type(step) is Call:
            try:
                inner = call_async(step.name, *step.args)
            except BaseException as e:
                send, value = operation.throw, e
                continue
            future._inner = inner
            inner.add_done_callback(functools.partial(_call_done, future))
            return
        _helpers().submit(_data_step, future, step)
        return


def _call_done(future: LinalgFuture, inner) -> None:
    future._inner = None
    if inner.call_info is not None:
        future.calls.append(inner.call_info)
    if inner.cancelled():
        _advance(future, future._operation.throw, concurrent.futures.CancelledError())
        return
    error = inner.exception()
    if error is None:
        _advance(future, future._operation.send, inner.result())
    else:
        _advance(future, future._operation.throw, error)


def _data_step(future: LinalgFuture, step) -> None:
    try:
        value = step.run()
    except BaseException as e:
        _advance(future, future._operation.throw, e)
        return
    future.calls.append(CallInfo.from_c(_figures()))
    _advance(future, future._operation.send, value)


def _settle(future: LinalgFuture, result: Any, error: Optional[BaseException]) -> None:
    future._operation = None  # the finished generator and its arrays go
    if not future.set_running_or_notify_cancel():
        return
    if error is None:
        future.set_result(result)
    else:
        future.set_exception(error)


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
