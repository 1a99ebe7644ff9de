"""CherryPy wiring for the panel: one app, one dispatcher, one server we own.

Every request, whatever its path or method, goes to `panel.Panel.handle`;
this file only translates between CherryPy and that pure function.

Unlike the prometheus module we do not start `cherrypy.engine`: when a start
listener fails (say the port is taken) the engine calls `os._exit`, which in
ceph-mgr would take the whole daemon down (prometheus patches `os._exit` to
survive that).  We run the CherryPy application on its own HTTP server
(cheroot, CherryPy's server) instead: a bind error is an exception we
report, and start/stop/rebind touch nothing global.
"""
import ipaddress
import threading
from typing import Any, Dict, Optional, Tuple

import cherrypy
from cherrypy._cprequest import Request
from cheroot import wsgi

from .panel import Panel, Response


class _RawQueryRequest(Request):
    """The panel parses the raw query string itself (to answer 400, not 404)."""

    def process_query_string(self) -> None:
        self.params: Dict[str, Any] = {}


class _Root:
    """Every path lands on `default` (CherryPy's catch-all); the panel routes."""

    def __init__(self, panel: Panel, log: Any) -> None:
        self.panel = panel
        self.log = log

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


class PanelServer:
    """The HTTP server thread: start, stop, and rebind when the address changes."""

    def __init__(self, panel: Panel, log: Any) -> None:
        self.app = build_app(panel, log)
        self.log = log
        self.bound: Optional[Tuple[str, int]] = None  # where it listens
        self._wanted: Optional[Tuple[str, int]] = None  # what it was asked for
        self._server: Optional[wsgi.Server] = None
        self._thread: Optional[threading.Thread] = None
        self._lock = threading.Lock()

    def ensure(self, host: str, port: int) -> bool:
        """Serve on host:port (re-binding if it moved); True if it now listens there.

        A bind error is logged and leaves the server stopped: the caller
        retries on its next pass, so a port freed later is picked up.
        """
        with self._lock:
            if self._server is not None and self._wanted == (host, port):
                return True
            self._stop()
            server = wsgi.Server((host, port), self.app, numthreads=4,
                                 server_name='rocks_autotune')
            try:
                server.prepare()  # binds here, so the error is ours to report
            except Exception as e:
                self.log.error('panel: cannot listen on %s: %s', url(host, port), e)
                return False
            t = threading.Thread(target=server.serve, name='rocks_autotune-http',
                                 daemon=True)
            t.start()
            self._server, self._thread, self._wanted = server, t, (host, port)
            real = server.bind_addr  # port 0 (tests) picks a free one
            self.bound = (host, int(real[1]) if isinstance(real, tuple) else port)
            self.log.info('panel: serving %s', url(*self.bound))
            return True

    def stop(self) -> None:
        with self._lock:
            self._stop()

    def _stop(self) -> None:
        server, thread = self._server, self._thread
        self._server = self._thread = None
        self.bound = self._wanted = None
        if server is not None:
            server.stop()
        if thread is not None:
            thread.join(10)
