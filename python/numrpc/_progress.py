# _progress.py -- progress of long calls (numrpc_set_progress): while calls that asked
# for it run, one C handler hands each frame to the callable its call was started with.
import ctypes
import sys
import threading
from dataclasses import dataclass
from typing import Callable, Optional, Union

from ._lib import lib


class ProgressC(ctypes.Structure):
    """numrpc_progress (numrpc.h)."""
    _fields_ = [("call_id", ctypes.c_int), ("routine", ctypes.c_char_p), ("elapsed", ctypes.c_double),
                ("predicted", ctypes.c_double), ("fraction", ctypes.c_double), ("message", ctypes.c_char_p)]


_HANDLER_TYPE = ctypes.CFUNCTYPE(None, ctypes.POINTER(ProgressC), ctypes.c_void_p)
lib.numrpc_set_progress.restype = None
lib.numrpc_set_progress.argtypes = [_HANDLER_TYPE, ctypes.c_void_p, ctypes.c_double]

# Seconds between two frames of a call (numrpc_set_progress's period).
_period = 0.5


@dataclass(frozen=True)
class Progress:
    """One progress frame of a running call.

    call_id is 0 for a blocking call, else the asynchronous call's id;
    elapsed the seconds since its request reached the server; predicted the
    seconds the whole call should take by the server's model (None when
    unknown); fraction the routine's own 0..1 (None when it does not say);
    message the routine's own words ("" when none)."""
    call_id: int
    routine: str
    elapsed: float
    predicted: Optional[float]
    fraction: Optional[float]
    message: str


ProgressArg = Union[None, bool, Callable[[Progress], None]]


class _Bar:
    """progress=True: a tqdm bar when tqdm is installed, else one line on stderr
    rewritten in place. Percent done is the routine's fraction when it says,
    else elapsed over predicted (held below 100 until the call returns)."""

    def __init__(self):
        try:
            import tqdm
            self.tqdm = tqdm.tqdm(total=100, unit="%", leave=False, bar_format="{l_bar}{bar}| {elapsed}{postfix}")
        except ImportError:
            self.tqdm = None
        self.done = 0.0

    def __call__(self, p: Progress) -> None:
        if p.fraction is not None:
            done = 100.0 * p.fraction
        elif p.predicted:
            done = min(99.0, 100.0 * p.elapsed / p.predicted)
        else:
            done = self.done
        if self.tqdm is not None:
            self.tqdm.set_description(p.routine, refresh=False)
            self.tqdm.set_postfix_str(p.message, refresh=False)
            self.tqdm.update(max(0.0, done - self.done))
        else:
            sys.stderr.write(f"\r{p.routine}: {done:5.1f} % {p.elapsed:7.1f} s {p.message[:50]:50.50s}")
            sys.stderr.flush()
        self.done = max(done, self.done)

    def close(self) -> None:
        if self.tqdm is not None:
            self.tqdm.close()
        else:
            sys.stderr.write("\n")


class _Registry:
    """Who wants the frames: the calling thread's blocking call (frames of a
    blocking call arrive in its own thread, with id 0) and asynchronous calls
    by id.  The C handler is set while at least one of them runs, so calls
    nobody watches are asked for no frames otherwise."""

    def __init__(self):
        self.lock = threading.Lock()
        self.local = threading.local()
        self.by_id = {}
        self.users = 0
        self.c_handler = _HANDLER_TYPE(self._deliver)  # kept alive: the library holds its address

    def _deliver(self, frame, _arg):
        p = frame.contents
        fn = None
        if p.call_id == 0:
            fn = getattr(self.local, "fn", None)
        else:
            with self.lock:
                fn = self.by_id.get(p.call_id)
        if fn is None:
            return
        predicted = p.predicted if p.predicted >= 0 else None
        fraction = p.fraction if p.fraction >= 0 else None
        try:
            fn(Progress(p.call_id, (p.routine or b"").decode(errors="replace"), p.elapsed, predicted, fraction,
                        (p.message or b"").decode(errors="replace")))
        except Exception as e:  # a handler's failure must not reach the library's thread
            sys.stderr.write(f"numrpc: progress handler raised {e!r}\n")

    def _use(self, delta):
        """Counts a watched call in or out (lock held): sets or clears the C handler."""
        before = self.users
        self.users += delta
        if before == 0 and self.users > 0:
            lib.numrpc_set_progress(self.c_handler, None, _period)
        elif before > 0 and self.users == 0:
            lib.numrpc_set_progress(_HANDLER_TYPE(), None, 0.0)

    def blocking(self, fn):
        """A context for one blocking call in this thread reporting to fn."""
        return _Watch(self, fn)

    def start_async(self, fn, start):
        """Runs start() (which returns the new call's id) with frames of that id
        going to fn from the start; returns the id."""
        with self.lock:
            self._use(+1)
            try:
                call_id = start()
            except BaseException:
                self._use(-1)
                raise
            self.by_id[call_id] = fn
        return call_id

    def end_async(self, call_id):
        """The asynchronous call call_id was returned: its frames stop."""
        with self.lock:
            fn = self.by_id.pop(call_id, None)
            if fn is not None:
                self._use(-1)
        if isinstance(fn, _Bar):
            fn.close()


class _Watch:
    def __init__(self, registry, fn):
        self.registry, self.fn = registry, fn

    def __enter__(self):
        with self.registry.lock:
            self.registry._use(+1)
        self.registry.local.fn = self.fn

    def __exit__(self, *exc):
        self.registry.local.fn = None
        with self.registry.lock:
            self.registry._use(-1)
        if isinstance(self.fn, _Bar):
            self.fn.close()


registry = _Registry()


def handler_of(progress: ProgressArg):
    """The callable for a call's progress= (None: no frames wanted)."""
    if progress is None or progress is False:
        return None
    if progress is True:
        return _Bar()
    if not callable(progress):
        raise TypeError(f"progress= takes a callable, True or None, not {type(progress).__name__}")
    return progress


def set_progress_period(seconds: float) -> None:
    """Set how often a call started with progress= reports (default 0.5 s).

    Parameters
    ----------
    seconds : float
        The period; the server holds it at 0.05 s or more.
    """
    global _period
    if not seconds > 0:
        raise ValueError("the progress period must be positive")
    with registry.lock:
        _period = float(seconds)
        if registry.users:
            lib.numrpc_set_progress(registry.c_handler, None, _period)
