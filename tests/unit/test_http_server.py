"""The panel's HTTP server under hostile clients: the real PanelServer on 127.0.0.1.

What ceph-mgr must survive from anyone who can reach the mgr's address: a
huge request line or header (memory), a huge body, sockets that trickle a
head and never finish it or send nothing at all (worker starvation), and a
flood of connections.
"""
import http.client
import socket
import threading
import time
from typing import Any, Iterator, List, Optional, Tuple

import pytest

import mgr_mock
from mgr_mock import Log

mgr_mock.install()
from rocks_autotune import panel  # noqa: E402
from rocks_autotune.http_server import PanelServer  # noqa: E402

MiB = 1 << 20


@pytest.fixture
def port() -> Iterator[int]:
    server = PanelServer(panel.Panel(lambda: panel.Snapshot()), Log())
    assert server.ensure('127.0.0.1', 0) and server.bound
    try:
        yield server.bound[1]
    finally:
        server.stop()


def vm_rss() -> int:
    """This process's resident set, in bytes (the server runs in it)."""
    with open('/proc/self/status') as f:
        for line in f:
            if line.startswith('VmRSS:'):
                return int(line.split()[1]) * 1024
    raise AssertionError('no VmRSS in /proc/self/status')


class PeakRss:
    """The highest VmRSS seen while the block runs (sampled every 10 ms)."""

    def __enter__(self) -> 'PeakRss':
        self.before = self.peak = vm_rss()
        self._stop = threading.Event()
        self._t = threading.Thread(target=self._sample, daemon=True)
        self._t.start()
        return self

    def _sample(self) -> None:
        while not self._stop.wait(0.01):
            self.peak = max(self.peak, vm_rss())

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        self._t.join()
        self.peak = max(self.peak, vm_rss())

    @property
    def rise(self) -> int:
        return self.peak - self.before


def connect(port: int, timeout: float = 10) -> socket.socket:
    return socket.create_connection(('127.0.0.1', port), timeout=timeout)


def read_response(s: socket.socket) -> Tuple[int, bytes]:
    """Status and raw head of the answer on a socket the test wrote by hand."""
    r = http.client.HTTPResponse(s)
    r.begin()
    return r.status, r.read()


def get(port: int, path: str = '/metrics', timeout: float = 10) -> Tuple[int, float]:
    """A normal client's GET: its status and how long it took."""
    t0 = time.monotonic()
    c = http.client.HTTPConnection('127.0.0.1', port, timeout=timeout)
    try:
        c.request('GET', path)
        r = c.getresponse()
        r.read()
        return r.status, time.monotonic() - t0
    finally:
        c.close()


def closed_by_server(s: socket.socket, wait: float) -> bool:
    """True once the server has closed its end (EOF or reset) within `wait` seconds."""
    s.settimeout(wait)
    try:
        while True:
            if not s.recv(65536):
                return True
    except (ConnectionResetError, BrokenPipeError):
        return True
    except socket.timeout:
        return False


def all_closed(socks: List[socket.socket], within: float) -> List[int]:
    """Indexes of the sockets the server has not closed `within` seconds from now."""
    deadline = time.monotonic() + within
    return [i for i, s in enumerate(socks)
            if not closed_by_server(s, max(0.01, deadline - time.monotonic()))]


# ---------------------------------------------------------------- size limits

def test_a_200_mib_request_line_is_refused_without_buffering_it(port: int) -> None:
    chunk = b'a' * MiB  # one buffer sent 200 times: the client itself holds 1 MiB
    with PeakRss() as rss:
        t0 = time.monotonic()
        s = connect(port, timeout=60)
        try:
            s.sendall(b'GET /')
            try:
                for _ in range(200):
                    s.sendall(chunk)
                s.sendall(b' HTTP/1.1\r\nHost: x\r\n\r\n')
            except (BrokenPipeError, ConnectionResetError):
                pass  # also a refusal, checked below: the answer must still be there
            status, _ = read_response(s)
        finally:
            s.close()
        took = time.monotonic() - t0
    assert status == 414
    assert took < 30, took
    assert rss.rise < 50 * MiB, f'RSS rose {rss.rise / MiB:.0f} MiB'
    assert get(port)[0] == 200  # and the server still serves


def test_an_oversize_request_line_or_header_is_4xx_at_once(port: int) -> None:
    limit = PanelServer.MAX_HEADER_BYTES
    for head, want in ((b'GET /' + b'a' * limit + b' HTTP/1.1\r\n\r\n', 414),
                       (b'GET /metrics HTTP/1.1\r\nX-Big: ' + b'b' * limit + b'\r\n\r\n', 431)):
        t0 = time.monotonic()
        with connect(port) as s:
            s.sendall(head)
            status, _ = read_response(s)
        assert status == want and time.monotonic() - t0 < 2, (want, status)
    # a head just under the limit is still served
    with connect(port) as s:
        s.sendall(b'GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: ' + b'b' * (limit - 100)
                  + b'\r\n\r\n')
        assert read_response(s)[0] == 200


def test_a_body_over_the_limit_is_refused_unread(port: int) -> None:
    for method in (b'GET', b'POST'):
        t0 = time.monotonic()
        with connect(port) as s:
            # the head announces 100 MiB; none of it is sent: refused on the head alone
            s.sendall(method + b' /api/status HTTP/1.1\r\nHost: x\r\n'
                      b'Content-Length: %d\r\n\r\n' % (100 * MiB))
            status, _ = read_response(s)
        assert status == 413 and time.monotonic() - t0 < 2, (method, status)
    # a small body is not refused for its size: POST still gets the panel's 405
    c = http.client.HTTPConnection('127.0.0.1', port, timeout=10)
    try:
        c.request('POST', '/api/status', body=b'{"state": "aborted"}')
        assert c.getresponse().status == 405
    finally:
        c.close()


# ---------------------------------------------------------------- slow and idle clients

class Trickler:
    """Sockets that send a request head a few bytes at a time and never finish it."""

    def __init__(self, port: int, n: int, every: float = 0.2) -> None:
        self.socks = [connect(port) for _ in range(n)]
        for s in self.socks:
            s.sendall(b'GET /metrics HTTP/1.1\r\nHost: x\r\n')
        self.every = every
        self._stop = threading.Event()
        self._t = threading.Thread(target=self._run, daemon=True)
        self._t.start()

    def _run(self) -> None:
        while not self._stop.wait(self.every):
            for s in self.socks:
                try:
                    s.send(b'X-A: b\r\n')  # a whole header line each time: never the blank line
                except OSError:
                    pass  # closed by the server: what the deadline test waits for

    def stop(self) -> None:
        self._stop.set()
        self._t.join()

    def close(self) -> None:
        self.stop()
        for s in self.socks:
            s.close()


def test_50_slow_sockets_neither_starve_a_normal_request_nor_live_forever(port: int) -> None:
    slow = Trickler(port, 50)
    try:
        time.sleep(1.0)  # every slow socket accepted and trickling
        opened = time.monotonic() - 1.0
        status, took = get(port)
        assert status == 200 and took < 2, f'{status} after {took:.1f}s'
        # answered while the server still held every one of them
        assert not [s for s in slow.socks if closed_by_server(s, 0.01)]
        # each trickle resets a per-recv timeout; the head has a deadline of its own
        left = all_closed(slow.socks, within=opened + PanelServer.TIMEOUT + 2 - time.monotonic())
        assert not left, f'{len(left)} slow sockets still open after the deadline'
    finally:
        slow.close()
    assert get(port)[0] == 200


def test_idle_connections_hold_no_worker_and_are_closed(port: int) -> None:
    idle = [connect(port) for _ in range(50)]
    try:
        opened = time.monotonic()
        time.sleep(0.5)
        status, took = get(port)
        assert status == 200 and took < 2, f'{status} after {took:.1f}s'
        assert not [s for s in idle if closed_by_server(s, 0.01)]
        left = all_closed(idle, within=opened + PanelServer.TIMEOUT + 2 - time.monotonic())
        assert not left, f'{len(left)} idle sockets still open after the deadline'
    finally:
        for s in idle:
            s.close()


def test_connections_over_the_cap_are_turned_away_at_once(port: int) -> None:
    cap = PanelServer.MAX_CONNECTIONS
    held = [connect(port) for _ in range(cap)]
    extra: Optional[socket.socket] = None
    try:
        time.sleep(0.5)  # all accepted
        t0 = time.monotonic()
        extra = connect(port)
        extra.sendall(b'GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n')
        status, _ = read_response(extra)
        assert status == 503 and time.monotonic() - t0 < 2
    finally:
        for s in held + ([extra] if extra else []):
            s.close()
    # the held ones are gone: the panel answers again
    deadline = time.monotonic() + 5
    while get(port)[0] != 200:
        assert time.monotonic() < deadline, 'the panel did not recover from the cap'
        time.sleep(0.2)


def test_a_head_sent_byte_by_byte_is_served(port: int) -> None:
    # the head's end arrives split over reads: the gate must still see it
    with connect(port) as s:
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        for b in b'GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n':
            s.send(bytes([b]))
            time.sleep(0.005)
        assert read_response(s)[0] == 200


def test_responses_close_the_connection(port: int) -> None:
    # no keep-alive: each connection carries one request, so every request
    # head goes through the same gate and deadline
    with connect(port) as s:
        s.sendall(b'GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n')
        r = http.client.HTTPResponse(s)
        r.begin()
        r.read()
        assert r.status == 200 and r.getheader('Connection') == 'close'
        assert closed_by_server(s, 2)
