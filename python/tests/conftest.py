# conftest.py -- two real numrpc-servers on free ports of 127.0.0.1 for the session (the build
# tree's stub modules, plus the test module faults), and one with an MPI job when asked; stopped by pid.
import os
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np
import pytest

BUILD = Path(os.environ.get("NUMRPC_BUILD_DIR", Path(__file__).resolve().parents[2] / "build"))
MODULES = [BUILD / "stubs" / ".libs" / f"{m}.so" for m in ("blas", "lapack", "linpack")]
FAULTS = BUILD / "tests" / "server" / ".libs" / "faults.so"  # make -C build/tests server/faults.la
SDPA = BUILD / "stubs" / ".libs" / "sdpa.so"  # built when Debian's libsdpa-dev is there
FFT, SPARSE = (BUILD / "stubs" / ".libs" / f"{m}.so" for m in ("fft", "sparse"))  # libfftw3-dev, libsuperlu-dev
# Built when configure finds ScaLAPACK and OpenMPI (docs/mpi.md).
SCALAPACK, MPI_ENGINE = BUILD / "stubs" / ".libs" / "scalapack.so", BUILD / "mpi" / "numrpc-mpi-engine"


class Server:
    """One numrpc-server process on a free port (--port 0, --port-file)."""

    def __init__(self, stubs, workers=3, extra=()):
        self.dir = tempfile.mkdtemp(prefix="numrpc-pytest-")
        port_file = os.path.join(self.dir, "port")
        self.log = open(os.path.join(self.dir, "log"), "w")
        self.proc = subprocess.Popen(
            [str(BUILD / "server" / "numrpc-server"), "--port", "0", "--bind", "127.0.0.1", "--stubs", stubs,
             "--port-file", port_file, "--quiet", "--workers", str(workers), "--blas-threads", "1",
             "--admin-socket", "none", *extra], stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 20
        port = ""
        while not port and time.monotonic() < deadline and self.proc.poll() is None:
            time.sleep(0.02)
            if os.path.exists(port_file):
                port = open(port_file).read().strip()
        if not port:
            self.stop()
            raise RuntimeError(f"numrpc-server did not start (log in {self.dir})")
        self.address = f"127.0.0.1:{port}"

    def stop(self):
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.kill(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=10)
        self.log.close()


@pytest.fixture(scope="session")
def stub_dir(tmp_path_factory):
    """The stub modules the servers load: the build's, and faults when built."""
    missing = [str(m) for m in MODULES if not m.exists()]
    if missing:
        pytest.exit(f"build numrpc first (./scripts/build.sh build): missing {missing}", returncode=2)
    path = tmp_path_factory.mktemp("stubs")
    for module in MODULES + [m for m in (FAULTS, SDPA, FFT, SPARSE, SCALAPACK) if m.exists()]:
        (path / module.name).symlink_to(module)
    return str(path)


@pytest.fixture(scope="session")
def gate_dir(tmp_path_factory):
    """Where the hold routine's release files go: the one directory of /tmp
    the servers' confined workers may use (--worker-dir)."""
    return str(tmp_path_factory.mktemp("gates"))


@pytest.fixture(scope="session")
def servers(stub_dir, gate_dir):
    started = []
    try:
        for _ in range(2):
            started.append(Server(stub_dir, extra=["--worker-dir", gate_dir]))
        yield [s.address for s in started]
    finally:
        for s in started:
            s.stop()


@pytest.fixture(scope="session")
def mpi_server(stub_dir):
    """A third server with a resident MPI job of 2 ranks, started for the first
    test that asks (mpirun's start-up is paid then, once); skips the test when
    the build has no MPI engine. Its address ("host:port")."""
    if not (SCALAPACK.exists() and MPI_ENGINE.exists()) or shutil.which("mpirun") is None:
        pytest.skip("no MPI engine in this build (configure found no ScaLAPACK/OpenMPI)")
    server = Server(stub_dir, workers=2, extra=["--mpi-ranks", "2", "--mpi-args", "--oversubscribe",
                                                "--mpi-engine", str(MPI_ENGINE)])
    try:
        yield server.address
    finally:
        server.stop()


@pytest.fixture(scope="session", autouse=True)
def client(servers):
    import numrpc
    yield numrpc.Client(servers=servers)
    numrpc.finalize()  # connections closed before the servers drain


@pytest.fixture
def faults():
    """Skips a test that needs the faults test module when it was not built."""
    if not FAULTS.exists():
        pytest.skip(f"{FAULTS} not built (make -C build/tests server/faults.la)")


@pytest.fixture(autouse=True)
def fresh_copy_warnings():
    import numrpc
    numrpc.reset_copy_warnings()


@pytest.fixture
def rng():
    return np.random.default_rng(17)


def pytest_report_header(config):
    import numrpc
    return [f"numrpc package: {numrpc.__file__}", f"libnumrpc: {numrpc.library_path}"]
