# _call.py -- blocking and asynchronous calls (numrpc_callv, numrpc_callv_async):
# asynchronous ones complete concurrent.futures.Future objects from one waiter thread.
import concurrent.futures
import ctypes
import threading
from dataclasses import dataclass
from typing import Any, Optional

from ._args import Bound
from ._errors import Error, check, error_for
from ._interface import describe
from ._lib import CallInfoC, lib
from ._progress import ProgressArg, handler_of, registry as progress_registry

EINTERNAL = -18


@dataclass(frozen=True)
class CallInfo:
    """What one call cost (numrpc_call_info): bytes both ways, seconds, server."""
    bytes_sent: int
    bytes_received: int
    send_seconds: float
    compute_seconds: float
    receive_seconds: float
    total_seconds: float
    server: str
    connections: int
    tls_resumed: int

    @classmethod
    def from_c(cls, c: CallInfoC) -> "CallInfo":
        """The figures of a numrpc_call_info (ctypes), as Python values."""
        return cls(c.bytes_sent, c.bytes_received, c.send_seconds, c.compute_seconds, c.receive_seconds,
                   c.total_seconds, c.server.decode(errors="replace"), c.connections, c.tls_resumed)


def call(name: str, *args: Any, progress: ProgressArg = None) -> Any:
    """Run a routine on a server and wait for it (numrpc_callv).

    Parameters
    ----------
    name : str
        The routine ("dgesv"), or "numrpc://host:port/routine" for one server.
    *args
        Its arguments in IDL order, as in C, less the OUT scalars: numbers and
        one-character or longer strings for IN scalars, numpy arrays (or
        `Handle` objects) for arrays, None for WORK arrays and for OUT arrays
        numrpc should allocate.
    progress : callable or True, optional
        Called with a `numrpc.Progress` about every `set_progress_period`
        seconds while the routine computes (in this thread); True shows a
        tqdm bar (a line on stderr without tqdm).

    Returns
    -------
    object
        The OUT and INOUT scalars in IDL order, then the OUT arrays passed as
        None: nothing gives None, one value that value, more a tuple.

    Raises
    ------
    numrpc.Error
        The call failed; a subclass for the common cases (`UnknownRoutine`,
        `BadArgument`, `Timeout`, `CannotConnect`...). A wrong dtype or shape
        is raised before anything is sent.

    Examples
    --------
    >>> info = numrpc.call("dgesv", n, 1, a, n, ipiv, b, n)  # doctest: +SKIP
    """
    interface = describe(name)
    bound = Bound(name, interface, args)
    fn = handler_of(progress)
    if fn is None:
        check(lib.numrpc_callv(name.encode(), bound.args, len(interface.params)))  # GIL released inside
    else:
        with progress_registry.blocking(fn):
            check(lib.numrpc_callv(name.encode(), bound.args, len(interface.params)))
    return bound.results()


def last_call_info() -> CallInfo:
    """The figures of the calling thread's last blocking call.

    Returns
    -------
    CallInfo
        Bytes sent and received, the send, compute, receive and total seconds,
        the server ("host:port"), connections opened and TLS resumptions.
    """
    info = CallInfoC()
    check(lib.numrpc_last_call_info(ctypes.byref(info)))
    return CallInfo.from_c(info)


def set_timeout(seconds: float) -> None:
    """Set the time limit of every call started afterwards, blocking or not.

    Parameters
    ----------
    seconds : float
        The limit; 0 for none. A call that runs past it raises
        `numrpc.Timeout`.
    """
    check(lib.numrpc_set_timeout(float(seconds)))


class CallFuture(concurrent.futures.Future):
    """A Future of an asynchronous call: call_id is the library's id, call_info
    the call's figures once it is done. cancel() also stops it on its server."""

    def __init__(self) -> None:
        super().__init__()
        self.call_id: Optional[int] = None
        self.call_info: Optional[CallInfo] = None

    def cancel(self) -> bool:
        """Cancel the call, also on its server (numrpc_cancel).

        Returns
        -------
        bool
            False when the call had already completed; True when it is now
            cancelled (its server kills the worker running it).
        """
        if not super().cancel():
            return False
        lib.numrpc_cancel(self.call_id)  # the waiter still returns the call; its buffers live until then
        return True


class _Waiter:
    """One thread that returns completed calls (numrpc_wait_any) and completes
    their futures; it sleeps while no call is in progress."""

    def __init__(self):
        self.cond = threading.Condition()
        self.pending = {}  # call id -> (future, Bound): the arrays live until the call is returned
        self.thread = None

    def submit(self, name, args, progress=None):
        interface = describe(name)
        bound = Bound(name, interface, args)
        future = CallFuture()
        call_id = ctypes.c_int()
        fn = handler_of(progress)

        def start():
            check(lib.numrpc_callv_async(ctypes.byref(call_id), name.encode(), bound.args,
                                         len(interface.params)))
            return call_id.value

        with self.cond:  # registered before the waiter can look the id up
            if fn is None:
                start()
            else:
                progress_registry.start_async(fn, start)
            future.call_id = call_id.value
            self.pending[call_id.value] = (future, bound)
            if self.thread is None:
                self.thread = threading.Thread(target=self._run, name="numrpc-waiter", daemon=True)
                self.thread.start()
            self.cond.notify()
        return future

    def in_progress(self):
        with self.cond:
            return len(self.pending)

    def _run(self):
        call_id = ctypes.c_int()
        while True:
            with self.cond:
                while not self.pending:
                    self.cond.wait()
            rc = lib.numrpc_wait_any(ctypes.byref(call_id))  # GIL released while it waits
            detail = lib.numrpc_last_error_detail().decode(errors="replace")
            with self.cond:
                entry = self.pending.pop(call_id.value, None)
                orphans = list(self.pending.items()) if call_id.value == 0 else []
                if orphans:
                    self.pending.clear()
            if entry is not None:
                self._complete(call_id.value, entry, rc, detail)
            for orphan_id, (future, _) in orphans:  # another waiter of this process returned them
                progress_registry.end_async(orphan_id)
                if future.set_running_or_notify_cancel():
                    future.set_exception(Error(EINTERNAL, "the call was returned by another numrpc_wait"))

    @staticmethod
    def _complete(call_id, entry, rc, detail):
        future, bound = entry
        progress_registry.end_async(call_id)
        info = CallInfoC()
        if lib.numrpc_call_info_of(call_id, ctypes.byref(info)) == 0:
            future.call_info = CallInfo.from_c(info)
        if not future.set_running_or_notify_cancel():
            return  # cancelled by its caller
        if rc != 0:
            future.set_exception(error_for(rc, detail))
            return
        try:
            future.set_result(bound.results())
        except Exception as e:  # copying back into the caller's arrays failed
            future.set_exception(e)


_waiter = _Waiter()


def call_async(name: str, *args: Any, progress: ProgressArg = None) -> CallFuture:
    """Start a routine on a server and return at once (numrpc_callv_async).

    Parameters
    ----------
    name : str
        The routine, as for `call`.
    *args
        Its arguments, as for `call`. Keep the arrays alive, and do not touch
        the OUT and INOUT ones, until the future is done.
    progress : callable or True, optional
        As for `call`; the callable runs on the library's reader thread, and
        the frames carry the call's id.

    Returns
    -------
    CallFuture
        A `concurrent.futures.Future` of what `call` would return; its
        `call_id` is the library's call id, `call_info` the call's figures
        once it is done. `cancel()` also stops the call on its server.

    Raises
    ------
    numrpc.Error
        The call could not be started (a bad argument, no server). A failure
        after the start is raised by the future's `result()`.
    """
    return _waiter.submit(name, args, progress)


def calls_in_progress() -> int:
    """The number of asynchronous calls not yet returned.

    Returns
    -------
    int
        Calls started by `call_async` whose futures are not done yet.
    """
    return _waiter.in_progress()
