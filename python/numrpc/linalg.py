# linalg.py -- numrpc.linalg: scipy.linalg's names, signatures and results, computed
# by LAPACK on numrpc servers; factors kept there; block=False gives Futures.
"""scipy.linalg on numrpc servers.

    import numrpc.linalg as la          # instead of: import scipy.linalg as la
    x = la.solve(a, b)                  # one ?gesv on a server

Each function takes scipy.linalg's arguments (same names, defaults, order)
and returns what scipy.linalg returns, computed in the precision scipy would
choose (float32 -> s, float64 -> d, complex64 -> c, complex128 -> z; ints
as float64), raising numpy.linalg.LinAlgError and ValueError where scipy
does. Arrays are never changed unless overwrite_a / overwrite_b allow it.

Remote arrays: numrpc.asarray(a) keeps a matrix on a server; every function
takes it wherever an array goes and works on it there. lu_factor and
cho_factor return their factors that way, so lu_solve and cho_solve send only
right-hand sides.

Futures: every function takes block=False and then returns a
concurrent.futures.Future (numrpc.OperationFuture, as numrpc.fft's and
numrpc.sparse's) of the same result, its calls made with numrpc.call_async
and spread over the servers by the library's farm. last_calls() gives the
requests of the calling thread's last blocking call.
"""
from ._linalg_decomp import norm, qr, svd, svdvals
from ._linalg_eig import eig, eigh, eigvals, eigvalsh
from ._linalg_factor import cho_factor, cho_solve, cholesky, lu_factor, lu_solve
from ._linalg_run import linalg_warning
from ._ops import OperationFuture, last_calls
from ._linalg_solve import det, inv, lstsq, solve
from ._remote import RemoteArray, asarray
from numpy.linalg import LinAlgError

LinalgFuture = OperationFuture  # its name before numrpc.fft and numrpc.sparse shared it

__all__ = ["solve", "lstsq", "inv", "det", "lu_factor", "lu_solve", "cho_factor", "cho_solve", "cholesky",
           "qr", "eigh", "eigvalsh", "eig", "eigvals", "svd", "svdvals", "norm", "asarray", "RemoteArray",
           "LinalgFuture", "LinAlgError", "LinAlgWarning", "last_calls"]


def __getattr__(name):
    if name == "LinAlgWarning":  # scipy's class when scipy is installed; imported only when asked
        return linalg_warning()
    raise AttributeError(f"module 'numrpc.linalg' has no attribute {name!r}")
