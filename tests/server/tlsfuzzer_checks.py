#!/usr/bin/env python3
"""tlsfuzzer_checks.py -- record-layer checks in the manner of tlsfuzzer's
TLS 1.3 scripts, run with tlslite-ng against numrpc-server's TLS port.

tlsfuzzer itself is not on PyPI (the only registry this machine reaches), so
these are our own probes built on tlslite-ng's TLS 1.3 client: a real
handshake, then records crafted through its record layer.  The "application
data" is a numrpc HELLO (numrpc-server answers it with a REPLY; tlsfuzzer's
"GET / HTTP/1.0" is no numrpc packet and gets no answer).  Each probe is named
after the tlsfuzzer script and conversation it stands for.

usage: tlsfuzzer_checks.py -p PORT [-h HOST] [--short] [-e NAME]... [NAME...]
Prints one line per probe and a table; exit status 1 when a probe failed.
"""
import argparse
import socket
import struct
import sys
import time

from tlslite.api import HandshakeSettings, TLSConnection
from tlslite.constants import AlertDescription, ContentType, HandshakeType
from tlslite.messages import Message

HELLO_NAME = b"tlsfuzz"
KEY_UPDATE = bytes([24, 0, 0, 1, 0])
KEY_UPDATE_REQUESTED = bytes([24, 0, 0, 1, 1])


def hello(call_id=7):
    """A numrpc HELLO packet: header (magic NR, version 2, type 1, call id,
    flags END, length), then version, packet size and the peer's name."""
    name = HELLO_NAME + b"\0" * ((4 - len(HELLO_NAME) % 4) % 4)
    payload = struct.pack(">III", 2, 4096, len(HELLO_NAME)) + name
    return struct.pack(">IIII", (0x4E52 << 16) | (2 << 8) | 1, call_id, 1, len(payload)) + payload


def probe_message(n, call_id=9):
    """A numrpc PROBE of n bytes asking nothing back, in packets of 4 KiB:
    u32 reply_bytes, u64 n, n bytes, padding to 8 (common/protocol.h)."""
    payload = struct.pack(">IQ", 0, n) + bytes(i % 251 for i in range(n))
    payload += b"\0" * ((8 - len(payload) % 8) % 8)
    out, per = b"", 4096 - 16
    for at in range(0, len(payload), per):
        part = payload[at:at + per]
        last = at + per >= len(payload)
        out += struct.pack(">IIII", (0x4E52 << 16) | (2 << 8) | 32, call_id, 1 if last else 0, len(part)) + part
    return out


class Closed(Exception):
    pass


class Link:
    """One TLS 1.3 connection: tlslite-ng's handshake, then records."""

    def __init__(self, host, port, suite="aes128gcm"):
        self.sock = socket.create_connection((host, port), timeout=10)
        self.conn = TLSConnection(self.sock)
        s = HandshakeSettings()
        s.minVersion = (3, 4)
        s.maxVersion = (3, 4)
        s.cipherNames = [suite]
        self.conn.handshakeClientCert(settings=s)
        self.rl = self.conn._recordLayer
        self.key_updates = 0  # the server's KeyUpdates seen
        self.app = b""

    def send(self, ctype, data, padding=0):
        """One record of ctype with data, sealed with the current keys."""
        self.rl.padding_cb = (lambda length, ct, most: padding) if padding else None
        for _ in self.rl.sendRecord(Message(ctype, bytearray(data))):
            pass
        self.rl.padding_cb = None

    def send_inner(self, inner):
        """One record whose TLSInnerPlaintext is inner exactly (no type added)."""
        body = self.rl._encryptThenSeal(bytearray(inner), ContentType.application_data)
        self.sock.sendall(bytes([23, 3, 3]) + struct.pack(">H", len(body)) + bytes(body))

    def sealed(self, data):
        """The bytes of one application-data record of data (sent by the caller)."""
        inner = bytearray(data) + bytearray([ContentType.application_data])
        body = self.rl._encryptThenSeal(inner, ContentType.application_data)
        return bytes([23, 3, 3]) + struct.pack(">H", len(body)) + bytes(body)

    def key_update(self, requested):
        """Our KeyUpdate: sent, then our write keys move on."""
        for _ in self.conn.send_keyupdate_request(1 if requested else 0):
            pass

    def record(self):
        """The next record: (type, bytes), or Closed at EOF."""
        try:
            for r in self.rl.recvRecord():
                if r in (0, 1):
                    continue
                header, parser = r
                return header.type, bytes(parser.bytes)
        except (socket.error, OSError) as e:
            raise Closed(str(e))
        except Exception as e:  # tlslite's abrupt close and decode errors
            if "Abrupt" in type(e).__name__ or "closed" in str(e).lower():
                raise Closed(str(e))
            raise
        raise Closed("no record")

    def next_event(self):
        """('app', bytes) | ('alert', level, desc) | ('closed',), handling
        tickets and the server's KeyUpdates on the way."""
        while True:
            try:
                ctype, data = self.record()
            except Closed:
                return ("closed",)
            if ctype == ContentType.handshake:
                at = 0
                while at + 4 <= len(data):
                    mtype, mlen = data[at], int.from_bytes(data[at + 1:at + 4], "big")
                    if mtype == HandshakeType.key_update:
                        if data[at + 4:at + 5] != b"\0":
                            return ("bad", "server KeyUpdate with request_update %r" % data[at + 4:at + 5])
                        self.key_updates += 1
                        c = self.conn
                        c.session.cl_app_secret, c.session.sr_app_secret = self.rl.calcTLS1_3KeyUpdate_sender(
                            c.session.cipherSuite, c.session.cl_app_secret, c.session.sr_app_secret)
                    at += 4 + mlen
                continue
            if ctype == ContentType.alert:
                return ("alert", data[0], data[1])
            if ctype == ContentType.application_data:
                return ("app", data)
            return ("bad", "record type %d" % ctype)

    def replies(self, n=1):
        """Reads n numrpc REPLY messages: True, or a string saying what came."""
        got = 0
        while True:
            while len(self.app) >= 16:
                length = struct.unpack(">I", self.app[12:16])[0]
                if len(self.app) < 16 + length:
                    break
                if self.app[3] != 7:
                    return "a packet of type %d, not a REPLY" % self.app[3]
                self.app = self.app[16 + length:]
                got += 1
                if got == n:
                    return True
            ev = self.next_event()
            if ev[0] != "app":
                return "%s after %d replies" % (describe(ev), got)
            self.app += ev[1]

    def alert(self):
        """The alert the server ends with, and then whether it closed."""
        while True:
            ev = self.next_event()
            if ev[0] != "app":
                return ev

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass


def describe(ev):
    if ev[0] == "alert":
        return "alert %s" % AlertDescription.toStr(ev[2])
    return " ".join(str(x) for x in ev)


# ---- The probes: each returns (expected, got, ok) ----

def expect_reply(link, n=1, key_updates=None):
    r = link.replies(n)
    want = "REPLY" + (" after %s KeyUpdate(s)" % key_updates if key_updates is not None else "")
    if r is not True:
        return want, r, False
    got = "REPLY after %d KeyUpdate(s)" % link.key_updates if key_updates is not None else "REPLY"
    ok = key_updates is None or (link.key_updates >= 1 if key_updates == "1+" else link.key_updates == key_updates)
    return want, got, ok


def expect_alert(link, desc):
    ev = link.alert()
    want = "alert %s" % AlertDescription.toStr(desc)
    return want, describe(ev), ev[0] == "alert" and ev[2] == desc


def p_sanity(link):
    link.send(ContentType.application_data, hello())
    return expect_reply(link)


def p_close_notify(link):
    link.send(ContentType.application_data, hello())
    r = expect_reply(link)
    if not r[2]:
        return r
    link.send(ContentType.alert, bytes([1, 0]))
    ev = link.alert()
    if ev[0] == "alert" and ev[2] == 0:
        return "close_notify or close", "close_notify", True
    return "close_notify or close", describe(ev), ev[0] == "closed"


def p_fin_between_records(link):
    link.send(ContentType.application_data, hello())
    r = expect_reply(link)
    link.sock.shutdown(socket.SHUT_WR)
    ev = link.alert()
    return "close", describe(ev), r[2] and ev[0] == "closed"


def p_fin_inside_record(link):
    rec = link.sealed(hello())
    link.sock.sendall(rec[:20])
    link.sock.shutdown(socket.SHUT_WR)
    ev = link.alert()
    return "close", describe(ev), ev[0] == "closed"


def p_zero_length(link):
    link.send(ContentType.application_data, b"")
    link.send(ContentType.application_data, hello())
    return expect_reply(link)


def p_zero_length_padded(link):
    link.send(ContentType.application_data, b"", padding=200)
    link.send(ContentType.application_data, hello())
    return expect_reply(link)


def p_zero_length_interleaved(link):
    h = hello()
    for i in range(len(h)):
        link.send(ContentType.application_data, b"")
        link.send(ContentType.application_data, h[i:i + 1])
    return expect_reply(link)


def p_fixed_padding(link):
    link.send(ContentType.application_data, hello(), padding=30)
    return expect_reply(link)


def p_max_padding(link):
    h = hello()
    link.send(ContentType.application_data, h, padding=2 ** 14 + 1 - len(h) - 1)
    return expect_reply(link)


def p_padding_over_limit(link):
    h = hello()
    link.send(ContentType.application_data, h, padding=2 ** 14 + 2 - len(h) - 1)
    return expect_alert(link, AlertDescription.record_overflow)


def p_no_content_type(link):
    link.send_inner(b"\0" * 40)
    return expect_alert(link, AlertDescription.unexpected_message)


def p_max_record(link):
    stream = probe_message(20000)
    link.send(ContentType.application_data, stream[:2 ** 14])
    link.send(ContentType.application_data, stream[2 ** 14:])
    return expect_reply(link)


def p_record_overflow_data(link):
    link.send(ContentType.application_data, b"\0" * (2 ** 14 + 1))
    return expect_alert(link, AlertDescription.record_overflow)


def p_ciphertext_overflow(link):
    link.sock.sendall(bytes([23, 3, 3]) + struct.pack(">H", 2 ** 14 + 257) + b"\x55" * (2 ** 14 + 257))
    return expect_alert(link, AlertDescription.record_overflow)


def p_key_update(requested):
    def probe(link):
        link.key_update(requested)
        link.send(ContentType.application_data, hello())
        return expect_reply(link, key_updates=1 if requested else 0)
    return probe


def p_key_update_split(link):
    h = hello()
    link.send(ContentType.application_data, h[:10])
    link.key_update(True)
    link.send(ContentType.application_data, h[10:])
    return expect_reply(link, key_updates=1)


def p_key_update_many(link):
    # RFC 8446 §4.6.3 asks for one answer before our next record; we send
    # one per request, up to 8 (tlsfuzzer's script wants all 32)
    for _ in range(32):
        link.key_update(True)
    link.send(ContentType.application_data, hello())
    return expect_reply(link, key_updates=8)


def p_key_update_raw(msg, desc):
    def probe(link):
        link.send(ContentType.handshake, msg)
        return expect_alert(link, desc)
    return probe


def p_fuzzed(pos, xor):
    def probe(link):
        rec = bytearray(link.sealed(hello()))
        at = pos if pos >= 0 else len(rec) + pos
        rec[at] ^= xor
        link.sock.sendall(bytes(rec))
        return expect_alert(link, AlertDescription.bad_record_mac)
    return probe


def p_short_tag(link):
    rec = bytearray(link.sealed(hello()))
    rec = rec[:-1]
    rec[3:5] = struct.pack(">H", len(rec) - 5)
    link.sock.sendall(bytes(rec))
    return expect_alert(link, AlertDescription.bad_record_mac)


def p_outer_type(ctype, desc):
    def probe(link):
        rec = bytearray(link.sealed(hello()))
        rec[0] = ctype
        link.sock.sendall(bytes(rec))
        return expect_alert(link, desc)
    return probe


def p_inner_type(ctype):
    def probe(link):
        link.send(ctype, b"\x01\x02")
        return expect_alert(link, AlertDescription.unexpected_message)
    return probe


def p_long_alert(link):
    link.send(ContentType.alert, bytes([1, 0, 0]))
    return expect_alert(link, AlertDescription.decode_error)


def p_plain_ccs(link):
    link.sock.sendall(bytes([20, 3, 3, 0, 1, 1]))
    return expect_alert(link, AlertDescription.unexpected_message)


AD = AlertDescription
PROBES = [
    # (tlsfuzzer script, conversation, probe, in the short set)
    ("test-tls13-conversation", "sanity", p_sanity, True),
    ("test-tls13-conversation", "close_notify answered", p_close_notify, True),
    ("(truncation)", "FIN between records, no close_notify", p_fin_between_records, True),
    ("(truncation)", "FIN inside a record", p_fin_inside_record, True),
    ("test-tls13-zero-length-data", "zero-length app data", p_zero_length, True),
    ("test-tls13-zero-length-data", "zero-length app data with padding", p_zero_length_padded, False),
    ("test-tls13-zero-length-data", "zero-len app data interleaved, 1-byte records", p_zero_length_interleaved, False),
    ("test-tls13-record-padding", "set-fixed-length-padding", p_fixed_padding, False),
    ("test-tls13-record-padding", "set-max-length-padding", p_max_padding, True),
    ("test-tls13-record-padding", "padding past 2^14+1 bytes", p_padding_over_limit, True),
    ("test-tls13-record-padding", "padding only, no content type", p_no_content_type, False),
    ("test-tls13-record-layer-limits", "max size record (2^14 bytes of a PROBE)", p_max_record, False),
    ("test-tls13-record-layer-limits", "too big record (2^14+1 bytes of data)", p_record_overflow_data, True),
    ("test-tls13-record-layer-limits", "ciphertext over 2^14+256", p_ciphertext_overflow, False),
    ("test-tls13-keyupdate", "post-handshake KeyUpdate msg with update_request", p_key_update(True), True),
    ("test-tls13-keyupdate", "post-handshake KeyUpdate msg with update_not_request", p_key_update(False), True),
    ("test-tls13-keyupdate", "app data splited, conversation with KeyUpdate msg", p_key_update_split, False),
    ("test-tls13-keyupdate", "multiple KeyUpdate messages", p_key_update_many, False),
    ("test-tls13-keyupdate", "empty KeyUpdate message", p_key_update_raw(b"\x18\0\0\0", AD.decode_error), True),
    ("test-tls13-keyupdate", "large KeyUpdate message", p_key_update_raw(b"\x18\0\0\x02\0\0", AD.decode_error), False),
    ("test-tls13-keyupdate", "KeyUpdate coalesced, two in one record",
     p_key_update_raw(KEY_UPDATE + KEY_UPDATE, AD.unexpected_message), False),
    ("test-tls13-keyupdate", "KeyUpdate cut across records",
     p_key_update_raw(KEY_UPDATE[:2], AD.unexpected_message), False),
] + [
    ("test-tls13-keyupdate", "invalid message_type - %d, in KeyUpdate msg" % t,
     p_key_update_raw(bytes([24, 0, 0, 1, t]), AD.illegal_parameter), t == 2)
    for t in range(2, 256)
] + [
    ("test-fuzzed-ciphertext", "bit %d of %s flipped" % (bit, where),
     p_fuzzed(pos, 1 << bit), bit == 0 and where == "the tag's last byte")
    for pos, where in ((5, "the ciphertext's first byte"), (12, "the ciphertext"), (-17, "the tag's first byte"),
                       (-1, "the tag's last byte"), (2, "the version"))
    for bit in (0, 7)
] + [
    ("test-fuzzed-ciphertext", "tag one byte short", p_short_tag, False),
    ("test-tls13-record-layer-limits", "encrypted record with outer type handshake",
     p_outer_type(22, AD.unexpected_message), False),
    ("test-tls13-record-layer-limits", "plaintext ChangeCipherSpec after Finished", p_plain_ccs, True),
    ("(content types)", "inner type heartbeat (24)", p_inner_type(24), False),
    ("(content types)", "inner type change_cipher_spec (20)", p_inner_type(20), False),
    ("(content types)", "inner type 99", p_inner_type(99), True),
    ("(content types)", "alert of 3 bytes", p_long_alert, False),
]


def main():
    ap = argparse.ArgumentParser(add_help=False)
    ap.add_argument("-h", dest="host", default="127.0.0.1")
    ap.add_argument("-p", dest="port", type=int, required=True)
    ap.add_argument("-e", dest="exclude", action="append", default=[])
    ap.add_argument("--short", action="store_true", help="the short set, for the test suite")
    ap.add_argument("--suite", default="aes128gcm", help="tlslite-ng cipher name (aes128gcm, aes256gcm, chacha20-poly1305)")
    ap.add_argument("names", nargs="*")
    a = ap.parse_args()
    rows, failed = [], 0
    probes = [("test-tls13-conversation", "sanity", p_sanity, True)]
    probes += [p for p in PROBES[1:] if (not a.short or p[3]) and (not a.names or p[1] in a.names)
               and p[1] not in a.exclude]
    probes += [("test-tls13-conversation", "sanity (the server survived)", p_sanity, True)]
    for script, name, probe, _ in probes:
        started = time.time()
        try:
            link = Link(a.host, a.port, a.suite)
        except Exception as e:
            want, got, ok = "handshake", "handshake failed: %s" % e, False
        else:
            try:
                want, got, ok = probe(link)
            except Exception as e:
                want, got, ok = "no exception", "%s: %s" % (type(e).__name__, e), False
            link.close()
        failed += not ok
        rows.append((script, name, want, got, ok))
        print("%-4s %-31s %-52s want %-28s got %s (%.0f ms)" % ("ok" if ok else "FAIL", script, name, want, got,
                                                               1000 * (time.time() - started)), flush=True)
    print("\n%d probes, %d passed, %d failed" % (len(rows), len(rows) - failed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
