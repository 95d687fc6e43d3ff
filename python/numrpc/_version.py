# _version.py -- the numrpc package's version, its one place: pyproject.toml reads it
# (dynamic version) into the package metadata, and numrpc.__version__ is it.
__version__ = "0.1.0"
