# _lib.py -- finds and loads libnumrpc (NUMRPC_LIB, the package's own, the build tree, the
# system) and declares the C API of include/numrpc.h that the binding uses, for ctypes.
import ctypes
import ctypes.util
import os
from pathlib import Path

# numrpc_type (numrpc.h)
T_VOID, T_CHAR, T_INT, T_LONG, T_FLOAT, T_DOUBLE, T_SCOMPLEX, T_DCOMPLEX, T_STRING, T_FILE, T_RFILE = range(11)
TYPE_NAMES = {T_VOID: "void", T_CHAR: "char", T_INT: "int", T_LONG: "long", T_FLOAT: "float",
              T_DOUBLE: "double", T_SCOMPLEX: "float complex", T_DCOMPLEX: "double complex",
              T_STRING: "string", T_FILE: "filename", T_RFILE: "rfile"}
# numrpc_mode
MODE_IN, MODE_OUT, MODE_INOUT, MODE_WORK = 1, 2, 3, 4
MODE_NAMES = {MODE_IN: "IN", MODE_OUT: "OUT", MODE_INOUT: "INOUT", MODE_WORK: "WORK"}
MAX_RANK = 4


class ArgValue(ctypes.Union):
    _fields_ = [("i", ctypes.c_int), ("l", ctypes.c_long), ("d", ctypes.c_double),
                ("f", ctypes.c_float), ("c", ctypes.c_char), ("p", ctypes.c_void_p),
                ("s", ctypes.c_char_p)]


class Arg(ctypes.Structure):
    """numrpc_arg: one tagged argument of numrpc_callv."""
    _fields_ = [("type", ctypes.c_int), ("v", ArgValue)]


class ParamInfo(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("type", ctypes.c_int), ("mode", ctypes.c_int),
                ("rank", ctypes.c_int)]


class ParamShape(ctypes.Structure):
    _fields_ = [("rank", ctypes.c_int), ("dims", ctypes.c_int64 * MAX_RANK),
                ("elems", ctypes.c_uint64), ("travel", ctypes.c_uint64), ("bound", ctypes.c_int64)]


class Config(ctypes.Structure):
    _fields_ = [("servers", ctypes.c_char_p), ("packet_size", ctypes.c_size_t),
                ("token_file", ctypes.c_char_p), ("pin_file", ctypes.c_char_p),
                ("tls_ca", ctypes.c_char_p), ("tls_cert", ctypes.c_char_p),
                ("tls_key", ctypes.c_char_p), ("metaserver", ctypes.c_char_p)]


class CallInfoC(ctypes.Structure):
    _fields_ = [("bytes_sent", ctypes.c_uint64), ("bytes_received", ctypes.c_uint64),
                ("send_seconds", ctypes.c_double), ("compute_seconds", ctypes.c_double),
                ("receive_seconds", ctypes.c_double), ("total_seconds", ctypes.c_double),
                ("server", ctypes.c_char * 64), ("connections", ctypes.c_uint32),
                ("tls_resumed", ctypes.c_uint32)]


# Where `pip install ./python` puts the library it builds (setup.py).
BUNDLED = Path(__file__).resolve().parent / "_libs" / "libnumrpc.so"


def _candidates():
    """Where libnumrpc may be, in the order tried."""
    env = os.environ.get("NUMRPC_LIB")
    if env:
        yield env
        return  # an explicit choice is never second-guessed
    if BUNDLED.exists():
        yield str(BUNDLED)
    # The build tree, when the package runs from the repository (python/numrpc).
    for parent in Path(__file__).resolve().parents:
        built = parent / "build" / "client" / ".libs" / "libnumrpc.so"
        if built.exists():
            yield str(built)
            break
    found = ctypes.util.find_library("numrpc")
    if found:
        yield found
    for prefix in ("/usr/local/lib", "/usr/lib", "/usr/lib/x86_64-linux-gnu"):
        yield prefix + "/libnumrpc.so.0"
    yield "libnumrpc.so.0"


def _load():
    tried = []
    for path in _candidates():
        try:
            return ctypes.CDLL(path), path  # CDLL: the GIL is released during every call
        except OSError as e:
            tried.append(f"{path} ({e})")
    raise ImportError("numrpc: libnumrpc not found; set NUMRPC_LIB to its path. Tried: " + "; ".join(tried))


lib, path = _load()

_P = ctypes.c_void_p
_I = ctypes.c_int
_DECLS = {
    "numrpc_strerror": (ctypes.c_char_p, [_I]),
    "numrpc_errname": (ctypes.c_char_p, [_I]),
    "numrpc_last_error_detail": (ctypes.c_char_p, []),
    "numrpc_callv": (_I, [ctypes.c_char_p, _P, _I]),
    "numrpc_callv_async": (_I, [ctypes.POINTER(_I), ctypes.c_char_p, _P, _I]),
    "numrpc_wait_any": (_I, [ctypes.POINTER(_I)]),
    "numrpc_cancel": (_I, [_I]),
    "numrpc_call_info_of": (_I, [_I, ctypes.POINTER(CallInfoC)]),
    "numrpc_last_call_info": (_I, [ctypes.POINTER(CallInfoC)]),
    "numrpc_set_timeout": (_I, [ctypes.c_double]),
    "numrpc_init": (_I, [ctypes.POINTER(Config)]),
    "numrpc_finalize": (None, []),
    "numrpc_routine_get": (_I, [ctypes.c_char_p, ctypes.POINTER(_P)]),
    "numrpc_routine_free": (None, [_P]),
    "numrpc_routine_name": (ctypes.c_char_p, [_P]),
    "numrpc_routine_module": (ctypes.c_char_p, [_P]),
    "numrpc_routine_description": (ctypes.c_char_p, [_P]),
    "numrpc_routine_hash": (ctypes.c_uint64, [_P]),
    "numrpc_routine_nparams": (_I, [_P]),
    "numrpc_routine_param": (_I, [_P, _I, ctypes.POINTER(ParamInfo)]),
    "numrpc_routine_shapes": (_I, [_P, _P, _I, _P]),
    "numrpc_routine_idl": (_I, [_P, ctypes.POINTER(_P)]),
    "numrpc_data_put": (_I, [ctypes.POINTER(_P), ctypes.c_char_p, _I, _P, ctypes.c_size_t,
                             ctypes.c_size_t, ctypes.c_size_t]),
    "numrpc_data_get": (_I, [_P, _P, ctypes.c_size_t]),
    "numrpc_data_free": (_I, [_P]),
}
for _name, (_res, _argtypes) in _DECLS.items():
    _fn = getattr(lib, _name)
    _fn.restype = _res
    _fn.argtypes = _argtypes

# free() for the strings the library hands over (numrpc_routine_idl).
_libc = ctypes.CDLL(None)
_libc.free.argtypes = [_P]
_libc.free.restype = None
free = _libc.free
