# test_arrays.py -- how arrays cross: no copy for Fortran-ordered ones, one
# CopyWarning and a copy back otherwise, dtype and shape mistakes caught before sending.
import warnings

import numpy as np
import pytest

import numrpc


def dgemm_args(rng, n, order="F"):
    a = np.array(rng.standard_normal((n, n)), order=order)
    b = np.array(rng.standard_normal((n, n)), order=order)
    c = np.array(np.zeros((n, n)), order=order)
    return a, b, c


def test_fortran_arrays_cross_without_copy(rng):
    n = 64
    a, b, c = dgemm_args(rng, n)
    pointers = [x.ctypes.data for x in (a, b, c)]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # any CopyWarning fails the test
        numrpc.call("dgemm", "N", "N", n, n, n, 1.0, a, n, b, n, 0.0, c, n)
    assert [x.ctypes.data for x in (a, b, c)] == pointers
    np.testing.assert_allclose(c, a @ b, rtol=1e-12)


def test_c_ordered_arrays_are_copied_back_with_one_warning_per_parameter(rng):
    n = 8
    a, b, c = dgemm_args(rng, n, order="C")
    c0 = c.copy()
    pointer = c.ctypes.data
    with pytest.warns(numrpc.CopyWarning) as seen:
        numrpc.call("dgemm", "N", "N", n, n, n, 1.0, a, n, b, n, 1.0, c, n)
        numrpc.call("dgemm", "N", "N", n, n, n, 1.0, a, n, b, n, 1.0, c, n)
    names = sorted(str(w.message).split()[2] for w in seen)
    assert names == ["a", "b", "c"]  # once each, not once per call
    assert "and back" in [str(w.message) for w in seen if " c " in str(w.message)][0]
    assert c.ctypes.data == pointer and c.flags.c_contiguous
    np.testing.assert_allclose(c, c0 + 2 * (a @ b), rtol=1e-12)


def test_copy_warning_can_be_made_an_error(rng):
    a, b, c = dgemm_args(rng, 4, order="C")
    with warnings.catch_warnings():
        warnings.simplefilter("error", numrpc.CopyWarning)
        with pytest.raises(numrpc.CopyWarning, match="dgemm: parameter a"):
            numrpc.call("dgemm", "N", "N", 4, 4, 4, 1.0, a, 4, b, 4, 0.0, c, 4)


def test_strided_vector_of_the_wrong_increment_is_copied(rng):
    n = 6
    base = rng.standard_normal(2 * n)
    y = base[::2]
    y0 = y.copy()
    with pytest.warns(numrpc.CopyWarning, match="dscal: parameter x \\(strided"):
        numrpc.call("dscal", n, 3.0, y, 1)  # increment 1 over a view of stride 2
    np.testing.assert_allclose(y, 3 * y0)


def info_unchanged(before):
    """The calling thread's last call is still the one before: nothing was sent."""
    assert numrpc.last_call_info() == before


def test_dtype_mistake_is_a_type_error_naming_the_parameter(rng):
    n = 4
    numrpc.call("ddot", 1, np.ones(1), 1, np.ones(1), 1)
    before = numrpc.last_call_info()
    a = np.asfortranarray(rng.standard_normal((n, n)).astype(np.float32))
    with pytest.raises(TypeError, match=r"dgesv: parameter a is double \(float64\), the array is float32"):
        numrpc.call("dgesv", n, 1, a, n, None, np.ones(n), n)
    with pytest.raises(numrpc.BadArgumentType, match="parameter ipiv is int"):
        numrpc.call("dgesv", n, 1, np.asfortranarray(a, np.float64), n, np.zeros(n, np.int64), np.ones(n), n)
    with pytest.raises(TypeError, match="parameter n is int"):
        numrpc.call("dgesv", 4.0, 1, a, n, None, np.ones(n), n)
    with pytest.raises(TypeError, match="parameter x takes a numpy array"):
        numrpc.call("ddot", 2, [1.0, 2.0], 1, np.ones(2), 1)
    info_unchanged(before)


def test_shape_mistake_is_a_value_error_with_both_sizes(rng):
    n = 5
    numrpc.call("ddot", 1, np.ones(1), 1, np.ones(1), 1)
    before = numrpc.last_call_info()
    a = np.asfortranarray(rng.standard_normal((n, n)))
    with pytest.raises(ValueError, match=r"dgesv: parameter a has shape \(5, 5\) \(25 elements\), the interface "
                                         r"expects \(6, 5\) \(30 elements\) for n=5, nrhs=1, lda=6"):
        numrpc.call("dgesv", n, 1, a, n + 1, None, np.ones(n + 1), n + 1)
    with pytest.raises(numrpc.BadArgument, match=r"parameter y has shape \(3,\)"):
        numrpc.call("ddot", 4, np.ones(4), 1, np.ones(3), 1)
    info_unchanged(before)


def test_argument_count_and_read_only_outputs():
    with pytest.raises(TypeError, match=r"ddot takes 5 arguments \(n, x, incx, y, incy\), 4 given; "
                                        r"result returned, not passed"):
        numrpc.call("ddot", 1, np.ones(1), 1, np.ones(1))
    y = np.ones(3)
    y.flags.writeable = False
    with pytest.raises(ValueError, match="parameter y is INOUT, the array is read-only"):
        numrpc.call("daxpy", 3, 1.0, np.ones(3), 1, y, 1)


def test_none_only_for_outputs():
    with pytest.raises(TypeError, match="parameter x is an IN array: pass a numpy array, not None"):
        numrpc.call("ddot", 2, None, 1, np.ones(2), 1)


def test_longer_vector_is_used_in_place_like_blas(rng):
    x = rng.standard_normal(10)
    with warnings.catch_warnings():
        warnings.simplefilter("error", numrpc.CopyWarning)
        assert numrpc.call("ddot", 4, x, 1, x, 1) == pytest.approx(np.dot(x[:4], x[:4]), rel=1e-12)


def test_negative_extent_is_the_librarys_bad_argument():
    with pytest.raises(numrpc.BadArgument) as caught:
        numrpc.call("dgesv", -3, 1, np.ones((1, 1), order="F"), 1, None, np.ones(1), 1)
    assert caught.value.code == -2 and caught.value.name == "NUMRPC_EINVAL"
    assert "dgesv" in caught.value.detail


def test_shapes_follow_the_scalars_of_each_call(rng):
    """Shapes are worked out once per set of IN scalars: each call is still
    checked against its own n, also after many others filled the kept shapes."""
    x = rng.standard_normal(300)
    x.flags.writeable = False  # an IN array the library reads through numpy's own address
    for n in list(range(1, 301)) + [3, 300, 4]:
        assert numrpc.call("ddot", n, x, 1, x, 1) == pytest.approx(np.dot(x[:n], x[:n]), rel=1e-12)
    for n in (3, 4, 3):
        a, b, c = dgemm_args(rng, n)
        numrpc.call("dgemm", "N", "N", n, n, n, 1.0, a, n, b, n, 0.0, c, n)
        np.testing.assert_allclose(c, a @ b, rtol=1e-12, atol=1e-12)
    a, b, c = dgemm_args(rng, 3)
    with pytest.raises(ValueError, match=r"dgemm: parameter a has shape \(3, 3\) \(9 elements\), the interface "
                                         r"expects \(4, 4\) \(16 elements\)"):
        numrpc.call("dgemm", "N", "N", 4, 4, 4, 1.0, a, 4, b, 4, 0.0, c, 4)
