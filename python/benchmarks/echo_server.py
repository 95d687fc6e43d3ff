# echo_server.py -- the raw-socket peer of figures.py: a loopback process that reads a length and that
# many bytes, then sends them back (round trip) or an 8-byte acknowledgement (one way). Prints its port.
#   python3 echo_server.py      (serves one connection at a time; exits after IDLE_SECONDS without one)
import socket
import struct
import sys

HEADER = struct.Struct("<QQ")  # bytes that follow, 1 = echo them back / 0 = acknowledge with 8 bytes
MAX_BYTES = 1 << 30
IDLE_SECONDS = 120


def receive_into(conn, view):
    """Fills view from conn; False on EOF before it is full."""
    done = 0
    while done < len(view):
        got = conn.recv_into(view[done:])
        if not got:
            return False
        done += got
    return True


def serve(conn):
    """Answers requests on conn until its peer closes it."""
    buffer = bytearray(0)
    header = bytearray(HEADER.size)
    while receive_into(conn, memoryview(header)):
        length, echo = HEADER.unpack(header)
        if length > MAX_BYTES or echo not in (0, 1):
            raise ValueError(f"echo_server: refused request of {length} bytes, echo flag {echo}")
        if len(buffer) < length:
            buffer = bytearray(length)
        view = memoryview(buffer)[:length]
        if not receive_into(conn, view):
            return
        conn.sendall(view if echo else struct.pack("<Q", length))


def main():
    with socket.create_server(("127.0.0.1", 0)) as listener:
        listener.settimeout(IDLE_SECONDS)
        print(listener.getsockname()[1], flush=True)
        while True:
            try:
                conn, _ = listener.accept()
            except socket.timeout:
                return 0
            with conn:
                conn.settimeout(IDLE_SECONDS)
                conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                serve(conn)


if __name__ == "__main__":
    sys.exit(main())
