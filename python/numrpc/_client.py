# _client.py -- numrpc.Client: the library's configuration (numrpc_init) from
# Python, for the whole process, as the C library keeps one configuration.
import ctypes
import os
from typing import Iterable, Optional, Union

from . import _call, _handles, _interface
from ._errors import EINVAL, BadArgument, check
from ._lib import Config, lib


def _encoded(value: Optional[Union[str, os.PathLike]]) -> Optional[bytes]:
    return os.fsencode(value) if value is not None else None


PathArg = Optional[Union[str, os.PathLike]]


class Client:
    """Configures libnumrpc for this process (numrpc_init).

    The configuration is process-wide, as the C library keeps one: a second
    Client replaces the first's, for every thread. Every argument left None
    takes the environment's NUMRPC_* variable.

    Parameters
    ----------
    servers : str or iterable of str, optional
        "host:port", "host:port,host:port", or a list of "host:port"
        (NUMRPC_SERVER).
    metaserver : str, optional
        "host:port" of the metaserver that places calls; "" for none
        (NUMRPC_METASERVER).
    token_file : str or path, optional
        The token for servers started with --token-file (NUMRPC_TOKEN_FILE).
    tls_ca, tls_cert, tls_key : str or path, optional
        TLS: the certificate authorities to trust, and the client's own
        certificate and key (NUMRPC_TLS_CA, NUMRPC_TLS_CERT, NUMRPC_TLS_KEY).
    pin_file : str or path, optional
        The interfaces this client accepts (NUMRPC_PIN_FILE; "" for none).
    packet_size : int, optional
        Bytes per packet; 0 for NUMRPC_PACKET_SIZE or 4096.

    Raises
    ------
    numrpc.BadArgument
        Asynchronous calls are in progress.
    numrpc.Error
        The library refused the configuration (numrpc_init's code).
    """

    def __init__(self, servers: Union[str, Iterable[str], None] = None, metaserver: Optional[str] = None,
                 token_file: PathArg = None, tls_ca: PathArg = None, tls_cert: PathArg = None,
                 tls_key: PathArg = None, pin_file: PathArg = None, packet_size: int = 0) -> None:
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

    def close(self) -> None:
        """Close connections and free this process's handles: `numrpc.finalize()`."""
        finalize()

    def __repr__(self) -> str:
        return f"<numrpc.Client servers={self.servers!r} metaserver={self.metaserver!r}>"


def finalize() -> None:
    """Close the library's connections and free the process's data handles.

    Forgets the interfaces read so far and frees the process's data handles
    on their servers (numrpc_finalize). The next call configures the library
    again, from the environment.

    Raises
    ------
    numrpc.BadArgument
        Asynchronous calls are in progress.
    """
    if _call.calls_in_progress():
        raise BadArgument(EINVAL, "numrpc.finalize: asynchronous calls are in progress; wait for them first")
    _interface.forget_interfaces()
    lib.numrpc_finalize()
