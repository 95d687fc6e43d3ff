# fft.py -- numpy.fft's transforms computed on a numrpc server (FFTW, stubs/fft.idl):
# the same names, signatures and results; block=False gives a Future of the result.
"""Discrete Fourier transforms on a numrpc server, as numpy.fft computes them.

    y = numrpc.fft.fft(x)                      # numpy.fft.fft(x), run remotely
    f = numrpc.fft.rfft2(image, block=False)   # a concurrent.futures.Future

fft, ifft, rfft, irfft, fft2, ifft2, rfft2 and irfft2 take numpy.fft's
arguments (n or s, axis or axes, norm) and return what numpy.fft returns for
the same input, with one difference: float32 and complex64 input is
transformed in single precision (FFTW's fftwf_) and gives complex64 or float32,
as scipy.fft does; any other input is converted to float64 or complex128, as
numpy.fft does. The caller's arrays are never written.

The server transforms one line (or one plane for the 2-D routines) a call:
an n-D input is cut into its lines along axis (planes along axes), all sent
at once as asynchronous calls, spread over the configured servers.
"""
from __future__ import annotations

import concurrent.futures
import math
import operator
from typing import List, Optional, Sequence, Tuple, Union

import numpy as np
from numpy.typing import ArrayLike

from ._ops import Operation, Stage, run, warn

__all__ = ["fft", "ifft", "rfft", "irfft", "fft2", "ifft2", "rfft2", "irfft2"]

Result = Union[np.ndarray, "concurrent.futures.Future[np.ndarray]"]
Norm = Optional[str]

_exceptions = getattr(np, "exceptions", np)  # numpy >= 1.25 moved them there
AxisError = _exceptions.AxisError
ComplexWarning = _exceptions.ComplexWarning

_SINGLE = (np.dtype(np.float32), np.dtype(np.complex64))
# Routine names by (single precision, kind): stubs/fft.idl.
_ROUTINES = {(False, "c2c1"): "zfft_1d", (False, "c2c2"): "zfft_2d", (False, "r2c1"): "dfft_r2c_1d",
             (False, "c2r1"): "dfft_c2r_1d", (False, "r2c2"): "dfft_r2c_2d", (False, "c2r2"): "dfft_c2r_2d",
             (True, "c2c1"): "cfft_1d", (True, "c2c2"): "cfft_2d", (True, "r2c1"): "sfft_r2c_1d",
             (True, "c2r1"): "sfft_c2r_1d", (True, "r2c2"): "sfft_r2c_2d", (True, "c2r2"): "sfft_c2r_2d"}
FORWARD, BACKWARD = -1, +1  # FFTW's signs


# ---- Arguments, as numpy.fft checks them ----

def _points(n) -> int:
    """A transform length (an integer >= 1), else numpy's ValueError."""
    n = operator.index(n)
    if n < 1:
        raise ValueError(f"Invalid number of FFT data points ({n}) specified.")
    return n


def _factor(norm: Norm, n: int, forward: bool) -> float:
    """numpy's scale factor of one transform of n points in direction forward."""
    if norm is None or norm == "backward":
        return 1.0 if forward else 1.0 / n
    if norm == "ortho":
        return 1.0 / math.sqrt(n)
    if norm == "forward":
        return 1.0 / n if forward else 1.0
    raise ValueError(f'Invalid norm value {norm}; should be "backward", "ortho" or "forward".')


def _axis(axis, ndim: int) -> int:
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise AxisError(axis, ndim)
    return axis % ndim


def _single(a: np.ndarray) -> bool:
    return a.dtype in _SINGLE


def _complex_type(single: bool) -> np.dtype:
    return np.dtype(np.complex64 if single else np.complex128)


def _real_type(single: bool) -> np.dtype:
    return np.dtype(np.float32 if single else np.float64)


def _real_part(a: np.ndarray) -> np.ndarray:
    """a's real part, with numpy's ComplexWarning when a is complex (numpy.fft.rfft's rule)."""
    if np.iscomplexobj(a):
        warn("Casting complex values to real discards the imaginary part", ComplexWarning)
        return a.real
    return a


def _cook(a: np.ndarray, s, axes, invreal: bool = False) -> Tuple[List[int], List[int]]:
    """numpy.fft's _cook_nd_args: the lengths and (normalised) axes of an n-D transform."""
    if s is None:
        shapeless = True
        if axes is None:
            s = list(a.shape)
        else:
            s = [a.shape[_axis(ax, a.ndim)] for ax in axes]
    else:
        shapeless = False
        s = list(s)
    if axes is None:
        axes = list(range(-len(s), 0))
    axes = list(axes)
    if len(s) != len(axes):
        raise ValueError("Shape and axes have different lengths.")
    axes = [_axis(ax, a.ndim) for ax in axes]
    if invreal and shapeless:
        s[-1] = (a.shape[axes[-1]] - 1) * 2
    return [_points(k) for k in s], axes


# ---- Work arrays ----

def _gathered(a: np.ndarray, axes: Sequence[int], sizes: Sequence[int], dtype, copy: bool) -> np.ndarray:
    """a with axes moved last (in that order), each cropped or zero-padded to
    its size, as a C-contiguous array of dtype: a new one when copy (or when
    it must be), else possibly a view of a."""
    k = len(axes)
    moved = np.moveaxis(a, list(axes), list(range(-k, 0)))
    kept = tuple(min(size, have) for size, have in zip(sizes, moved.shape[-k:]))
    part = moved[(Ellipsis,) + tuple(slice(0, m) for m in kept)]
    if kept == tuple(sizes):
        if copy:
            return np.array(part, dtype=dtype, order="C", copy=True)
        return np.ascontiguousarray(part, dtype=dtype)
    out = np.zeros(moved.shape[:-k] + tuple(sizes), dtype=dtype)
    out[(Ellipsis,) + tuple(slice(0, m) for m in kept)] = part
    return out


def _put_back(work: np.ndarray, axes: Sequence[int]) -> np.ndarray:
    """The inverse of _gathered's move: the last len(axes) axes go back to axes."""
    k = len(axes)
    return np.moveaxis(work, list(range(-k, 0)), list(axes))


def _hermitian(work: np.ndarray, n: int) -> None:
    """Makes the half spectrum work (..., m, n//2+1) that of a real array, in
    place, as numpy's inverse takes it: the columns 0 and (n even) n/2 become
    their Hermitian parts along the axis before last (for m = 1: their real
    parts). numpy ignores what breaks the symmetry; FFTW does not document
    what its c2r gives then (3.3.10 ignores it too), so it is not sent."""
    m = work.shape[-2]
    mirror = (-np.arange(m)) % m
    for column in ([0, n // 2] if n % 2 == 0 else [0]):
        c = work[..., :, column]
        work[..., :, column] = (c + np.conj(c[..., mirror])) / 2


# ---- One pass: a transform over one axis or two, every line or plane a call ----

def _c2c_pass(x: np.ndarray, axes: Sequence[int], sizes: Sequence[int], sign: int, single: bool) -> Operation:
    """An operation step: the unnormalised complex transform of x over axes (1 or 2, distinct)."""
    work = _gathered(x, axes, sizes, _complex_type(single), copy=True)  # transformed in place
    if len(axes) == 1:
        n, = sizes
        routine = _ROUTINES[single, "c2c1"]
        calls = [(routine, (n, line, sign)) for line in work.reshape(-1, n)]
    else:
        n2, n1 = sizes  # C order (n2, n1) is the server's column-major n1 x n2
        routine = _ROUTINES[single, "c2c2"]
        calls = [(routine, (n1, n2, plane.T, sign)) for plane in work.reshape(-1, n2, n1)]
    yield Stage(calls)
    return _put_back(work, axes)


def _r2c_pass(x: np.ndarray, axes: Sequence[int], sizes: Sequence[int], single: bool) -> Operation:
    """An operation step: the forward real transform of x over axes (1 or 2, distinct), the last halved."""
    work = _gathered(x, axes, sizes, _real_type(single), copy=False)  # IN: read only
    half = sizes[-1] // 2 + 1
    out = np.empty(work.shape[:-1] + (half,), dtype=_complex_type(single))
    if len(axes) == 1:
        n, = sizes
        routine = _ROUTINES[single, "r2c1"]
        calls = [(routine, (n, line, y)) for line, y in zip(work.reshape(-1, n), out.reshape(-1, half))]
    else:
        n2, n1 = sizes
        routine = _ROUTINES[single, "r2c2"]
        calls = [(routine, (n1, n2, plane.T, y.T))
                 for plane, y in zip(work.reshape(-1, n2, n1), out.reshape(-1, n2, half))]
    yield Stage(calls)
    return _put_back(out, axes)


def _c2r_pass(x: np.ndarray, axes: Sequence[int], sizes: Sequence[int], single: bool) -> Operation:
    """An operation step: the unnormalised backward real transform of the half
    spectrum x over axes (1 or 2, distinct) to sizes points, the last one halved in x."""
    half = sizes[-1] // 2 + 1
    work = _gathered(x, axes, list(sizes[:-1]) + [half], _complex_type(single), copy=True)
    _hermitian(work[..., np.newaxis, :] if len(axes) == 1 else work, sizes[-1])
    out = np.empty(work.shape[:-1] + (sizes[-1],), dtype=_real_type(single))
    if len(axes) == 1:
        n, = sizes
        routine = _ROUTINES[single, "c2r1"]
        calls = [(routine, (n, y, line)) for y, line in zip(work.reshape(-1, half), out.reshape(-1, n))]
    else:
        n2, n1 = sizes
        routine = _ROUTINES[single, "c2r2"]
        calls = [(routine, (n1, n2, y.T, plane.T))
                 for y, plane in zip(work.reshape(-1, n2, half), out.reshape(-1, n2, n1))]
    yield Stage(calls)
    return _put_back(out, axes)


def _chain(x: np.ndarray, passes, factor: float) -> Operation:
    """An operation step: the passes one after the other (each a function of
    the array before it that gives the operation step of the array after),
    then the result scaled by factor."""
    current = x
    for one_pass in passes:
        current = yield from one_pass(current)
    if factor != 1.0:
        current *= factor  # a new array of the last pass, in its own precision
    return current


def _groups(axes: Sequence[int], sizes: Sequence[int]) -> List[Tuple[List[int], List[int]]]:
    """numpy applies an n-D transform axis by axis, the last first. Over
    distinct axes the order does not matter, so they go two at a time (a 2-D
    call per plane); with an axis repeated, one at a time in numpy's order
    (its cropping and padding then depend on the order)."""
    if len(set(axes)) != len(axes):
        return [([ax], [n]) for ax, n in zip(reversed(axes), reversed(sizes))]
    groups = []
    i = len(axes)
    while i > 0:
        j = max(i - 2, 0)
        groups.append((list(axes[j:i]), list(sizes[j:i])))
        i = j
    return groups


# ---- The transforms ----

def _c2c(a: ArrayLike, s, axes, norm: Norm, forward: bool) -> Operation:
    """An operation step: a complex transform over axes (numpy's fftn with s and axes given)."""
    x = np.asarray(a)
    single = _single(x)
    factor = 1.0
    for n in s:
        factor *= _factor(norm, n, forward)
    sign = FORWARD if forward else BACKWARD
    passes = [lambda cur, g=g: _c2c_pass(cur, g[0], g[1], sign, single) for g in _groups(axes, s)]
    if not passes:  # no axis: numpy returns the input as it is
        return np.array(x, copy=True)
    return (yield from _chain(x, passes, factor))


def _one_axis(a: ArrayLike, n: Optional[int], axis: int) -> Tuple[np.ndarray, int, int]:
    """numpy.fft's order of checks for a 1-D transform: (array, n, axis)."""
    x = np.asarray(a)
    if n is None:
        axis = _axis(axis, x.ndim)
        return x, _points(x.shape[axis]), axis
    n = _points(n)
    return x, n, axis


def fft(a: ArrayLike, n: Optional[int] = None, axis: int = -1, norm: Norm = None, *,
        block: bool = True) -> Result:
    """The 1-D discrete Fourier transform, as numpy.fft.fft.

    Parameters
    ----------
    a : array_like
        Input, real or complex, of any number of dimensions.
    n : int, optional
        Points of the transform: the input along `axis` is cropped, or padded
        with zeros, to n. Default: its length along `axis`.
    axis : int, optional
        The axis transformed (default: the last); every line along it is one
        call on the server.
    norm : {None, "backward", "ortho", "forward"}, optional
        numpy's normalisation: "backward" (None) leaves the forward transform
        unscaled, "ortho" scales it by 1/sqrt(n), "forward" by 1/n.
    block : bool, optional
        False: return a concurrent.futures.Future of the result at once.

    Returns
    -------
    numpy.ndarray or concurrent.futures.Future
        complex128 (complex64 for float32 or complex64 input), `a`'s shape
        but n along `axis`.

    Raises
    ------
    ValueError
        n < 1, an unknown norm; numpy.AxisError (a ValueError and an
        IndexError) for an axis out of range; numrpc.Error from the call.
    """
    def work():
        x, m, ax = _one_axis(a, n, axis)
        _factor(norm, m, True)
        return (yield from _c2c(x, [m], [_axis(ax, x.ndim)], norm, True))
    return run(work(), block)


def ifft(a: ArrayLike, n: Optional[int] = None, axis: int = -1, norm: Norm = None, *,
         block: bool = True) -> Result:
    """The 1-D inverse discrete Fourier transform, as numpy.fft.ifft.

    Parameters
    ----------
    a : array_like
        Input, real or complex.
    n : int, optional
        Points of the transform (crop or zero-pad along `axis`).
    axis : int, optional
        The axis transformed (default: the last).
    norm : {None, "backward", "ortho", "forward"}, optional
        "backward" (None) scales by 1/n, "ortho" by 1/sqrt(n), "forward" not at all.
    block : bool, optional
        False: return a concurrent.futures.Future of the result.

    Returns
    -------
    numpy.ndarray or concurrent.futures.Future
        complex128 (complex64 for single precision input).

    Raises
    ------
    ValueError, numpy.AxisError, numrpc.Error
        As `fft`.
    """
    def work():
        x, m, ax = _one_axis(a, n, axis)
        _factor(norm, m, False)
        return (yield from _c2c(x, [m], [_axis(ax, x.ndim)], norm, False))
    return run(work(), block)


def rfft(a: ArrayLike, n: Optional[int] = None, axis: int = -1, norm: Norm = None, *,
         block: bool = True) -> Result:
    """The 1-D transform of real input, as numpy.fft.rfft: n//2 + 1 frequencies.

    Parameters
    ----------
    a : array_like
        Real input (a complex one loses its imaginary part, with numpy's
        ComplexWarning).
    n : int, optional
        Points of the transform (crop or zero-pad along `axis`).
    axis : int, optional
        The axis transformed (default: the last).
    norm : {None, "backward", "ortho", "forward"}, optional
        As `fft`.
    block : bool, optional
        False: return a concurrent.futures.Future of the result.

    Returns
    -------
    numpy.ndarray or concurrent.futures.Future
        complex128 (complex64 for float32 input), n//2 + 1 along `axis`.

    Raises
    ------
    ValueError, numpy.AxisError, numrpc.Error
        As `fft`.
    """
    def work():
        x, m, ax = _one_axis(a, n, axis)
        factor = _factor(norm, m, True)
        ax = _axis(ax, x.ndim)
        x = _real_part(x)
        single = _single(x)
        return (yield from _chain(x, [lambda cur: _r2c_pass(cur, [ax], [m], single)], factor))
    return run(work(), block)


def irfft(a: ArrayLike, n: Optional[int] = None, axis: int = -1, norm: Norm = None, *,
          block: bool = True) -> Result:
    """The inverse of `rfft`, as numpy.fft.irfft: n real points from n//2 + 1 frequencies.

    Parameters
    ----------
    a : array_like
        The half spectrum (real input is taken as complex). The imaginary
        parts of the first frequency and (n even) of the last are ignored, as
        numpy ignores them.
    n : int, optional
        Points of the output; the input is cropped or zero-padded to
        n//2 + 1 along `axis`. Default: 2*(m - 1) for m input points.
    axis : int, optional
        The axis transformed (default: the last).
    norm : {None, "backward", "ortho", "forward"}, optional
        As `ifft`.
    block : bool, optional
        False: return a concurrent.futures.Future of the result.

    Returns
    -------
    numpy.ndarray or concurrent.futures.Future
        float64 (float32 for complex64 or float32 input), n along `axis`.

    Raises
    ------
    ValueError, numpy.AxisError, numrpc.Error
        As `fft` (n < 1 also when the default 2*(m - 1) is 0).
    """
    def work():
        x = np.asarray(a)
        if n is None:
            ax = _axis(axis, x.ndim)
            m = _points((x.shape[ax] - 1) * 2)
        else:
            m = _points(n)
        factor = _factor(norm, m, False)
        ax = _axis(axis, x.ndim)
        single = _single(x)
        return (yield from _chain(x, [lambda cur: _c2r_pass(cur, [ax], [m], single)], factor))
    return run(work(), block)


def fft2(a: ArrayLike, s: Optional[Sequence[int]] = None, axes: Optional[Sequence[int]] = (-2, -1),
         norm: Norm = None, *, block: bool = True) -> Result:
    """The 2-D discrete Fourier transform, as numpy.fft.fft2.

    Parameters
    ----------
    a : array_like
        Input, real or complex, of two dimensions or more.
    s : sequence of ints, optional
        Points along each of `axes` (crop or zero-pad). Default: `a`'s extents.
    axes : sequence of ints, optional
        The axes transformed (default: the last two). Every plane over two
        distinct axes is one call on the server; as numpy's, any number of
        axes is taken (fftn's rule), a repeated axis transformed again.
    norm : {None, "backward", "ortho", "forward"}, optional
        As `fft`, with n the product of `s`.
    block : bool, optional
        False: return a concurrent.futures.Future of the result.

    Returns
    -------
    numpy.ndarray or concurrent.futures.Future
        complex128 (complex64 for single precision input).

    Raises
    ------
    ValueError
        `s` and `axes` of different lengths, a length < 1, an unknown norm;
        numpy.AxisError for an axis out of range; numrpc.Error from the calls.
    """
    def work():
        x = np.asarray(a)
        sizes, ax = _cook(x, s, axes)
        return (yield from _c2c(x, sizes, ax, norm, True))
    return run(work(), block)


def ifft2(a: ArrayLike, s: Optional[Sequence[int]] = None, axes: Optional[Sequence[int]] = (-2, -1),
          norm: Norm = None, *, block: bool = True) -> Result:
    """The 2-D inverse discrete Fourier transform, as numpy.fft.ifft2.

    Parameters
    ----------
    a : array_like
        Input, real or complex.
    s : sequence of ints, optional
        Points along each of `axes` (crop or zero-pad).
    axes : sequence of ints, optional
        The axes transformed (default: the last two).
    norm : {None, "backward", "ortho", "forward"}, optional
        As `ifft`, with n the product of `s`.
    block : bool, optional
        False: return a concurrent.futures.Future of the result.

    Returns
    -------
    numpy.ndarray or concurrent.futures.Future
        complex128 (complex64 for single precision input).

    Raises
    ------
    ValueError, numpy.AxisError, numrpc.Error
        As `fft2`.
    """
    def work():
        x = np.asarray(a)
        sizes, ax = _cook(x, s, axes)
        return (yield from _c2c(x, sizes, ax, norm, False))
    return run(work(), block)


def rfft2(a: ArrayLike, s: Optional[Sequence[int]] = None, axes: Optional[Sequence[int]] = (-2, -1),
          norm: Norm = None, *, block: bool = True) -> Result:
    """The 2-D transform of real input, as numpy.fft.rfft2: the last axis halved.

    Parameters
    ----------
    a : array_like
        Real input (a complex one loses its imaginary part, with a ComplexWarning).
    s : sequence of ints, optional
        Points along each of `axes` (crop or zero-pad).
    axes : sequence of ints, optional
        The axes transformed (default: the last two); the last of them gets
        s[-1]//2 + 1 frequencies.
    norm : {None, "backward", "ortho", "forward"}, optional
        As `fft2`.
    block : bool, optional
        False: return a concurrent.futures.Future of the result.

    Returns
    -------
    numpy.ndarray or concurrent.futures.Future
        complex128 (complex64 for float32 input).

    Raises
    ------
    ValueError, numpy.AxisError, numrpc.Error
        As `fft2`.
    """
    def work():
        x = np.asarray(a)
        sizes, ax = _cook(x, s, axes)
        if not ax:
            raise IndexError("rfft2: no axis to transform")
        factor = 1.0
        for m in sizes:
            factor *= _factor(norm, m, True)
        x = _real_part(x)
        single = _single(x)
        distinct = len(set(ax)) == len(ax)
        first = 2 if distinct and len(ax) >= 2 else 1
        passes = [lambda cur: _r2c_pass(cur, ax[-first:], sizes[-first:], single)]
        # numpy then transforms the other axes in their order (the order matters only for a repeated one)
        rest = list(zip(ax[:-first], sizes[:-first]))
        groups = _groups([g for g, _ in rest], [m for _, m in rest]) if distinct else [([g], [m]) for g, m in rest]
        passes += [lambda cur, g=g: _c2c_pass(cur, g[0], g[1], FORWARD, single) for g in groups]
        return (yield from _chain(x, passes, factor))
    return run(work(), block)


def irfft2(a: ArrayLike, s: Optional[Sequence[int]] = None, axes: Optional[Sequence[int]] = (-2, -1),
           norm: Norm = None, *, block: bool = True) -> Result:
    """The inverse of `rfft2`, as numpy.fft.irfft2: real output.

    Parameters
    ----------
    a : array_like
        The half spectrum, its last axis of `axes` halved.
    s : sequence of ints, optional
        Points of the output along each of `axes`. Default: `a`'s extents,
        but 2*(m - 1) along the last of `axes`.
    axes : sequence of ints, optional
        The axes transformed (default: the last two).
    norm : {None, "backward", "ortho", "forward"}, optional
        As `ifft2`.
    block : bool, optional
        False: return a concurrent.futures.Future of the result.

    Returns
    -------
    numpy.ndarray or concurrent.futures.Future
        float64 (float32 for complex64 or float32 input).

    Raises
    ------
    ValueError, numpy.AxisError, numrpc.Error
        As `fft2`.
    """
    def work():
        x = np.asarray(a)
        if axes is not None and len(axes) == 0:
            raise IndexError("irfft2: no axis to transform")
        sizes, ax = _cook(x, s, axes, invreal=True)
        factor = 1.0
        for m in sizes:
            factor *= _factor(norm, m, False)
        single = _single(x)
        distinct = len(set(ax)) == len(ax)
        last = 2 if distinct and len(ax) >= 2 else 1
        # numpy: inverse complex transforms over the other axes in their order, then the real one
        rest = list(zip(ax[:-last], sizes[:-last]))
        groups = _groups([g for g, _ in rest], [m for _, m in rest]) if distinct else \
            [([g], [m]) for g, m in rest]
        passes = [lambda cur, g=g: _c2c_pass(cur, g[0], g[1], BACKWARD, single) for g in groups]
        passes.append(lambda cur: _c2r_pass(cur, ax[-last:], sizes[-last:], single))
        return (yield from _chain(x, passes, factor))
    return run(work(), block)
