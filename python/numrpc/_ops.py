# _ops.py -- operations: generators of remote requests (calls, stages of calls, puts,
# gets), run blocking or as a Future; numrpc.linalg, numrpc.fft and numrpc.sparse use it.
"""Operations: functions made of several remote requests.

An operation is a generator. It yields requests (`Call`, `Stage`, `Put`,
`New`, `Get`, `Free`) and is sent what each gives, or has the request's
exception thrown into it (so that it frees what it made); it returns its
value, or a `WithWarning` of it. `run(operation, block)` drives it in the
calling thread and returns the value, or returns an `OperationFuture` at
once whose calls are numrpc.call_async calls (the library's farm spreads
them over the servers) and whose puts and gets run on a helper thread.
"""
from __future__ import annotations

import concurrent.futures
import ctypes
import functools
import sys
import threading
import warnings
from typing import Any, Callable, Generator, List, Optional, Sequence, Tuple

import numpy as np

from ._call import CallFuture, CallInfo, call, call_async
from ._lib import CallInfoC, lib
from ._remote import new_owned, put_owned

# ---- The requests an operation yields; the driver sends back what each gives ----


class Call:
    """numrpc.call(name, *args): gives what the call returns."""
    __slots__ = ("name", "args")

    def __init__(self, name: str, *args: Any):
        self.name, self.args = name, args

    def run(self) -> Any:
        return call(self.name, *self.args)


class Stage:
    """Calls [(name, args), ...] started together: gives the list of their results, in order.

    Run blocking, a stage of one call goes through numrpc.call (so that
    numrpc.last_call_info describes it); several are started with
    numrpc.call_async and gathered. When calls fail, the stage fails with
    the first failure in call order, once every call it started is back
    (none is left running); a call refused at its start (an argument the
    binding rejects) starts no further one and fails the stage after the
    started ones are back.
    """
    __slots__ = ("calls", "ids")

    def __init__(self, calls: Sequence[Tuple[str, tuple]]):
        self.calls = calls
        self.ids: Sequence[int] = ()  # the library's ids of the calls run with call_async

    def run(self) -> list:
        calls = self.calls
        if len(calls) == 1:
            name, args = calls[0]
            return [call(name, *args)]
        parts, refused = _start_all(calls)
        try:
            concurrent.futures.wait(parts)
        except BaseException:  # interrupted while waiting: nothing is left running
            for part in parts:
                part.cancel()
            raise
        self.ids = [part.call_id for part in parts]
        return _gathered(parts, refused)

    def record(self, figures: _Figures, count: int) -> int:
        """Puts the figures of the stage's calls into figures' slots from
        count on (as many as there are slots); gives the next free slot."""
        if len(self.calls) == 1:  # through numrpc.call: the thread's last call
            _last_call_info(figures.pointers[count])
            return count + 1
        for call_id in self.ids:
            if count == _FIGURES_KEPT:
                break
            if _call_info_of(call_id, figures.pointers[count]) == 0:
                count += 1
        return count


def _start_all(calls: Sequence[Tuple[str, tuple]]) -> Tuple[List[CallFuture], Optional[Exception]]:
    """Starts calls with call_async: (their CallFutures, None), or, when one
    is refused before it is sent, (those started before it, its error)."""
    parts: List[CallFuture] = []
    try:
        for name, args in calls:
            parts.append(call_async(name, *args))
    except Exception as e:
        return parts, e
    return parts, None


def _gathered(parts: Sequence[CallFuture], refused: Optional[Exception]) -> list:
    """The results of a stage's calls, all back: the first failure in call
    order is raised (a cancelled call's CancelledError), then refused."""
    for part in parts:
        if part.cancelled():
            raise concurrent.futures.CancelledError()
        error = part.exception()
        if error is not None:
            raise error
    if refused is not None:
        raise refused
    return [part.result() for part in parts]


class Put:
    """Sends an array to a server: gives its handle (freed with its last reference)."""
    __slots__ = ("array", "server")

    def __init__(self, array: np.ndarray, server: Optional[str] = None):
        self.array, self.server = array, server

    def run(self) -> Any:
        return put_owned(self.array, self.server)


class New:
    """An empty handle (zeros) of dtype and shape on server: gives the handle."""
    __slots__ = ("dtype", "shape", "server")

    def __init__(self, dtype: np.dtype, shape: tuple, server: Optional[str]):
        self.dtype, self.shape, self.server = dtype, shape, server

    def run(self) -> Any:
        return new_owned(self.dtype, self.shape, self.server)


class Get:
    """Brings a handle's contents back: gives a Fortran-ordered array."""
    __slots__ = ("handle",)

    def __init__(self, handle: Any):
        self.handle = handle

    def run(self) -> np.ndarray:
        return self.handle.get()


class Free:
    """Frees a handle on its server: gives None."""
    __slots__ = ("handle",)

    def __init__(self, handle: Any):
        self.handle = handle

    def run(self) -> None:
        self.handle.free()


class WithWarning:
    """What an operation returns for a value that comes with a warning: the
    caller sees it at the call when blocking, at every result() of the
    future otherwise."""
    __slots__ = ("value", "message", "category")

    def __init__(self, value: Any, message: str, category: type):
        self.value, self.message, self.category = value, message, category


def warn(message: str, category: type) -> None:
    """warnings.warn at the first frame outside numrpc: the code that called
    the public function (or result()), whichever driver runs the operation."""
    frame, level = sys._getframe(1), 2
    while frame is not None and frame.f_globals.get("__name__", "").partition(".")[0] == "numrpc":
        frame, level = frame.f_back, level + 1
    warnings.warn(message, category, stacklevel=level)


Operation = Generator[Any, Any, Any]
_last_call_info = lib.numrpc_last_call_info
_call_info_of = lib.numrpc_call_info_of

# ---- The blocking driver ----

_thread = threading.local()
_FIGURES_KEPT = 16  # requests of one blocking operation whose figures last_calls gives


def _figures() -> CallInfoC:
    info = CallInfoC()
    lib.numrpc_last_call_info(ctypes.byref(info))
    return info


class _Figures:
    """A thread's record of its last blocking operation's requests: CallInfoC
    slots filled in place (no allocation per request)."""

    def __init__(self):
        self.slots = (CallInfoC * _FIGURES_KEPT)()
        self.pointers = [ctypes.byref(self.slots[i]) for i in range(_FIGURES_KEPT)]
        self.count = 0


def run(operation: Operation, block: bool) -> Any:
    """Runs operation: to its value when block (its warning, if it returns a
    WithWarning, given at the call), else as an OperationFuture."""
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
            value = stop.value
            if type(value) is WithWarning:
                warn(value.message, value.category)
                value = value.value
            return value
        try:
            value = step.run()
        except BaseException as e:  # into the operation, which frees what it made
            send, value = operation.throw, e
        else:
            send = operation.send
            if count < _FIGURES_KEPT:
                if type(step) is Stage:
                    count = step.record(figures, count)
                else:
                    _last_call_info(figures.pointers[count])
                    count += 1
                figures.count = count


def record_one() -> None:
    """The figures of a function that made its one call itself (not through run)."""
    figures = getattr(_thread, "figures", None)
    if figures is None:
        figures = _thread.figures = _Figures()
    _last_call_info(figures.pointers[0])
    figures.count = 1


def last_calls() -> List[CallInfo]:
    """The requests of the calling thread's last blocking operation (a
    numrpc.linalg, numrpc.fft or numrpc.sparse function).

    Returns
    -------
    list of numrpc.CallInfo
        One per request that succeeded (calls, each call of a stage, puts,
        gets, frees; the first 16), in order: bytes sent and received,
        seconds, server.
    """
    figures = getattr(_thread, "figures", None)
    return [] if figures is None else [CallInfo.from_c(figures.slots[i]) for i in range(figures.count)]


# ---- The asynchronous driver ----


class OperationFuture(concurrent.futures.Future):
    """The Future of a numrpc.linalg, numrpc.fft or numrpc.sparse function
    called with block=False.

    result() is what the blocking call returns and raises what it raises;
    a warning the blocking call gives at the call (spsolve's
    MatrixRankWarning, lu_factor's LinAlgWarning) is given by every
    result(). Its remote calls are numrpc.call_async calls (spread over the
    servers by the library's farm, or on the server holding their handles);
    puts and gets run on a helper thread. ``calls`` lists the
    numrpc.CallInfo of each request as it completes (a stage's calls in
    call order once all are back); cancel() also cancels the calls in flight.
    """

    def __init__(self, operation: Operation):
        super().__init__()
        self.calls: List[CallInfo] = []
        self._operation = operation
        self._inner: Any = None  # the calls in flight: a CallFuture, or a stage's list of them
        self._warning: Optional[Tuple[str, type]] = None  # what result() warns

    def cancel(self) -> bool:
        """Cancels the operation and the calls it has in flight.

        Returns
        -------
        bool
            False when the operation had already completed.
        """
        if not super().cancel():
            return False
        inner = self._inner
        if inner is not None:
            for part in (inner if type(inner) is list else (inner,)):
                part.cancel()
        return True

    def result(self, timeout: Optional[float] = None) -> Any:
        """The operation's value, as concurrent.futures.Future.result gives it.

        Warns
        -----
        The warning the blocking call would give at the call (each time).
        """
        value = super().result(timeout)
        if self._warning is not None:
            warn(*self._warning)
        return value


_pool = None
_pool_lock = threading.Lock()


def _helpers() -> concurrent.futures.ThreadPoolExecutor:
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = concurrent.futures.ThreadPoolExecutor(max_workers=4, thread_name_prefix="numrpc-ops")
        return _pool


def _start(operation: Operation) -> OperationFuture:
    future = OperationFuture(operation)
    _advance(future, operation.send, None)  # up to the first request, in the caller's thread
    return future


def _advance(future: OperationFuture, send: Callable, value: Any) -> None:
    """Runs the operation from where it waits until its next request is under
    way (or it ends): calls are started with call_async, anything else goes
    to a helper thread; either one resumes it when done."""
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
        kind = type(step)
        if kind is Call:
            try:
                inner = call_async(step.name, *step.args)
            except BaseException as e:
                send, value = operation.throw, e
                continue
            future._inner = inner
            inner.add_done_callback(functools.partial(_call_done, future))
            return
        if kind is Stage:
            _start_stage(future, step.calls)
            return
        _helpers().submit(_data_step, future, step)
        return


def _call_done(future: OperationFuture, inner: CallFuture) -> None:
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


def _start_stage(future: OperationFuture, calls: Sequence[Tuple[str, tuple]]) -> None:
    """Starts a stage's calls; the last one back resumes the operation."""
    parts, refused = _start_all(calls)
    future._inner = parts
    if future.cancelled():  # cancelled while they were being started
        for part in parts:
            part.cancel()
    left, lock = [len(parts)], threading.Lock()

    def part_done(_: CallFuture) -> None:
        with lock:
            left[0] -= 1
            last = left[0] == 0
        if last:
            _stage_done(future, parts, refused)

    if not parts:
        _stage_done(future, parts, refused)
    for part in parts:
        part.add_done_callback(part_done)


def _stage_done(future: OperationFuture, parts: List[CallFuture], refused: Optional[Exception]) -> None:
    future._inner = None
    future.calls.extend(part.call_info for part in parts if part.call_info is not None)
    try:
        results = _gathered(parts, refused)
    except BaseException as e:
        _advance(future, future._operation.throw, e)
        return
    _advance(future, future._operation.send, results)


def _data_step(future: OperationFuture, step: Any) -> None:
    try:
        value = step.run()
    except BaseException as e:
        _advance(future, future._operation.throw, e)
        return
    future.calls.append(CallInfo.from_c(_figures()))
    _advance(future, future._operation.send, value)


def _settle(future: OperationFuture, result: Any, error: Optional[BaseException]) -> None:
    future._operation = None  # the finished generator and its arrays go
    if type(result) is WithWarning:
        future._warning = (result.message, result.category)
        result = result.value
    if not future.set_running_or_notify_cancel():
        return
    if error is None:
        future.set_result(result)
    else:
        future.set_exception(error)
