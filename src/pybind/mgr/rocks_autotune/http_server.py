"""CherryPy wiring for the panel on a cheroot server of its own (never
cherrypy.engine), built for hostile clients.
Design: doc/dev/internals.rst, dev-internals-panel-server."""
import ipaddress
import re
import socket
import threading
import time
from dataclasses import dataclass
from typing import Any, Dict, Optional, Tuple

import cherrypy
from cherrypy._cprequest import Request
from cheroot import makefile, server as cheroot_server, wsgi

from .panel import Panel, Response


class _RawQueryRequest(Request):
    """The panel parses the raw query string itself (to answer 400, not 404)."""

    def process_query_string(self) -> None:
        self.params: Dict[str, Any] = {}


@dataclass
class _Root:
    """Every path lands on `default` (CherryPy's catch-all); the panel routes."""
    panel: Panel
    log: Any

    @cherrypy.expose
    def default(self, *vpath: str, **params: str) -> bytes:
        req = cherrypy.request
        try:
            r = self.panel.handle(req.method, req.path_info or '/', req.query_string or '')
        except Exception:  # never a traceback (or anything else internal) to a client
            self.log.exception('panel: %s %s failed', req.method, req.path_info)
            r = Response(500, b'internal error\n')
        cherrypy.response.status = r.status
        for k, v in r.all_headers().items():
            cherrypy.response.headers[k] = v
        return r.body


def build_app(panel: Panel, log: Any) -> cherrypy.Application:
    app = cherrypy.Application(_Root(panel, log), '', {'/': {
        'request.process_request_body': False,  # read-only: bodies are never read
        'request.show_tracebacks': False,
        'request.show_mismatched_params': False,
        'tools.trailing_slash.on': False,  # no redirects: a path is served or 404
        'response.headers.server': 'rocks_autotune',
        'log.screen': False, 'log.access_file': '', 'log.error_file': '',
    }})
    app.request_class = _RawQueryRequest
    # CherryPy's global loggers print to stdout; ours go to the mgr log only
    app.log.access_log.propagate = False
    app.log.error_log.propagate = False
    return app


def url(host: str, port: int) -> str:
    try:
        if ipaddress.ip_address(host).version == 6:
            host = f'[{host}]'
    except ValueError:
        pass  # a host name
    return f'http://{host}:{port}/'


# the end of a request head; bare LFs too, which cheroot answers 400 at once
_HEAD_END = re.compile(rb'\r?\n\r?\n')


class _HeadFirst(socket.SocketIO):
    """The connection's socket, read after the head the gate already took from it."""

    def __init__(self, sock: socket.socket, head: bytes) -> None:
        super().__init__(sock, 'rb')
        self.head = head

    def readinto(self, b: Any) -> Optional[int]:
        if self.head:
            n = min(len(b), len(self.head))
            b[:n] = self.head[:n]
            self.head = self.head[n:]
            return n
        return super().readinto(b)


class _HeadFirstReader(makefile.StreamReader):
    """cheroot's reader (it counts bytes read), over `_HeadFirst`."""

    def __init__(self, raw: _HeadFirst, bufsize: int) -> None:
        # skip StreamReader.__init__: it would wrap the bare socket
        super(makefile.StreamReader, self).__init__(raw, bufsize)
        self.bytes_read = 0


class _Connection(cheroot_server.HTTPConnection):
    """A connection, with the gate's state and the server's count of open ones."""

    def __init__(self, server: '_GatedServer', sock: socket.socket, *args: Any) -> None:
        super().__init__(server, sock, *args)
        self.accepted = time.time()
        self.head = bytearray()
        self.seen = False  # by the gate
        self.refused = False  # answered by the gate: what else comes is discarded
        server.count(+1)
        self._counted = True

    def close(self) -> None:
        if self._counted:
            self._counted = False
            self.server.count(-1)
        super().close()


class _GatedServer(wsgi.Server):
    """cheroot's WSGI server with a gate between its selector and its workers.

    cheroot's workers block reading a head with a timeout every byte resets,
    and buffer it whole: a few trickling sockets hold every worker, and a
    200 MiB request line cost ceph-mgr 2 GiB.  Here the selector thread reads
    heads without blocking, up to max_header, and a worker gets a connection
    only with its head complete.  A connection with none `timeout` s after its
    accept is closed by cheroot's expiry; one over the limits is answered 414,
    431 (the gate), 413 (cheroot, a body) or 503 (max_connections).  No
    keep-alive, so every request's head passes the gate.
    """

    keep_alive_conn_limit = 0

    def __init__(self, bind_addr: Tuple[str, int], app: Any, max_header: int, max_body: int,
                 max_connections: int, timeout: int) -> None:
        super().__init__(bind_addr, app, numthreads=4, server_name='rocks_autotune',
                         request_queue_size=64,  # listen backlog: a burst is not dropped
                         timeout=timeout)
        self.ConnectionClass = _Connection
        self.max_header = max_header
        self.max_connections = max_connections
        # cheroot's own limits: a body is refused on its Content-Length or as it is read
        self.max_request_header_size = max_header
        self.max_request_body_size = max_body
        self._open = 0
        self._open_lock = threading.Lock()
        self._scratch = bytearray(64 << 10)  # what a refused client still sends goes here

    def count(self, delta: int) -> None:
        with self._open_lock:
            self._open += delta

    def process_conn(self, conn: Any) -> None:
        """cheroot's selector thread: a new connection, or a waiting one readable."""
        try:
            self._gate(conn)
        except OSError:
            conn.close()

    def _gate(self, conn: _Connection) -> None:
        if not conn.seen:
            conn.seen = True
            conn.socket.settimeout(0)  # the gate never blocks
            if self._open > self.max_connections:
                self._answer(conn, '503 Service Unavailable')
                conn.close()  # at once: holding it would defeat the cap
                return
        # a head end that the new bytes complete starts at most 3 bytes before them:
        # searching from there keeps a head trickled byte by byte linear
        scan_from = max(0, len(conn.head) - 3)
        try:
            if conn.refused:
                got = conn.socket.recv_into(self._scratch)
            else:
                # never more than one byte over the limit is held
                data = conn.socket.recv(self.max_header + 1 - len(conn.head))
                conn.head += data
                got = len(data)
        except BlockingIOError:
            self._wait(conn)
            return
        if not got:  # the client closed
            conn.close()
            return
        end = _HEAD_END.search(conn.head, scan_from)
        if end is not None and end.end() <= self.max_header:
            self._dispatch(conn)
        elif len(conn.head) <= self.max_header:  # more to come (a refused one's head stays empty)
            self._wait(conn)
        else:
            self._refuse(conn)

    def _refuse(self, conn: _Connection) -> None:
        self._answer(conn, '431 Request Header Fields Too Large' if b'\n' in conn.head
                     else '414 URI Too Long')
        # FIN after the answer; what the client is still sending is read and dropped
        # until it closes or the deadline, so that no reset loses it the answer
        conn.socket.shutdown(socket.SHUT_WR)
        conn.refused, conn.head = True, bytearray()
        self._wait(conn)

    def _wait(self, conn: _Connection) -> None:
        """Back to the selector until readable, the deadline still counted from the accept."""
        self.put_conn(conn)
        conn.last_used = conn.accepted

    def _dispatch(self, conn: _Connection) -> None:
        conn.rfile.close()
        conn.rfile = _HeadFirstReader(_HeadFirst(conn.socket, bytes(conn.head)), conn.rbufsize)
        conn.head = bytearray()
        conn.socket.settimeout(self.timeout)
        super().process_conn(conn)

    @staticmethod
    def _answer(conn: _Connection, status: str) -> None:
        body = status.split(' ', 1)[1] + '\n'
        conn.socket.send((f'HTTP/1.1 {status}\r\nContent-Type: text/plain\r\n'
                          f'Content-Length: {len(body)}\r\nConnection: close\r\n\r\n'
                          f'{body}').encode('ascii'))


class PanelServer:
    """The HTTP server thread: start, stop, and rebind when the address changes."""

    MAX_HEADER_BYTES = 16 << 10  # request line and headers; browsers send under 2 KiB
    MAX_BODY_BYTES = 4 << 10  # never read: small ones pass to get the panel's 405, not 413
    MAX_CONNECTIONS = 128  # open at once; more are answered 503 and closed
    TIMEOUT = 5  # seconds: for a whole request head from the accept; per send/recv after

    def __init__(self, panel: Panel, log: Any) -> None:
        self.app = build_app(panel, log)
        self.log = log
        self.bound: Optional[Tuple[str, int]] = None  # where it listens
        self._wanted: Optional[Tuple[str, int]] = None  # what it was asked for
        self._running: Optional[Tuple[_GatedServer, threading.Thread]] = None
        self._lock = threading.RLock()  # ensure stops under it

    def ensure(self, host: str, port: int) -> bool:
        """Serve on host:port (re-binding if it moved); True if it now listens there.
        A bind error is logged and leaves it stopped, for the caller's next pass."""
        with self._lock:
            if self._running is not None and self._wanted == (host, port):
                return True
            self.stop()
            server = _GatedServer((host, port), self.app, self.MAX_HEADER_BYTES,
                                  self.MAX_BODY_BYTES, self.MAX_CONNECTIONS, self.TIMEOUT)
            try:
                server.prepare()  # binds here, so the error is ours to report
            except Exception as e:
                self.log.error('panel: cannot listen on %s: %s', url(host, port), e)
                return False
            thread = threading.Thread(target=server.serve, name='rocks_autotune-http', daemon=True)
            thread.start()
            self._running, self._wanted = (server, thread), (host, port)
            real = server.bind_addr  # port 0 (tests) picks a free one
            self.bound = (host, int(real[1]) if isinstance(real, tuple) else port)
            self.log.info('panel: serving %s', url(*self.bound))
            return True

    def stop(self) -> None:
        with self._lock:
            running, self._running = self._running, None
            self.bound = self._wanted = None
            if running is not None:
                server, thread = running
                server.stop()
                thread.join(10)
