# numrpc.sparse -- scipy.sparse's solvers run on a numrpc server (SuperLU through
# the sparse stub module, stubs/sparse.idl); scipy is imported only when called.
"""Sparse linear algebra on a numrpc server: numrpc.sparse.linalg.spsolve
takes scipy.sparse matrices and returns what scipy.sparse.linalg.spsolve does."""
from . import linalg

__all__ = ["linalg"]
