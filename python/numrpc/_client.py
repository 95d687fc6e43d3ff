# _client.py -- numrpc.Client: the library's configuration (numrpc_init) from
# Python, for the whole process, as the C library keeps one configuration.
import ctypes
import os

from . import _call, _handles, _interface
from ._errors import EINVAL, BadArgument, check
from ._lib import Config, lib


def _encoded(value):
    return os.fsencode(value) if value is not None else None


class Client:
    """Configures libnumrpc for this process (numrpc_init): servers ("host:port"
    or a list of them), metaserver ("host:port"; "" for none), token_file,
    tls_ca, tls_cert, tls_key, pin_file (None: the environment's NUMRPC_*
    variables). The configuration is process-wide: a second Client replaces
    the first's, for every thread."""

    def __init__(self, servers=None, metaserver=None, token_file=None, tls_ca=None, tls_cert=None,
                 tls_key=None, pin_file=None, packet_size=0):
        if _call.calls_in_progress():
            raise BadArgument(EINVAL, "numrpc.Client: asynchronous calls are in progress; wait for them first")
        if servers is not None and not isinstance(servers, str):
            servers = ",".join(servers)
        self.servers, self.metaserver = servers, metaserver
        config = Config(_encoded(servers), packet_size, _encoded(token_file), _encoded(pin_file),
                        _encoded(tls_ca), _encoded(tls_cert), _encoded(tls_key), _encoded(metaserver))
        _interface.forget_interfaces()
        check(lib.numrpc_init(ctypes.byref(config)))  # the strings are read here, not kept

    # The module's functions, for code that likes to hold a client.
    call = staticmethod(_call.call)
    call_async = staticmethod(_call.call_async)
    describe = staticmethod(_interface.describe)
    put = staticmethod(_handles.put)
    last_call_info = staticmethod(_call.last_call_info)

    def close(self):
        """numrpc.finalize(): closes connections and frees this process's handles."""
        finalize()

    def __repr__(self):
        return f"<numrpc.Client servers={self.servers!r} metaserver={self.metaserver!r}>"


def finalize():
    """Closes the library's connections, forgets interfaces and frees the
    process's data handles on their servers (numrpc_finalize). The next call
    configures the library again, from the environment."""
    if _call.calls_in_progress():
        raise BadArgument(EINVAL, "numrpc.finalize: asynchronous calls are in progress; wait for them first")
    _interface.forget_interfaces()
    lib.numrpc_finalize()
