# test_progress.py -- progress= on calls: frames of a running routine reach a callable in the
# caller's thread (blocking) or with the call's id (async), SDPA's iterations, the bar.
import os
import threading
from pathlib import Path

import numpy as np
import pytest

import numrpc
from numrpc import _progress
from conftest import SDPA

SDPLIB = Path("/work/shared/data/sdplib")


@pytest.fixture(autouse=True)
def fast_frames():
    numrpc.set_progress_period(0.05)
    yield
    numrpc.set_progress_period(0.5)


class Releaser:
    """A progress handler that keeps every frame and lets the hold routine
    return (its release file) once it has seen `after` of them: the call
    lasts exactly as long as the test needs, whatever the machine's speed."""

    def __init__(self, path, after=3):
        self.path, self.after = path, after
        self.frames, self.threads = [], set()

    def __call__(self, p):
        self.frames.append(p)
        self.threads.add(threading.get_ident())
        if len(self.frames) == self.after:
            open(self.path, "w").close()


def test_a_blocking_calls_frames_arrive_in_its_thread(faults, gate_dir):
    seen = Releaser(os.path.join(gate_dir, "release-progress"))
    assert numrpc.call("hold", seen.path, progress=seen) is None
    assert len(seen.frames) >= 3 and seen.threads == {threading.get_ident()}
    assert all(p.call_id == 0 and p.routine == "hold" for p in seen.frames)
    elapsed = [p.elapsed for p in seen.frames]
    assert elapsed == sorted(elapsed) and elapsed[0] < elapsed[-1]
    # hold has no CalcOrder and says nothing of itself: both unknown
    assert all(p.predicted is None and p.fraction is None and p.message == "" for p in seen.frames)


def test_an_async_calls_frames_carry_its_id(faults, gate_dir):
    seen = Releaser(os.path.join(gate_dir, "release-progress-async"))
    future = numrpc.call_async("hold", seen.path, progress=seen)
    assert future.result(timeout=60) is None
    assert len(seen.frames) >= 3
    assert {p.call_id for p in seen.frames} == {future.call_id} and future.call_id > 0


def test_calls_without_progress_see_none_and_a_failing_handler_does_not_break_the_call(faults, gate_dir):
    path = os.path.join(gate_dir, "release-progress-raise")
    calls = []

    def bad(p):
        calls.append(p)
        if len(calls) == 2:
            open(path, "w").close()
        raise RuntimeError("a handler that fails")

    assert numrpc.call("hold", path, progress=bad) is None  # the handler's error is reported on stderr only
    assert len(calls) >= 2
    assert numrpc.call("ddot", 2, np.array([1.0, 2.0]), 1, np.array([3.0, 4.0]), 1) == 11.0
    with pytest.raises(TypeError, match="progress="):
        numrpc.call("ddot", 2, np.array([1.0, 2.0]), 1, np.array([3.0, 4.0]), 1, progress="yes")


def test_progress_true_draws_a_bar(faults, gate_dir, capsys, monkeypatch):
    path = os.path.join(gate_dir, "release-progress-bar")
    drawn = []
    draw = _progress._Bar.__call__

    def drawing(bar, p):
        draw(bar, p)
        drawn.append(p)
        if len(drawn) == 2:
            open(path, "w").close()

    monkeypatch.setattr(_progress._Bar, "__call__", drawing)
    numrpc.call("hold", path, progress=True)
    assert len(drawn) >= 2
    assert "hold" in capsys.readouterr().err  # tqdm's bar or the plain line, on stderr


def test_sdpa_iterations_reach_a_python_handler():
    if not SDPA.exists() or not SDPLIB.exists():
        pytest.skip("the sdpa module or SDPLIB is not here")
    lines = []
    primal, dual, phase, *_ = numrpc.call("sdpa_ship", str(SDPLIB / "arch0.dat-s"), None, 0, None,
                                          progress=lambda p: lines.append(p.message))
    assert phase in ("pdOPT", "pdFEAS")  # SDPA's defaults stop arch0 at pdFEAS, as without progress
    iterations = [line for line in lines if line.startswith("iteration ")]
    assert iterations, f"no iteration reported in {lines}"
    numbers = [int(line.split()[1].rstrip(":")) for line in iterations]
    assert numbers == sorted(numbers)
    last = iterations[-1].split()
    assert last[2] == "primal" and last[4] == "dual"
    assert np.isfinite(float(last[3])) and np.isfinite(float(last[5]))
    print(len(iterations), "iterations reported:", iterations[-1])
