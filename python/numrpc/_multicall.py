# _multicall.py -- a result made of numrpc calls in stages, run blocking or as one
# concurrent.futures.Future (block=False of numrpc.fft and numrpc.sparse.linalg).
"""Stages of calls behind one result.

A function that needs several calls (one per transform line, say) describes
them as `Steps`: the calls of a stage, all started at once, and `then`, which
turns their results into the value or into the next stage's `Steps`.
`run(work, block)` runs `work()` (which checks the arguments and returns the
first `Steps`, or the value at once) blocking, or returns a `MultiCallFuture`
that completes with the same value or raises the same exception.
"""
from __future__ import annotations

import concurrent.futures
import threading
import warnings
from typing import Any, Callable, List, Sequence, Tuple

from ._call import call, call_async

Call = Tuple[str, tuple]


class Steps:
    """One stage: calls [(routine, args), ...] started together, then
    then(results) -> the value, a WithWarning, or the next Steps."""

    __slots__ = ("calls", "then")

    def __init__(self, calls: Sequence[Call], then: Callable[[List[Any]], Any]):
        self.calls = list(calls)
        self.then = then


class WithWarning:
    """A value to return with a warning the caller sees: at the call when
    blocking, at every result() of the future otherwise."""

    __slots__ = ("value", "message", "category")

    def __init__(self, value, message: str, category: type):
        self.value, self.message, self.category = value, message, category


class MultiCallFuture(concurrent.futures.Future):
    """The Future of a result made of several numrpc calls. calls lists the
    CallFuture of every call started so far (their call_info has the figures);
    cancel() cancels them too (a running call is stopped on its server)."""

    def __init__(self):
        super().__init__()
        self.calls: List[concurrent.futures.Future] = []
        self._lock = threading.Lock()
        self._warning = None

    def cancel(self) -> bool:
        if not super().cancel():
            return False
        with self._lock:
            started = list(self.calls)
        for part in started:
            part.cancel()
        return True

    def result(self, timeout=None):
        value = super().result(timeout)
        if self._warning is not None:
            warnings.warn(self._warning[0], self._warning[1], stacklevel=2)
        return value

    def _finish(self, value):
        if isinstance(value, WithWarning):
            self._warning = (value.message, value.category)
            value = value.value
        if self.set_running_or_notify_cancel():
            self.set_result(value)

    def _fail(self, error: BaseException):
        if self.set_running_or_notify_cancel():
            self.set_exception(error)

    def _advance(self, value):
        """Starts value's calls (a Steps), or completes with value."""
        try:
            while isinstance(value, Steps) and not value.calls:
                value = value.then([])
        except Exception as e:
            self._fail(e)
            return
        if not isinstance(value, Steps):
            self._finish(value)
            return
        steps, parts, refused = value, [], None
        try:
            for name, args in steps.calls:
                parts.append(call_async(name, *args))
        except Exception as e:  # refused before it was sent (an argument the binding rejects)
            refused = e  # the result once the calls already started are back
            if not parts:
                self._fail(e)
                return
        with self._lock:
            self.calls.extend(parts)
        if self.cancelled():  # cancelled while the calls were being started
            for part in parts:
                part.cancel()
            return
        left = [len(parts)]

        def part_done(_):
            with self._lock:
                left[0] -= 1
                last = left[0] == 0
            if last and not self.done():
                self._stage_done(steps, parts, refused)

        for part in parts:
            part.add_done_callback(part_done)

    def _stage_done(self, steps, parts, refused):
        """Every call of the stage is back (none is left in progress): the
        first one that failed, in call order, is the result (refused: the
        error of the call that could not start, after them), else the next stage."""
        for part in parts:
            if part.cancelled():
                self._fail(concurrent.futures.CancelledError())
                return
            error = part.exception()
            if error is not None:
                self._fail(error)
                return
        if refused is not None:
            self._fail(refused)
            return
        try:
            value = steps.then([part.result() for part in parts])
        except Exception as e:
            self._fail(e)
            return
        self._advance(value)


def _gather(calls: Sequence[Call]) -> list:
    """The results of calls started together (blocking), once all are back;
    the first failure in call order is raised."""
    future = MultiCallFuture()
    future._advance(Steps(calls, lambda results: results))
    try:
        return future.result()
    except BaseException:
        future.cancel()
        raise


def run(work: Callable[[], Any], block: bool = True):
    """work() checks the arguments and returns Steps (or the value). Blocking:
    runs every stage (a stage of one call through numrpc.call, so that
    numrpc.last_call_info() describes it) and returns the value. Otherwise:
    a MultiCallFuture of the value; any exception, the arguments' checks
    included, is raised by its result()."""
    if not block:
        future = MultiCallFuture()
        try:
            value = work()
        except Exception as e:
            future._fail(e)
            return future
        future._advance(value)
        return future
    value = work()
    while isinstance(value, Steps):
        if len(value.calls) == 1:
            name, args = value.calls[0]
            results = [call(name, *args)]
        else:
            results = _gather(value.calls) if value.calls else []
        value = value.then(results)
    if isinstance(value, WithWarning):
        warnings.warn(value.message, value.category, stacklevel=3)
        value = value.value
    return value
