# _each.py -- group calls (numrpc_callv_each): the same call on every server of a
# group at once, each server's results apart, unpacked as (server, result-or-exception).
import copy
import ctypes
from dataclasses import dataclass, field
from typing import Any, List, Optional, Sequence, Union

import numpy as np

from . import _lib
from ._args import Bound
from ._errors import Error, error_for
from ._interface import describe
from ._lib import lib

GROUP_MAX = 16  # servers the metaserver's ranking gives at most (numrpc.h)


class EachC(ctypes.Structure):
    """numrpc_each: one server's part of a group call."""
    _fields_ = [("server", ctypes.c_char * 256), ("status", ctypes.c_int), ("detail", ctypes.c_char * 512),
                ("seconds", ctypes.c_double), ("nout", ctypes.c_int), ("out", ctypes.POINTER(ctypes.c_void_p)),
                ("out_bytes", ctypes.POINTER(ctypes.c_size_t))]


lib.numrpc_callv_each.restype = ctypes.c_int
lib.numrpc_callv_each.argtypes = [ctypes.c_char_p, ctypes.c_void_p, ctypes.c_int, ctypes.POINTER(ctypes.c_int),
                                  ctypes.c_char_p, ctypes.c_void_p, ctypes.c_int]
lib.numrpc_each_free.restype = None
lib.numrpc_each_free.argtypes = [ctypes.c_void_p, ctypes.c_int]


@dataclass
class EachResult:
    """One server's part of a group call; unpacks as (server, outcome).

    Attributes
    ----------
    server : str
        "host:port".
    outcome : object
        What `numrpc.call` would have returned on that server, or the
        `numrpc.Error` it failed with.
    seconds : float
        The call's wall time there (0 when it was never sent).
    arrays : list
        Aligned with the arguments: that server's own copy of each OUT or
        INOUT array argument, None for the others.
    """
    server: str
    outcome: Any
    seconds: float = 0.0
    arrays: List[Optional[np.ndarray]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not isinstance(self.outcome, Error)

    def __iter__(self):
        yield self.server
        yield self.outcome


def _interface_of(routine, servers):
    """The routine's interface: from the first of servers that answers, else
    from where a plain call would ask."""
    last = None
    for server in servers or []:
        try:
            return describe(f"numrpc://{server}/{routine}")
        except Error as e:
            last = e
    if servers and last is not None:
        raise last
    return describe(routine)


def call_each(routine: str, *args: Any, servers: Union[None, str, Sequence[str]] = None) -> List[EachResult]:
    """Run a routine on every server of a group at once (numrpc_callv_each).

    Parameters
    ----------
    routine : str
        The routine's name ("dgemv").
    *args
        Its arguments, as for `numrpc.call`.
    servers : None, str or list of str
        "host:port" entries (a list, or one string with commas); None for
        every server a call of routine could go to: those the metaserver
        ranks for it (up to 16), else the configured list.

    Returns
    -------
    list of EachResult
        One per server, in the group's order, each unpacking as
        (server, result-or-exception). The caller's OUT and INOUT arrays
        hold the first successful server's results (untouched when none
        succeeded); each entry's `arrays` holds that server's own copy.

    Raises
    ------
    numrpc.Error
        Nothing was sent: a bad argument, no server in the group.
    """
    group = servers.split(",") if isinstance(servers, str) else list(servers) if servers is not None else None
    interface = _interface_of(routine, group)
    bound = Bound(routine, interface, args)
    most = len(group) if group else GROUP_MAX
    each = (EachC * most)()
    count = ctypes.c_int()
    rc = lib.numrpc_callv_each(",".join(group).encode() if group else None, each, most, ctypes.byref(count),
                               routine.encode(), bound.args, len(interface.params))  # GIL released inside
    if count.value == 0:
        raise error_for(rc)
    outputs = [p.mode in (_lib.MODE_OUT, _lib.MODE_INOUT) for p in interface.passed]
    try:
        results = []
        first = None
        for i in range(count.value):
            e = each[i]
            server = e.server.decode(errors="replace")
            if e.status != 0:
                results.append(EachResult(server, error_for(e.status, e.detail.decode(errors="replace")), e.seconds,
                                          [None] * len(args)))
                continue
            first = i if first is None else first
            value = _results_of(bound, e)
            arrays = [np.copy(v) if out and isinstance(v, np.ndarray) else None for v, out in zip(args, outputs)]
            results.append(EachResult(server, value, e.seconds, arrays))
        if first is not None:
            _results_of(bound, each[first])  # the caller's arrays: the first success's
        return results
    finally:
        lib.numrpc_each_free(each, count.value)


def _results_of(bound, e):
    """What call returns, had the bound buffers received server e's copies
    (a deep copy: the next server's overwrite the buffers)."""
    for p in range(e.nout):
        if e.out_bytes[p]:
            ctypes.memmove(bound.args[p].v.p, e.out[p], e.out_bytes[p])
    return copy.deepcopy(bound.results())
