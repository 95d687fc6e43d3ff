# test_events.py -- numrpc.events(): iterating over a real metaserver's events while a real
# numrpc-server joins and leaves; a filter by type; errors raised from next().
import json
import os
import signal
import subprocess
import tempfile
import time

import pytest

import numrpc
from conftest import BUILD, Server


class Metaserver:
    """A numrpc-metaserver on a free port of 127.0.0.1, stopped by pid."""

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="numrpc-pytest-meta-")
        port_file = os.path.join(self.dir, "port")
        self.proc = subprocess.Popen([str(BUILD / "metaserver" / "numrpc-metaserver"), "--port", "0", "--quiet",
                                      "--drop-after", "2", "--port-file", port_file])
        deadline = time.monotonic() + 10
        port = ""
        while not port and time.monotonic() < deadline and self.proc.poll() is None:
            time.sleep(0.02)
            if os.path.exists(port_file):
                port = open(port_file).read().strip()
        assert port, "numrpc-metaserver did not start"
        self.address = f"127.0.0.1:{port}"

    def subscribers(self):
        out = subprocess.run([str(BUILD / "cli" / "numrpc"), "status", "--metaserver", self.address, "--json"],
                             capture_output=True, text=True, timeout=10)
        return json.loads(out.stdout)["subscribers"] if out.returncode == 0 else -1

    def stop(self):
        os.kill(self.proc.pid, signal.SIGTERM)
        self.proc.wait(timeout=10)


@pytest.fixture
def metaserver():
    m = Metaserver()
    yield m
    m.stop()


def test_events_sees_a_server_join_and_leave(metaserver, stub_dir):
    events = numrpc.events(metaserver=metaserver.address, types=["join", "leave"], timeout=20)
    for _ in range(250):  # the subscription is made in the background: wait for it (bounded)
        if metaserver.subscribers() == 1:
            break
        time.sleep(0.02)
    assert metaserver.subscribers() == 1
    server = Server(stub_dir, workers=1, extra=["--metaserver", metaserver.address])
    try:
        joined = next(events)
        assert (joined.type, joined.server) == ("join", server.address)
        assert joined.name.startswith("numrpc-server pid ")
        assert abs(joined.time - time.time()) < 60
    finally:
        server.stop()
    left = next(events)
    assert (left.type, left.server, left.detail) == ("leave", server.address, "connection closed")
    events.close()


def test_events_errors_come_from_next():
    with pytest.raises(numrpc.BadArgument, match='unknown event type "joins"'):
        next(numrpc.events(metaserver="127.0.0.1:1", types="joins"))
    with pytest.raises(numrpc.CannotConnect):
        next(numrpc.events(metaserver="127.0.0.1:1", timeout=5))
