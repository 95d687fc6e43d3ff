# _errors.py -- numrpc's error codes (NUMRPC_E*) as Python exceptions: one
# base class with .code, .name and .detail, a subclass for each common case.
import concurrent.futures

from ._lib import lib

# The codes of include/numrpc.h's NUMRPC_ERROR_LIST that have a class of their own.
EINVAL, ENOENT, ECONNECT = -2, -3, -4
ECANCELLED, ETIMEDOUT, ECRASHED, EIO = -9, -10, -11, -12


class Error(Exception):
    """A numrpc failure: code (negative NUMRPC_E* value), name ("NUMRPC_ETIMEDOUT")
    and detail (what the library said about this failure)."""

    def __init__(self, code, detail=""):
        self.code = code
        self.name = lib.numrpc_errname(code).decode()
        self.detail = detail
        message = lib.numrpc_strerror(code).decode()
        super().__init__(f"{message}: {detail}" if detail else message)


class UnknownRoutine(Error, LookupError):
    """NUMRPC_ENOENT: no server offers the routine."""


class BadArgument(Error, ValueError):
    """NUMRPC_EINVAL: an argument the interface refuses (the detail names it)."""


class BadArgumentType(BadArgument, TypeError):
    """An argument of the wrong type or dtype, caught before anything is sent."""


class Timeout(Error, TimeoutError):
    """NUMRPC_ETIMEDOUT: the call ran past its time limit (numrpc.set_timeout)."""


class Cancelled(Error, concurrent.futures.CancelledError):
    """NUMRPC_ECANCELLED: the call was cancelled."""


class ServerCrashed(Error):
    """NUMRPC_ECRASHED: the routine crashed on the server (its worker died)."""


class CannotConnect(Error, ConnectionError):
    """NUMRPC_ECONNECT: no configured server could be reached."""


class ConnectionLost(Error, ConnectionError):
    """NUMRPC_EIO: the connection broke during the call."""


_CLASSES = {EINVAL: BadArgument, ENOENT: UnknownRoutine, ECONNECT: CannotConnect,
            ECANCELLED: Cancelled, ETIMEDOUT: Timeout, ECRASHED: ServerCrashed,
            EIO: ConnectionLost}


def error_for(code, detail=None):
    """The exception for code; detail defaults to this thread's last detail."""
    if detail is None:
        detail = lib.numrpc_last_error_detail().decode(errors="replace")
    return _CLASSES.get(code, Error)(code, detail)


def check(rc):
    """Raises the exception for rc when the C call failed; returns rc."""
    if rc < 0:
        raise error_for(rc)
    return rc


class CopyWarning(UserWarning):
    """An array was copied into Fortran order (and back) because its layout or
    dtype is not what the routine takes; warned once per parameter."""
