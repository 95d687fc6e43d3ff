# peers.py -- what figures.py sets beside numrpc: a raw Python socket to a loopback echo process, Dask
# distributed (a LocalCluster of one worker process over TCP) and Ray (a local instance), each moving the
# same numpy bytes and running the same tasks. Dask and Ray are imported only by the classes that use them.
import logging
import os
import select
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

from echo_server import HEADER, receive_into

TIMEOUT = 120  # seconds: the bound of every wait on a peer


def identity(x):
    """The task that moves bytes: its input, returned."""
    return x


def solve(a, b):
    """The task that computes: the same system numrpc's dgesv solves."""
    return np.linalg.solve(a, b)


class RawSocket:
    """A TCP connection on 127.0.0.1 to echo_server.py, which this starts (on CPU server_cpu when given,
    where the numrpc server runs); close() stops both."""

    name = "raw socket"

    def __init__(self, server_cpu=None):
        pin = None if server_cpu is None else (lambda: os.sched_setaffinity(0, {server_cpu}))
        self.proc = subprocess.Popen([sys.executable, str(Path(__file__).with_name("echo_server.py"))],
                                     stdout=subprocess.PIPE, text=True, preexec_fn=pin)
        self.sock = None
        try:
            ready, _, _ = select.select([self.proc.stdout], [], [], 20)
            port = int(self.proc.stdout.readline()) if ready else 0
            if not port:
                raise RuntimeError("echo_server.py gave no port within 20 s")
            self.sock = socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT)
            self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        except BaseException:
            self.close()
            raise
        self.reply = bytearray(0)

    def exchange(self, x, echo):
        """Seconds to send x's bytes and receive them back (echo) or an 8-byte acknowledgement; checked."""
        data = memoryview(x).cast("B")
        size = len(data) if echo else 8
        if len(self.reply) < size:
            self.reply = bytearray(size)
        reply = memoryview(self.reply)[:size]
        start = time.perf_counter()
        self.sock.sendall(HEADER.pack(len(data), int(echo)))
        self.sock.sendall(data)
        complete = receive_into(self.sock, reply)
        seconds = time.perf_counter() - start
        same = np.array_equal(np.frombuffer(reply, np.uint8), np.frombuffer(data, np.uint8)) if echo \
            else struct.unpack("<Q", reply)[0] == len(data)
        if not complete or not same:
            raise AssertionError(f"raw socket: the {'echo' if echo else 'acknowledgement'} of {len(data)} bytes differs")
        return seconds

    def close(self):
        if self.sock is not None:
            self.sock.close()
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        self.proc.stdout.close()


class Dask:
    """A distributed LocalCluster: one worker process, one thread, TCP on 127.0.0.1, no dashboard."""

    name = "Dask"

    def __init__(self):
        import cloudpickle
        import distributed
        cloudpickle.register_pickle_by_value(sys.modules[__name__])  # the worker need not import this file
        self.cluster = distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                                                host="127.0.0.1", protocol="tcp", dashboard_address=None)
        try:
            self.client = distributed.Client(self.cluster, timeout=TIMEOUT)
        except BaseException:
            self.cluster.close()
            raise

    def run(self, task, *args):
        """task(*args) on the worker (client.submit, not cached), its result back here."""
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # "large object in task graph": passing it is the point
            return self.client.submit(task, *args, pure=False).result(timeout=TIMEOUT)

    def close(self):
        try:
            self.client.close(timeout=TIMEOUT)
        finally:
            self.cluster.close(timeout=TIMEOUT)

    @staticmethod
    def versions():
        import dask
        import distributed
        return {"dask": dask.__version__, "distributed": distributed.__version__}


class Ray:
    """A local Ray instance (num_cpus=1, no dashboard), its files in a scratch directory removed by close()."""

    name = "Ray"

    def __init__(self):
        import ray
        self.ray = ray
        ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])  # workers need not import this file
        self.scratch = tempfile.mkdtemp(prefix="numrpc-ray-")
        try:
            ray.init(num_cpus=1, include_dashboard=False, log_to_driver=False, logging_level=logging.WARNING,
                     _temp_dir=self.scratch)
        except BaseException:
            shutil.rmtree(self.scratch, ignore_errors=True)
            raise
        self.remote = {identity: ray.remote(identity), solve: ray.remote(solve)}

    def run(self, task, *args):
        """task(*args) as a Ray task, its result back here (ray.get)."""
        return self.ray.get(self.remote[task].remote(*args), timeout=TIMEOUT)

    def close(self):
        try:
            self.ray.shutdown()
        finally:
            shutil.rmtree(self.scratch, ignore_errors=True)

    @staticmethod
    def versions():
        import ray
        return {"ray": ray.__version__}


def available():
    """The peer classes whose packages import here, and a note on the others."""
    found, missing = [], []
    for cls, module in ((Dask, "distributed"), (Ray, "ray")):
        try:
            __import__(module)
            found.append(cls)
        except ImportError:
            missing.append(module)
    return found, ("" if not missing else f"{', '.join(missing)} not installed: skipped (bench/python_figures.sh installs them)")
