# test_install.py -- the package as pip makes it: a wheel built from the tree (which stays clean) with
# libnumrpc inside, installed in a fresh venv, calls a real server with nothing set; version, hints, docs.
import importlib.metadata
import inspect
import json
import os
import pydoc
import re
import subprocess
import sys
import typing
import zipfile
from pathlib import Path

import numpy as np
import pytest

import numrpc
from numrpc import _call, _client, _handles, _interface

TOP = Path(__file__).resolve().parents[2]
PYTHON_DIR = TOP / "python"
# The interpreter the suite's venv was made from (Debian's, with numpy in its site-packages).
BASE_PYTHON = getattr(sys, "_base_executable", None) or sys.executable

# Run inside the installed venv: what it loaded, where from, and a real call.
CHILD = r"""
import importlib.metadata, json, sys, sysconfig
import numpy as np
import numrpc
numrpc.Client(servers=sys.argv[1])
x, y = np.linspace(-1.0, 2.0, 257), np.cos(np.arange(257.0))
dot = numrpc.call("ddot", 257, x, 1, y, 1)
z = np.arange(1.0, 33.0)
numrpc.call("dscal", 32, 2.5, z, 1)
numrpc.finalize()
print(json.dumps({"library": numrpc.library_path, "package": numrpc.__file__, "version": numrpc.__version__,
                  "metadata": importlib.metadata.version("numrpc"), "platlib": sysconfig.get_paths()["platlib"],
                  "dot": dot, "scaled": z.tolist()}))
"""


def git_state():
    """python/'s state as git sees it, hidden files included (setuptools' litter would be ignored)."""
    done = subprocess.run(["git", "-C", str(TOP), "status", "--porcelain", "--ignored", "--untracked-files=all",
                           "--", "python"], capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"not a git tree: {done.stderr.strip()}")
    return done.stdout


def clean_env(**extra):
    """The environment of a child with no hint where libnumrpc is."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("NUMRPC_LIB", "LD_LIBRARY_PATH", "PYTHONPATH", "NUMRPC_SERVER", "VIRTUAL_ENV")}
    env.update(extra)
    return env


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """`pip wheel ./python` from the tree, offline: (the wheel, python/'s git state before, after)."""
    out = tmp_path_factory.mktemp("wheel")
    before = git_state()
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-index", "--no-deps", "--no-build-isolation",
                    str(PYTHON_DIR), "-w", str(out)], check=True, env=clean_env(), cwd=out)
    after = git_state()
    wheels = list(out.glob("numrpc-*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0], before, after


@pytest.fixture(scope="module")
def venv2(built, tmp_path_factory):
    """A second fresh venv (Debian's numpy through system site-packages) with only the wheel installed."""
    venv = tmp_path_factory.mktemp("venv2") / "venv"
    subprocess.run([BASE_PYTHON, "-m", "venv", "--system-site-packages", str(venv)], check=True)
    python = venv / "bin" / "python"
    subprocess.run([str(python), "-m", "pip", "install", "-q", "--no-index", "--no-deps", str(built[0])],
                   check=True, env=clean_env(), cwd=venv)
    return python


def test_wheel_leaves_the_tree_clean(built):
    wheel, before, after = built
    assert after == before, f"pip wheel changed python/:\n--- before\n{before}--- after\n{after}"
    # Nor did an earlier build (the suite's own `pip install ./python`) leave any (numrpc/_libs/ is
    # `pip install -e`'s, on purpose).
    litter = [line for line in after.splitlines()
              if re.search(r"(^|/)(build/|[^/ ]*\.egg-info(/|$)|[^/ ]*\.o$)", line[3:])]
    assert not litter, f"setuptools' litter in python/: {litter}"


def test_wheel_holds_the_library(built):
    wheel = built[0]
    # Any Python 3 (ctypes, no CPython ABI), this platform (linux_x86_64 here).
    assert wheel.name.startswith(f"numrpc-{numrpc.__version__}-py3-none-linux_"), wheel.name
    names = zipfile.ZipFile(wheel).namelist()
    assert "numrpc/_libs/libnumrpc.so" in names and "numrpc/py.typed" in names
    assert "numrpc/_version.py" in names


def test_installed_wheel_calls_a_server_with_nothing_set(venv2, servers, tmp_path):
    done = subprocess.run([str(venv2), "-c", CHILD, servers[0]], capture_output=True, text=True,
                          env=clean_env(), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout)
    platlib = Path(got["platlib"])
    assert Path(got["package"]).is_relative_to(platlib), got["package"]  # the venv's, not the tree's
    assert Path(got["library"]) == platlib / "numrpc" / "_libs" / "libnumrpc.so"
    assert platlib.is_relative_to(venv2.parent.parent)
    assert got["version"] == got["metadata"] == numrpc.__version__
    x, y = np.linspace(-1.0, 2.0, 257), np.cos(np.arange(257.0))
    assert got["dot"] == pytest.approx(np.dot(x, y), rel=1e-12)
    np.testing.assert_array_equal(got["scaled"], 2.5 * np.arange(1.0, 33.0))


def test_numrpc_lib_wins_over_the_bundled_library(venv2, tmp_path):
    chosen = os.environ.get("NUMRPC_LIB") or str(Path(os.environ.get("NUMRPC_BUILD_DIR", TOP / "build"))
                                                  / "client" / ".libs" / "libnumrpc.so")
    if not Path(chosen).exists():
        pytest.skip(f"no built libnumrpc at {chosen}")
    done = subprocess.run([str(venv2), "-c", "import numrpc; print(numrpc.library_path)"], capture_output=True,
                          text=True, env=clean_env(NUMRPC_LIB=chosen), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == chosen


def test_version_is_the_metadata():
    assert numrpc.__version__ == importlib.metadata.version("numrpc")
    assert (Path(numrpc.__file__).parent / "py.typed").exists()


def public_functions():
    """The public functions, classes and methods of _call, _client, _handles and _interface."""
    for module in (_call, _client, _handles, _interface):
        for name, value in vars(module).items():
            if name.startswith("_") or getattr(value, "__module__", None) != module.__name__:
                continue
            if inspect.isfunction(value):
                yield f"{module.__name__}.{name}", value
            elif inspect.isclass(value):
                yield f"{module.__name__}.{name}", value
                for attr, member in vars(value).items():
                    if attr.startswith("_") and attr != "__init__":
                        continue
                    member = member.fget if isinstance(member, property) else member
                    member = member.__func__ if isinstance(member, (classmethod, staticmethod)) else member
                    if inspect.isfunction(member) and member.__module__ == module.__name__:
                        yield f"{module.__name__}.{name}.{attr}", member


@pytest.mark.parametrize("name, function", list(public_functions()), ids=lambda v: v if isinstance(v, str) else "")
def test_public_functions_have_hints_and_docs(name, function):
    if inspect.isclass(function):
        assert function.__doc__ and function.__doc__.strip(), f"{name}: no docstring"
        return
    hints = typing.get_type_hints(function)  # every annotation resolves
    assert "return" in hints, f"{name}: no return annotation"
    for p in inspect.signature(function).parameters.values():
        if p.name not in ("self", "cls"):
            assert p.name in hints, f"{name}: {p.name} has no annotation"
    if not name.endswith(".__init__"):  # the class's docstring tells its arguments
        assert function.__doc__ and function.__doc__.strip(), f"{name}: no docstring"


@pytest.mark.parametrize("function", [numrpc.call, numrpc.call_async, numrpc.put, numrpc.describe,
                                      numrpc.Client, numrpc.finalize, numrpc.last_call_info, numrpc.set_timeout,
                                      numrpc.Handle.get])
def test_help_shows_numpy_style_docs(function):
    text = pydoc.render_doc(function, renderer=pydoc.plaintext)
    # A numpy-style section: its title, underlined.
    assert re.search(r"\n[ |]*(Parameters|Returns|Raises)\n[ |]*-{6,}\n", text), \
        f"help({function.__qualname__}) has no numpy-style section:\n{text}"
