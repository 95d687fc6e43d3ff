# _call.py -- blocking and asynchronous calls (numrpc_callv, numrpc_callv_async):
# asynchronous ones complete concurrent.futures.Future objects from one waiter thread.
import concurrent.futures
import ctypes
import threading
from dataclasses import dataclass

from ._args import Bound
from ._errors import Error, check, error_for
from ._interface import describe
from ._lib import CallInfoC, lib

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
    def from_c(cls, c):
        return cls(c.bytes_sent, c.bytes_received, c.send_seconds, c.compute_seconds, c.receive_seconds,
                   c.total_seconds, c.server.decode(errors="replace"), c.connections, c.tls_resumed)


def call(name, *args):
    """Runs routine name with args in IDL order (OUT scalars left out); returns
    the OUT scalars and the OUT arrays passed as None (see docs/python.md)."""
    interface = describe(name)
    bound = Bound(name, interface, args)
    check(lib.numrpc_callv(name.encode(), bound.args, len(interface.params)))  # GIL released inside
    return bound.results()


def last_call_info():
    """The figures of the calling thread's last blocking call."""
    info = CallInfoC()
    check(lib.numrpc_last_call_info(ctypes.byref(info)))
    return CallInfo.from_c(info)


def set_timeout(seconds):
    """Time limit of every call started afterwards, blocking or not (0: none)."""
    check(lib.numrpc_set_timeout(float(seconds)))


class CallFuture(concurrent.futures.Future):
    """A Future of an asynchronous call: call_id is the library's id, call_info
    the call's figures once it is done. cancel() also stops it on its server."""

    def __init__(self):
        super().__init__()
        self.call_id = None
        self.call_info = None

    def cancel(self):
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

    def submit(self, name, args):
        interface = describe(name)
        bound = Bound(name, interface, args)
        future = CallFuture()
        call_id = ctypes.c_int()
        with self.cond:  # registered before the waiter can look the id up
            check(lib.numrpc_callv_async(ctypes.byref(call_id), name.encode(), bound.args,
                                         len(interface.params)))
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
                orphans = list(self.pending.values()) if call_id.value == 0 else []
                if orphans:
                    self.pending.clear()
            if entry is not None:
                self._complete(call_id.value, entry, rc, detail)
            for future, _ in orphans:  # another waiter of this process returned them
                if future.set_running_or_notify_cancel():
                    future.set_exception(Error(EINTERNAL, "the call was returned by another numrpc_wait"))

    @staticmethod
    def _complete(call_id, entry, rc, detail):
        future, bound = entry
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


def call_async(name, *args):
    """Starts routine name like call() and returns a concurrent.futures.Future
    of what call() would return. Keep the arrays alive and do not touch the
    OUT and INOUT ones until the future is done."""
    return _waiter.submit(name, args)


def calls_in_progress():
    return _waiter.in_progress()
