# _events.py -- numrpc.events(): a metaserver's events as a Python iterator, over the C library's
# numrpc_watch run in a background thread (the one reader of EVENT messages is the C one).
import ctypes
import queue
import threading
from collections import namedtuple

from ._errors import error_for
from ._lib import lib


class _EventC(ctypes.Structure):
    _fields_ = [("type", ctypes.c_char_p), ("time", ctypes.c_double), ("server", ctypes.c_char_p),
                ("name", ctypes.c_char_p), ("routine", ctypes.c_char_p), ("detail", ctypes.c_char_p)]


_EventFn = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(_EventC), ctypes.c_void_p)
lib.numrpc_watch.restype = ctypes.c_int
lib.numrpc_watch.argtypes = [ctypes.c_char_p, ctypes.c_char_p, _EventFn, ctypes.c_void_p, ctypes.c_double]

Event = namedtuple("Event", "type time server name routine detail")
Event.__doc__ = """One metaserver event: its type ("join", "leave", "drain", "undrain", "register",
"unregister", "overload"), time (Unix seconds), server ("host:port"), the server's name, the
module (register, unregister; else ""), and a detail (why a server left, the routines...)."""

_QUEUED = 4096  # events waiting for the iterator; past it the watch waits, and the metaserver drops it


def _text(b):
    return b.decode(errors="replace") if b else ""


def events(metaserver=None, types=None, timeout=None):
    """Iterates over the events of a metaserver ("host:port"; None: NUMRPC_METASERVER) as Event
    tuples, of the types asked (a list or "join,leave"; None: all), for timeout seconds (None: until
    the connection ends).  The subscription starts now, before the first next().  A failure (no
    metaserver, a token without the `status` right, the metaserver gone) is raised from next().
    The watch runs in a daemon thread, which ends at the next event after the iterator is closed."""
    if types is not None and not isinstance(types, str):
        types = ",".join(types)
    seconds = 0.0 if timeout is None else float(timeout)
    if seconds < 0:
        raise ValueError("timeout must be >= 0")
    q = queue.Queue()
    stop = threading.Event()
    room = threading.Semaphore(_QUEUED)

    def deliver(ev, _arg):
        if stop.is_set():
            return 1
        e = ev.contents
        while not room.acquire(timeout=0.5):
            if stop.is_set():
                return 1
        q.put(Event(_text(e.type), e.time, _text(e.server), _text(e.name), _text(e.routine), _text(e.detail)))
        return 0

    callback = _EventFn(deliver)  # kept alive by the thread's closure

    def watch():
        rc = lib.numrpc_watch(metaserver.encode() if metaserver else None, types.encode() if types else None,
                              callback, None, seconds)
        q.put(error_for(rc) if rc < 0 else None)  # the detail is this thread's

    threading.Thread(target=watch, name="numrpc-events", daemon=True).start()

    def iterate():
        try:
            while True:
                item = q.get()
                if item is None:
                    return
                if isinstance(item, Exception):
                    raise item
                room.release()
                yield item
        finally:
            stop.set()

    return iterate()
