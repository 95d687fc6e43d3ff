# test_fft_api.py -- numrpc.fft against numpy.fft on the same inputs: every function,
# precision, layout, axes, padding and norm; inputs unchanged, errors, futures.
import concurrent.futures
import time
import warnings

import numpy as np
import pytest

import numrpc
import numrpc.fft as nfft
from conftest import FFT

pytestmark = pytest.mark.filterwarnings("error::numrpc.CopyWarning")  # no hidden copy into Fortran order

ComplexWarning = getattr(np, "exceptions", np).ComplexWarning
NORMS = [None, "backward", "ortho", "forward"]
DTYPES = [np.float32, np.float64, np.complex64, np.complex128]
SINGLE = (np.dtype(np.float32), np.dtype(np.complex64))
REAL_OUT = ("irfft", "irfft2")


@pytest.fixture(autouse=True)
def fft_module():
    if not FFT.exists():
        pytest.skip(f"{FFT} not built: FFTW 3 (libfftw3-dev) is absent")


def make(rng, shape, dtype, order="C"):
    x = rng.standard_normal(shape)
    if np.issubdtype(dtype, np.complexfloating):
        x = x + 1j * rng.standard_normal(shape)
    return np.asarray(x, dtype=dtype, order=order)


def expected_dtype(func, dtype):
    single = np.dtype(dtype) in SINGLE
    if func in REAL_OUT:
        return np.dtype(np.float32 if single else np.float64)
    return np.dtype(np.complex64 if single else np.complex128)


def assert_close(got, want, single):
    assert got.shape == want.shape
    scale = np.abs(want).max() if want.size else 1.0
    tolerance = (2e-6 if single else 1e-14) * max(scale, 1e-30)
    np.testing.assert_allclose(got, want, rtol=0, atol=tolerance)


def both(func, x, **kwargs):
    """numpy.fft's result and numrpc.fft's, without numpy's ComplexWarning for rfft of complex input."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ComplexWarning)
        return getattr(np.fft, func)(x, **kwargs), getattr(nfft, func)(x, **kwargs)


CASES_1D = [  # shape, n, axis
    ((16,), None, -1), ((13,), 20, 0), ((13,), 8, -1), ((1,), None, 0),
    ((6, 9), None, 0), ((6, 9), 12, 1), ((6, 9), 5, -2),
    ((3, 4, 5), None, 1), ((3, 4, 5), 7, 0), ((3, 4, 5), 4, -1)]


@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("shape,n,axis", CASES_1D)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("func", ["fft", "ifft", "rfft", "irfft"])
def test_1d_transforms_are_numpys(rng, func, dtype, shape, n, axis, order):
    if func == "irfft" and n is None and shape[axis] == 1:
        pytest.skip("irfft's default n is 0 here: the error test has it")
    x = make(rng, shape, dtype, order)
    before = x.copy(order="K")
    for norm in NORMS:
        want, got = both(func, x, n=n, axis=axis, norm=norm)
        assert got.dtype == expected_dtype(func, dtype)
        assert_close(got, want, np.dtype(dtype) in SINGLE)
    np.testing.assert_array_equal(x, before)
    assert x.flags.f_contiguous == before.flags.f_contiguous


CASES_2D = [  # shape, s, axes
    ((8, 6), None, (-2, -1)), ((7, 5), (9, 4), (-2, -1)), ((6, 8), None, (1, 0)), ((6, 8), (4, 10), (1, 0)),
    ((3, 4, 5), None, (-2, -1)), ((3, 4, 5), (5, 3), (0, 2)), ((3, 4, 5), None, (2, 0)),
    ((3, 4, 5), None, (0, 1, 2)), ((3, 4, 5), (4, 6, 3), (0, 2, 1)),  # any number of axes, as numpy's fftn
    ((4, 5), None, (0,)), ((4, 6), (3, 5), (0, 0)), ((3, 4, 5), (3, 5, 2), (1, 0, 1))]  # one axis; repeated


@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("shape,s,axes", CASES_2D)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("func", ["fft2", "ifft2", "rfft2", "irfft2"])
def test_2d_transforms_are_numpys(rng, func, dtype, shape, s, axes, order):
    x = make(rng, shape, dtype, order)
    before = x.copy(order="K")
    for norm in NORMS:
        want, got = both(func, x, s=s, axes=axes, norm=norm)
        assert got.dtype == expected_dtype(func, dtype)
        assert_close(got, want, np.dtype(dtype) in SINGLE)
    np.testing.assert_array_equal(x, before)


@pytest.mark.parametrize("n", [97, 1024, 4096])
def test_long_and_prime_lengths(rng, n):
    x = make(rng, n, np.complex128)
    assert_close(nfft.fft(x), np.fft.fft(x), False)
    assert_close(nfft.ifft(x), np.fft.ifft(x), False)
    r = x.real.copy()
    assert_close(nfft.rfft(r), np.fft.rfft(r), False)
    assert_close(nfft.irfft(x[: n // 2 + 1], n), np.fft.irfft(x[: n // 2 + 1], n), False)


def test_round_trips_give_the_input_back(rng):
    x = make(rng, (5, 12), np.float64)
    np.testing.assert_allclose(nfft.irfft(nfft.rfft(x), 12), x, atol=1e-14)
    np.testing.assert_allclose(nfft.irfft2(nfft.rfft2(x, norm="ortho"), x.shape, norm="ortho"), x, atol=1e-14)
    np.testing.assert_allclose(nfft.ifft2(nfft.fft2(x, norm="forward"), norm="forward").real, x, atol=1e-14)


def test_other_inputs_go_double_as_numpys(rng):
    ints = np.arange(12, dtype=np.int32).reshape(3, 4)
    for func in ["fft", "ifft", "fft2", "rfft", "rfft2"]:
        want, got = both(func, ints)
        assert got.dtype == np.complex128
        assert_close(got, want, False)
    assert nfft.irfft([1, 2, 3]).dtype == np.float64
    assert_close(nfft.fft([1, 2j, 3]), np.fft.fft([1, 2j, 3]), False)  # a list
    halves = make(rng, 8, np.float16)
    assert nfft.fft(halves).dtype == np.complex128


def test_non_hermitian_half_spectra_are_taken_as_numpy_takes_them(rng):
    # The imaginary parts of the first and the Nyquist frequencies, and a first
    # column that is no real array's spectrum: numpy ignores what breaks the symmetry.
    y = make(rng, (6, 5), np.complex128)
    assert_close(nfft.irfft(y, 8), np.fft.irfft(y, 8), False)
    assert_close(nfft.irfft2(y, (6, 8)), np.fft.irfft2(y, (6, 8)), False)
    assert_close(nfft.irfft2(y, (7, 9)), np.fft.irfft2(y, (7, 9)), False)


def test_strided_and_read_only_inputs(rng):
    base = make(rng, (10, 16), np.complex128)
    view = base[::2, 1::3]
    assert_close(nfft.fft(view, axis=0), np.fft.fft(view, axis=0), False)
    assert_close(nfft.fft2(view), np.fft.fft2(view), False)
    frozen = make(rng, (4, 8), np.float64)
    frozen.flags.writeable = False
    assert_close(nfft.rfft(frozen), np.fft.rfft(frozen), False)  # passed as it is: IN, never written
    assert_close(nfft.fft(frozen), np.fft.fft(frozen), False)


def test_empty_batches_make_no_call(rng):
    x = np.zeros((0, 8))
    for func in ["fft", "ifft", "rfft", "irfft"]:
        want, got = both(func, x)
        assert got.shape == want.shape and got.dtype == want.dtype
    assert nfft.fft2(np.zeros((0, 4, 5))).shape == (0, 4, 5)


def test_rfft_of_complex_input_warns_as_numpy():
    x = np.array([1 + 1j, 2, 3, 4])
    with pytest.warns(ComplexWarning):
        got = nfft.rfft(x)
    assert_close(got, np.fft.rfft(x.real), False)


def test_warnings_point_at_the_caller_blocking_or_not():
    x = np.array([1 + 1j, 2, 3, 4])
    for block in (True, False):
        with pytest.warns(ComplexWarning) as seen:
            got = nfft.rfft(x, block=block)
        assert seen[0].filename == __file__  # this line, not numrpc's driver
        assert_close(got if block else got.result(timeout=30), np.fft.rfft(x.real), False)


def test_last_calls_lists_each_call_of_a_blocking_stage(rng, servers):
    import numrpc.linalg as la
    nfft.fft(make(rng, (3, 16), np.complex128))  # one call per line, started together
    calls = la.last_calls()
    assert len(calls) == 3 and all(c.server in servers and c.bytes_sent > 16 * 16 for c in calls)
    nfft.fft(make(rng, 16, np.complex128))  # one line: through numrpc.call
    assert la.last_calls() == [numrpc.last_call_info()]


X1 = np.arange(8.0)
X2 = np.arange(12.0).reshape(3, 4)
BAD = [("fft", X1, dict(n=0)), ("ifft", X1, dict(n=-3)), ("fft", X1, dict(norm="sideways")),
       ("fft", X1, dict(axis=1)), ("ifft", X2, dict(axis=-3, n=4)), ("fft", X1, dict(n=2.5)),
       ("rfft", X1, dict(n=0)), ("rfft", X2, dict(axis=2)), ("irfft", np.ones(1), {}),
       ("irfft", X1, dict(norm="both")), ("irfft", X1, dict(n=-1)), ("fft2", X1, {}),
       ("fft2", X2, dict(s=(4,))), ("ifft2", X2, dict(s=(0, 4))), ("rfft2", X2, dict(axes=(0, 2))),
       ("irfft2", X2, dict(norm="x")), ("irfft2", np.ones((3, 1)), {}), ("fft2", np.float64(1.0), {})]


@pytest.mark.parametrize("func,x,kwargs", BAD, ids=[f"{f}-{k}" for f, _, k in BAD])
def test_bad_arguments_raise_what_numpy_raises(func, x, kwargs):
    with pytest.raises(Exception) as numpys:
        getattr(np.fft, func)(x, **kwargs)
    with pytest.raises(type(numpys.value)) as ours:
        getattr(nfft, func)(x, **kwargs)
    future = getattr(nfft, func)(x, block=False, **kwargs)  # the same error, from result()
    assert isinstance(future, concurrent.futures.Future)
    with pytest.raises(type(ours.value)) as later:
        future.result(timeout=30)
    assert str(later.value) == str(ours.value)


@pytest.mark.parametrize("func", ["fft", "ifft", "rfft", "irfft", "fft2", "ifft2", "rfft2", "irfft2"])
def test_futures_give_the_blocking_result(rng, func):
    x = make(rng, (4, 6, 8), np.complex128 if func in ("fft", "ifft", "fft2", "ifft2", "irfft2", "irfft")
             else np.float64)
    before = x.copy()
    future = getattr(nfft, func)(x, block=False, norm="ortho")
    assert isinstance(future, concurrent.futures.Future)
    blocking = getattr(nfft, func)(x, norm="ortho")
    got = future.result(timeout=30)
    assert got.dtype == blocking.dtype
    np.testing.assert_allclose(got, blocking, rtol=1e-13, atol=1e-13)
    np.testing.assert_array_equal(x, before)
    # One call per line (24 of 8 points) or per plane (4 of 6 x 8).
    assert len(future.calls) == (24 if func in ("fft", "ifft", "rfft", "irfft") else 4)


def test_many_futures_at_once_over_the_servers(rng, servers):
    inputs = [make(rng, (16, 32), np.complex128) for _ in range(12)]
    futures = {nfft.fft2(x, block=False): x for x in inputs}
    futures.update({nfft.fft(x, axis=0, block=False): x for x in inputs})
    for future in concurrent.futures.as_completed(futures, timeout=60):
        x = futures[future]
        want = np.fft.fft(x, axis=0) if len(future.calls) == 32 else np.fft.fft2(x)
        assert_close(future.result(), want, False)
        assert all(info.server in servers for info in future.calls)
    assert numrpc.calls_in_progress() == 0


def test_cancel_stops_a_batch(rng):
    x = make(rng, (3000, 16), np.complex128)
    future = nfft.fft(x, block=False)
    if future.cancel():
        assert future.cancelled()
        with pytest.raises(concurrent.futures.CancelledError):
            future.result(timeout=30)
    else:  # it had already finished
        assert_close(future.result(timeout=30), np.fft.fft(x), False)
    deadline = time.monotonic() + 30
    while numrpc.calls_in_progress() and time.monotonic() < deadline:  # the library returns them all
        time.sleep(0.01)
    assert numrpc.calls_in_progress() == 0


def test_a_one_call_transform_is_the_threads_last_call(rng):
    x = make(rng, 64, np.complex128)
    nfft.fft(x)
    info = numrpc.last_call_info()
    assert info.bytes_sent > 64 * 16  # the line went out


@pytest.mark.parametrize("block", [True, False])
def test_a_failed_call_among_many_fails_the_whole(block):
    # What numrpc.fft's stages do with a server's refusal (a sign FFTW does not
    # know) or the binding's (a wrong dtype): the blocking call raises it, the
    # future's result() raises the same, once the other calls are back.
    from numrpc._ops import Stage, run
    lines = [np.ones(8, np.complex128) for _ in range(6)]
    for bad, error in [(("zfft_1d", (8, lines[0], 3)), numrpc.BadArgument),
                       (("zfft_1d", (8, np.ones(8), -1)), numrpc.BadArgumentType)]:
        calls = [("zfft_1d", (8, line, -1)) for line in lines[1:]] + [bad]
        def work():
            yield Stage(calls)
            pytest.fail("a failed stage went on")
        if block:
            with pytest.raises(error):
                run(work(), True)
        else:
            future = run(work(), False)
            with pytest.raises(error):
                future.result(timeout=30)
        assert numrpc.calls_in_progress() == 0  # nothing of it left running
