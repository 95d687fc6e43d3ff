# test_async.py -- futures (a farm of dgemm over two servers, cancel, errors),
# threads calling at once, and the GIL released while a call waits.
import concurrent.futures
import os
import threading
import time

import numpy as np
import pytest

import numrpc


def wait_for(predicate, seconds=20):
    """Polls predicate until true or the deadline (then fails)."""
    deadline = time.monotonic() + seconds
    while not predicate():
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.01)


def test_farm_of_dgemm_futures_over_two_servers(rng, servers):
    n, count = 48, 16
    jobs = []
    for _ in range(count):
        a = np.asfortranarray(rng.standard_normal((n, n)))
        b = np.asfortranarray(rng.standard_normal((n, n)))
        c = np.zeros((n, n), order="F")
        future = numrpc.call_async("dgemm", "N", "N", n, n, n, 1.0, a, n, b, n, 0.0, c, n)
        assert isinstance(future, concurrent.futures.Future)
        jobs.append((future, a, b, c))
    by_future = {job[0]: job for job in jobs}
    done = 0
    for future in concurrent.futures.as_completed(by_future, timeout=60):
        _, a, b, c = by_future[future]
        assert future.result() is None
        np.testing.assert_allclose(c, a @ b, rtol=1e-12)
        assert future.call_info.server in servers
        done += 1
    assert done == count
    assert numrpc.calls_in_progress() == 0


def test_future_returns_out_scalars_and_allocated_arrays(rng):
    n = 20
    a0, b0 = np.asfortranarray(rng.standard_normal((n, n))), rng.standard_normal(n)
    b = b0.copy()
    info, ipiv = numrpc.call_async("dgesv", n, 1, a0.copy(order="F"), n, None, b, n).result(timeout=30)
    assert info == 0 and ipiv.shape == (n,)
    np.testing.assert_allclose(b, np.linalg.solve(a0, b0), rtol=1e-10)


def test_future_carries_the_calls_error(faults):
    future = numrpc.call_async("crash", 1)
    with pytest.raises(numrpc.ServerCrashed) as caught:
        future.result(timeout=30)
    assert caught.value.code == -11 and caught.value.name == "NUMRPC_ECRASHED"


def test_cancel_stops_the_call_on_its_server(faults, gate_dir):
    path = os.path.join(gate_dir, "release-cancelled")
    future = numrpc.call_async("hold", path)
    wait_for(lambda: os.path.exists(path + ".started"))
    assert future.cancel()
    assert future.cancelled()
    with pytest.raises(concurrent.futures.CancelledError):
        future.result(timeout=1)
    wait_for(lambda: numrpc.calls_in_progress() == 0)  # returned without the release file: stopped there
    assert not os.path.exists(path)


def test_gil_is_released_while_a_call_waits(faults, gate_dir):
    path = os.path.join(gate_dir, "release-gil")
    main_ran = []  # what this thread did while the holder was inside numrpc_callv
    seen_at_return = []

    def hold():
        numrpc.call("hold", path)  # returns once the release file exists (or after 60 s)
        seen_at_return.append(list(main_ran))

    holder = threading.Thread(target=hold)
    holder.start()
    try:
        wait_for(lambda: os.path.exists(path + ".started"))
        main_ran.append(numrpc.call("ddot", 3, np.ones(3), 1, np.arange(3.0), 1))
    finally:
        open(path, "w").close()
        holder.join(timeout=90)
    # Holding the GIL, the holder would have kept this thread out until hold gave up.
    assert seen_at_return == [[3.0]]


def test_threads_calling_at_once(rng):
    n, threads = 40, 4
    inputs = [(np.asfortranarray(rng.standard_normal((n, n))), rng.standard_normal(n)) for _ in range(threads)]
    results = [None] * threads

    def solve(i):
        a, b = inputs[i]
        x = b.copy()
        info, _ = numrpc.call("linpack", a, n, n, None, x)
        results[i] = (info, x)

    workers = [threading.Thread(target=solve, args=(i,)) for i in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(timeout=60)
    for (a, b), (info, x) in zip(inputs, results):
        assert info == 0
        np.testing.assert_allclose(x, np.linalg.solve(a, b), rtol=1e-10)
