# _args.py -- Python arguments bound to numrpc_callv's tagged arguments:
# scalars converted, arrays checked against the interface's dtypes and shapes.
import ctypes
import operator
import os
import threading
import warnings

import numpy as np

from . import _lib
from ._errors import EINVAL, BadArgument, BadArgumentType, CopyWarning
from ._handles import Handle, check_handle
from ._interface import CHAR_DTYPES

_INT_RANGE = {_lib.T_INT: (-2**31, 2**31 - 1), _lib.T_LONG: (-2**63, 2**63 - 1)}
_STORAGE = {_lib.T_CHAR: ctypes.c_char, _lib.T_INT: ctypes.c_int, _lib.T_LONG: ctypes.c_long,
            _lib.T_FLOAT: ctypes.c_float, _lib.T_DOUBLE: ctypes.c_double,
            _lib.T_SCOMPLEX: ctypes.c_float * 2, _lib.T_DCOMPLEX: ctypes.c_double * 2}

_warned = set()  # (routine, parameter) pairs that had their CopyWarning
_warned_lock = threading.Lock()


def _type_error(routine, param, what):
    return BadArgumentType(EINVAL, f"{routine}: parameter {param.name} {what}")


def _char(routine, param, value):
    if isinstance(value, str) and len(value) == 1 and ord(value) < 256:
        return value.encode("latin-1")
    if isinstance(value, bytes) and len(value) == 1:
        return value
    raise _type_error(routine, param, f"is a char: give a one-character string, not {value!r}")


def _scalar_value(routine, param, value):
    """value converted for a scalar of param's type (a Python or ctypes value)."""
    t = param.type
    try:
        if t == _lib.T_CHAR:
            return _char(routine, param, value)
        if t in _INT_RANGE:
            number = operator.index(value)
            low, high = _INT_RANGE[t]
            if not low <= number <= high:
                raise BadArgument(EINVAL, f"{routine}: parameter {param.name} = {number} does not fit "
                                          f"a {_lib.TYPE_NAMES[t]}")
            return number
        if t in (_lib.T_FLOAT, _lib.T_DOUBLE):
            return float(value)
        if t in (_lib.T_SCOMPLEX, _lib.T_DCOMPLEX):
            number = complex(value)
            return _STORAGE[t](number.real, number.imag)
        if t == _lib.T_STRING:
            return value.encode() if isinstance(value, str) else bytes(value)
        if t == _lib.T_FILE and value is None:
            return None  # no file: an IN one is the routine's NULL, an OUT one is not written
        if t in (_lib.T_FILE, _lib.T_RFILE):
            return os.fsencode(value)
    except (TypeError, ValueError) as e:
        raise _type_error(routine, param, f"is {_lib.TYPE_NAMES[t]}: {e}") from None
    raise _type_error(routine, param, f"has type {t}, which this binding does not know")


def _set_in_scalar(arg, param, value, keep):
    t = param.type
    arg.type = t
    if t == _lib.T_CHAR:
        arg.v.c = value
    elif t == _lib.T_INT:
        arg.v.i = value
    elif t == _lib.T_LONG:
        arg.v.l = value
    elif t == _lib.T_FLOAT:
        arg.v.f = value
    elif t == _lib.T_DOUBLE:
        arg.v.d = value
    elif t in (_lib.T_SCOMPLEX, _lib.T_DCOMPLEX):
        keep.append(value)
        arg.v.p = ctypes.addressof(value)
    else:  # strings and file names
        keep.append(value)
        arg.v.s = value


def _trimmed(shape):
    shape = tuple(shape)
    while shape and shape[-1] == 1:
        shape = shape[:-1]
    return shape


def _layout(value, shape):
    """How value fills a block of shape (a _Shape, Fortran order): "direct" (its
    memory is the block), "copy" (same shape, other layout) or None (no fit)."""
    dims = shape.dims
    if _trimmed(value.shape) == shape.trimmed or (value.size == 0 and 0 in dims):
        return "direct" if value.flags.f_contiguous else "copy"
    if len(dims) == 1 and value.ndim == 1:
        n, stride, size = value.shape[0], value.strides[0], value.itemsize
        if stride == size and n > dims[0]:
            return "direct"  # a longer vector: the routine sees its first dims[0] elements
        if n > 0 and stride > size and stride % size == 0 and 1 + (n - 1) * (stride // size) == dims[0]:
            return "direct"  # a strided view whose stride is the BLAS increment
    return None


class _Shape:
    """A parameter's shape for one set of IN scalars (numrpc_routine_shapes),
    kept as Python values: dims (the array's extents), trimmed (without
    trailing 1s), elems, travel (elements sent), bound (strings)."""

    __slots__ = ("dims", "trimmed", "elems", "travel", "bound")

    def __init__(self, c_shape):
        self.dims = tuple(c_shape.dims[:c_shape.rank])
        self.trimmed = _trimmed(self.dims)
        self.elems, self.travel, self.bound = c_shape.elems, c_shape.travel, c_shape.bound


def _int_converter(low, high):
    def convert(routine, p, value):
        if type(value) is int and low <= value <= high:
            return value
        return _scalar_value(routine, p, value)
    return convert


def _double(routine, p, value):
    return value if type(value) is float else _scalar_value(routine, p, value)


# The common scalars converted without the general checks' detour, and the
# numrpc_arg union member each is stored in.
_FAST_CONVERT = {_lib.T_INT: _int_converter(*_INT_RANGE[_lib.T_INT]),
                 _lib.T_LONG: _int_converter(*_INT_RANGE[_lib.T_LONG]), _lib.T_DOUBLE: _double}
_FIELD = {_lib.T_CHAR: "c", _lib.T_INT: "i", _lib.T_LONG: "l", _lib.T_FLOAT: "f", _lib.T_DOUBLE: "d"}
_SHAPES_KEPT = 256  # sets of IN scalars whose shapes a plan keeps


class _Plan:
    """What binding a routine's arguments takes, worked out once per interface:
    where each passed value goes, how it is converted, and the shapes already
    evaluated for the IN scalars seen lately (they depend on nothing else)."""

    def __init__(self, interface):
        params = interface.params
        position = {p.index: i for i, p in enumerate(interface.passed)}
        self.npassed = len(interface.passed)
        self.nparams = len(params)
        self.args_type = _lib.Arg * max(len(params), 1)
        # (position in the values, param, converter, union member or None)
        self.in_scalars = tuple((position[p.index], p, _FAST_CONVERT.get(p.type, _scalar_value), _FIELD.get(p.type))
                                for p in params if p.rank == 0 and p.mode == _lib.MODE_IN)
        # OUT filenames: the path the file goes to (None: not wanted)
        self.out_files = tuple((position[p.index], p) for p in params
                               if p.rank == 0 and p.mode != _lib.MODE_IN and p.type == _lib.T_FILE)
        self.arrays = tuple((position[p.index], p, p.dtype) for p in params if p.rank > 0)
        self.returns = tuple((position.get(p.index), p) for p in params if p.returned)
        self.interface = interface
        self.shapes_seen = {}  # tuple of IN scalars -> tuple of _Shape per parameter

    def shapes(self, key, args):
        found = self.shapes_seen.get(key)
        if found is None:
            found = tuple(_Shape(s) for s in self.interface.shapes(args))
            if len(self.shapes_seen) >= _SHAPES_KEPT:
                self.shapes_seen.clear()
            self.shapes_seen[key] = found
        return found


def _plan_of(interface):
    plan = interface.__dict__.get("bind_plan")
    if plan is None:
        plan = interface.bind_plan = _Plan(interface)  # two threads may both make one: the same
    return plan


def _address(array):
    """The address of a numpy array's first element (the cheap way when it is a
    writable contiguous block: ctypes takes it as a buffer in C order)."""
    flags = array.flags
    if flags.writeable and array.nbytes:
        if flags.c_contiguous:
            return ctypes.addressof(ctypes.c_char.from_buffer(array))
        if flags.f_contiguous:
            return ctypes.addressof(ctypes.c_char.from_buffer(array.T))  # the same memory, in C order
    return array.ctypes.data


def _hashable(value):
    return tuple(value) if isinstance(value, ctypes.Array) else value


class Bound:
    """One call's arguments: the tagged array for the C library and all the
    Python objects that must live until the call is over."""

    def __init__(self, routine, interface, values):
        self.routine, self.interface = routine, interface
        plan = _plan_of(interface)
        if len(values) != plan.npassed:
            returned = [p.name for p in interface.params if not p.passed]
            note = f"; {', '.join(returned)} returned, not passed" if returned else ""
            raise BadArgumentType(EINVAL, f"{routine} takes {plan.npassed} arguments "
                                          f"({', '.join(p.name for p in interface.passed)}), "
                                          f"{len(values)} given{note}")
        self.args = args = plan.args_type()
        self.keep = keep = []  # converted scalars and arrays the C library points at
        self.returned = []     # (param, ctypes storage) of OUT and INOUT scalars
        self.allocated = []    # OUT arrays passed as None, made here
        self.copies = []       # (caller's array, Fortran copy) to copy back after success
        self.scalars = scalars = []  # (name, value) of the IN scalars, for messages
        key = []                     # their values, hashable: what the shapes depend on
        for position, p, convert, field in plan.in_scalars:
            value = convert(routine, p, values[position])
            scalars.append((p.name, value))
            if field is None:
                _set_in_scalar(args[p.index], p, value, keep)
                key.append(_hashable(value))
            else:
                key.append(value)
                arg = args[p.index]
                arg.type = p.type
                setattr(arg.v, field, value)
        for position, p in plan.out_files:
            _set_in_scalar(args[p.index], p, _scalar_value(routine, p, values[position]), keep)
        shapes = plan.shapes(tuple(key), args)
        for position, p, dtype in plan.arrays:
            value, shape = values[position], shapes[p.index]
            if (type(value) is np.ndarray and value.dtype == dtype and value.flags.f_contiguous
                    and (value.shape == shape.dims or value.shape == shape.trimmed)
                    and (p.mode == _lib.MODE_IN or value.flags.writeable) and p.mode != _lib.MODE_WORK):
                arg = args[p.index]  # the common case: the caller's memory is the block
                arg.type = p.type
                arg.v.p = _address(value)
                keep.append(value)
            else:
                self._bind_array(p, value, shape)
        for position, p in plan.returns:
            self._bind_returned(p, None if position is None else values[position], shapes[p.index])

    def _for(self):
        """The scalars that give the shapes, for messages."""
        return ", ".join(f"{k}={v.decode() if isinstance(v, bytes) else v}" for k, v in self.scalars
                         if not isinstance(v, ctypes.Array))

    def _bind_returned(self, p, value, shape):
        arg = self.args[p.index]
        arg.type = p.type
        if p.type in _STORAGE:
            storage = _STORAGE[p.type]()
        elif p.type == _lib.T_STRING and shape.bound >= 0:
            storage = ctypes.create_string_buffer(shape.bound + 1)
        else:
            raise _type_error(self.routine, p, f"is an {_lib.MODE_NAMES[p.mode]} "
                                               f"{_lib.TYPE_NAMES[p.type]}, which Python cannot return")
        if p.mode == _lib.MODE_INOUT:
            initial = _scalar_value(self.routine, p, value)
            if isinstance(initial, ctypes.Array):
                storage = initial  # a complex value, already in its C form
            else:
                storage.value = initial
        self.returned.append((p, storage))
        arg.v.p = ctypes.addressof(storage)

    def _bind_array(self, p, value, shape):
        routine, arg = self.routine, self.args[p.index]
        arg.type = p.type
        dims = shape.dims
        if p.mode == _lib.MODE_WORK or value is None:
            if p.mode == _lib.MODE_OUT and value is None and p.dtype is not None:
                value = np.zeros(dims, dtype=p.dtype, order="F")
                self.allocated.append(value)
            elif p.mode == _lib.MODE_WORK or shape.travel == 0:
                if value is not None:
                    raise _type_error(routine, p, "is server-side work space: pass None")
                arg.v.p = None
                return
            else:
                raise _type_error(routine, p, f"is an {_lib.MODE_NAMES[p.mode]} array: pass a numpy array, "
                                              "not None")
        if isinstance(value, Handle):
            arg.v.p = check_handle(routine, p, value)
            self.keep.append(value)
            return
        if p.dtype is None:
            raise _type_error(routine, p, f"is an array of {_lib.TYPE_NAMES[p.type]}, which this binding "
                                          "does not pass yet")
        if not isinstance(value, np.ndarray):
            raise _type_error(routine, p, f"takes a numpy array of {p.dtype}, not {type(value).__name__}")
        ok = value.dtype in CHAR_DTYPES if p.type == _lib.T_CHAR else value.dtype == p.dtype
        if not ok:
            raise _type_error(routine, p, f"is {_lib.TYPE_NAMES[p.type]} ({p.dtype}), the array is {value.dtype}")
        if p.mode != _lib.MODE_IN and not value.flags.writeable:
            raise BadArgument(EINVAL, f"{routine}: parameter {p.name} is {_lib.MODE_NAMES[p.mode]}, "
                                      "the array is read-only")
        layout = _layout(value, shape)
        if layout is None:
            raise BadArgument(EINVAL, f"{routine}: parameter {p.name} has shape {value.shape} ({value.size} "
                                      f"elements), the interface expects {dims} ({shape.elems} elements) "
                                      f"for {self._for()}")
        if layout == "copy":
            self._warn_copy(p, value)
            copy = np.asfortranarray(value) if value.ndim > 1 else np.ascontiguousarray(value)
            if p.mode != _lib.MODE_IN:
                self.copies.append((value, copy))
            value = copy
        self.keep.append(value)
        arg.v.p = _address(value)

    def _warn_copy(self, p, value):
        key = (self.routine, p.name)
        with _warned_lock:
            if key in _warned:
                return
            _warned.add(key)
        order = "C-ordered" if value.flags.c_contiguous else "strided"
        warnings.warn(f"{self.routine}: parameter {p.name} ({order} {value.shape}) was copied into "
                      "Fortran order" + (" and back" if p.mode != _lib.MODE_IN else "")
                      + "; pass a Fortran-ordered array (np.asfortranarray) to avoid it",
                      CopyWarning, stacklevel=4)

    def results(self):
        """After a successful call: copies back, then the value call returns."""
        for original, copy in self.copies:
            original[...] = copy
        values = [_returned_value(p, storage) for p, storage in self.returned] + self.allocated
        if not values:
            return None
        return values[0] if len(values) == 1 else tuple(values)


def _returned_value(p, storage):
    if p.type == _lib.T_CHAR:
        return storage.value.decode("latin-1")
    if p.type in (_lib.T_SCOMPLEX, _lib.T_DCOMPLEX):
        return complex(storage[0], storage[1])
    if p.type == _lib.T_STRING:
        return storage.value.decode(errors="replace")
    return storage.value


def reset_copy_warnings():
    """Lets every parameter warn again (tests, or a notebook that wants to see them)."""
    with _warned_lock:
        _warned.clear()
