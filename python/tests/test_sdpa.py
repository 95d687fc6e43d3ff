# test_sdpa.py -- SDPA from Python: file arguments (an IN filename shipped, an OUT
# filename written where the caller says, an OUT string), against SDPLIB's published optima.
from pathlib import Path

import pytest

import numrpc
from conftest import SDPA

SDPLIB = Path("/work/shared/data/sdplib")


def published_optimum(problem):
    """(value, half a unit of its last published digit) from SDPLIB's optimal.tsv."""
    for line in (SDPLIB / "optimal.tsv").read_text().splitlines():
        fields = line.split("\t")
        if not line.startswith("#") and fields[0] == problem:
            text = fields[3]
            digits = text.lower().index("e") - text.index(".") - 1
            return float(text), 0.5 * 10.0 ** (int(text.lower().split("e")[1]) - digits)
    raise KeyError(problem)


@pytest.fixture
def sdpa():
    if not SDPA.exists() or not SDPLIB.exists():
        pytest.skip("the sdpa module or SDPLIB is not here")


@pytest.mark.parametrize("problem", ["control1", "truss1"])
def test_sdpa_ship_reaches_the_published_optimum(sdpa, tmp_path, problem):
    solution = tmp_path / f"{problem}.out"
    primal, dual, phase, code, iterations, seconds = numrpc.call(
        "sdpa_ship", str(SDPLIB / f"{problem}.dat-s"), None, 1, str(solution))
    value, half_unit = published_optimum(problem)
    assert phase == "pdOPT" and iterations > 0 and seconds >= 0
    assert primal == pytest.approx(value, abs=half_unit * (1 + 1e-9))
    assert dual == pytest.approx(primal, rel=1e-6)  # SDPA's duality gap at pdOPT
    text = solution.read_text()
    assert "objValPrimal" in text and "xVec" in text  # SDPA's own output file, written here


def test_an_out_filename_may_be_none_and_must_be_a_path(sdpa):
    problem = str(SDPLIB / "control1.dat-s")
    primal, *_ = numrpc.call("sdpa_ship", problem, None, 0, None)  # no solution wanted: none written
    assert primal == pytest.approx(published_optimum("control1")[0], rel=1e-5)
    with pytest.raises(TypeError) as caught:
        numrpc.call("sdpa_ship", problem, None, 0, 3.5)
    assert "solution" in str(caught.value)
