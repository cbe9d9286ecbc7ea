"""`serve`: one warm backend, many requests, over stdio (JSON lines) or HTTP (POST, JSON bodies).

Over stdio requests are answered one at a time, in order. Over HTTP each request has a thread and
the backend (`pool.Workers`) decides what runs at once: one job per device, so candidates are never
timed side by side on one device. The HTTP server runs code sent to it, so it is guarded: a bearer
token (`XEFORGE_HARNESS_TOKEN`) checked before a body is read, a body size limit checked before it is
read, no paths (a request carries its files), and no listening beyond loopback without a token.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import json
import os
import secrets
import signal
import socket
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from . import __version__, compat, service
from . import protocol as P
from .pool import Backend, make_backend

COMMANDS = ("evaluate", "sweep", "probe", "ping", "shutdown")
TOKEN_ENV = "XEFORGE_HARNESS_TOKEN"
# Bodies carry the kernel, candidates, spec and reference as text: a sweep of 64 candidates of a large
# kernel file fits; anything bigger is refused (HTTP 413) before it is read.
DEFAULT_MAX_BODY = 8 * 1024 * 1024
_STALL_S = 60  # a client that sends nothing for this long is dropped
_DRAIN_S = 2.0  # after a refusal, unread bytes are discarded this long, so the client reads the reply


class Served:
    """How many jobs each command started: `ping` reports it, so a test can see a refused request ran nothing."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.counts = {"evaluate": 0, "sweep": 0, "probe": 0}

    def started(self, command: str) -> None:
        with self._lock:
            self.counts[command] += 1

    def snapshot(self) -> dict:
        with self._lock:
            return dict(self.counts)


def handle(request: object, workers: Backend, *, paths_allowed: bool = True, served: Served | None = None) -> tuple[dict, bool]:
    """One request object → (response, stop?). The response echoes `id`."""
    if not isinstance(request, dict):
        return P.error_result("a request must be a JSON object"), False
    rid = request.get("id")
    command = request.get("command")
    args = request.get("args", {})
    stop = False
    mismatch = compat.server_mismatch()
    if mismatch and command not in ("ping", "shutdown"):
        return {"id": rid, **P.error_result(mismatch, field="version")}, False
    if command in ("evaluate", "sweep", "probe") and served is not None:
        served.started(command)
    if command == "evaluate":
        response = service.evaluate(args, workers, paths_allowed=paths_allowed)
    elif command == "sweep":
        response = service.sweep(args, workers, paths_allowed=paths_allowed)
    elif command == "probe":
        response = service.probe(args, workers)
    elif command == "ping":
        response = _ping(workers, served)
    elif command == "shutdown":
        response, stop = {"ok": True}, True
    else:
        response = P.error_result(f"unknown command {command!r} (expected one of {', '.join(COMMANDS)})", field="command")
    return {"id": rid, **response}, stop


def _ping(workers: Backend, served: Served | None) -> dict:
    out = {"ok": True, "version": __version__, "workers": workers.info()}
    if served is not None:
        out["served"] = served.snapshot()
    return out


def _warm(workers) -> None:
    """Start the workers the first request will most likely need, before it arrives."""
    try:
        kind, failure = workers.resolve("auto")
        if kind is None:
            raise RuntimeError((failure or {}).get("error", "no device"))
        workers.warm(kind)
    except (RuntimeError, OSError, ValueError) as e:
        # Keep serving: every evaluate will report the failure as an `error` verdict.
        print(f"xeforge_harness: worker did not start: {e}", file=sys.stderr)


def _protocol_stdout():
    """The protocol's own stream on the original stdout; fd 1 (and `sys.stdout`) become stderr, so that
    nothing a library prints or logs there (Ray's driver writes worker deaths to fd 1) reaches a client
    as a line of the protocol."""
    sys.stdout.flush()
    out = os.fdopen(os.dup(1), "w", buffering=1, encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return out


def serve_stdio(workers: Backend, out=None) -> int:
    out = out or sys.stdout
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        try:
            request = json.loads(line)
        except ValueError as e:
            response, stop = {"id": None, **P.error_result(f"request is not JSON: {e}")}, False
        else:
            response, stop = handle(request, workers)
        out.write(P.dumps(response) + "\n")
        out.flush()
        if stop:
            break
    return 0


def is_loopback(host: str) -> bool:
    """Whether every address `host` names is a loopback one (a name is resolved; unresolvable is not)."""
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        pass
    try:
        infos = socket.getaddrinfo(host, None)
    except OSError:
        return False
    return bool(infos) and all(ipaddress.ip_address(str(i[4][0]).split("%", 1)[0]).is_loopback for i in infos)


class _Token:
    """The expected bearer token, kept only as a digest and compared in constant time."""

    def __init__(self, token: str):
        self._digest = hashlib.sha256(token.encode()).digest()

    def accepts(self, authorization: str | None) -> bool:
        scheme, _, value = (authorization or "").strip().partition(" ")
        # Digests of equal length: the comparison time does not depend on where, or whether, they differ.
        given = hashlib.sha256(value.strip().encode()).digest()
        return hmac.compare_digest(given, self._digest) and scheme.lower() == "bearer"


def _address(address: str, token: str | None) -> tuple[str, int] | dict:
    """(host, port) to listen on, or the `error` result that refuses it."""
    host, _, port_text = address.rpartition(":")
    try:
        port = int(port_text)
    except ValueError:
        return P.error_result(f"--http expects HOST:PORT, got {address!r}", field="http")
    host = host.strip("[]") or "127.0.0.1"
    if not token and not is_loopback(host):
        return P.error_result(
            f"refusing to listen on {host}, which is not a loopback address, without a token: every request runs "
            f"code on this machine. Set {TOKEN_ENV} (clients send it as a bearer token), or bind 127.0.0.1",
            field="http",
        )
    return host, port


def serve_http(workers: Backend, address: str, token: str | None, max_body: int = DEFAULT_MAX_BODY, out=None) -> int:
    out = out or sys.stdout
    where = _address(address, token)
    if isinstance(where, dict):
        print(json.dumps(where), file=out, flush=True)
        return 2
    host, port = where
    # Every request is authenticated, on loopback too (another local user could reach the port): with
    # no token set, one is made for this run and handed to whoever started the server, once, in the
    # `listening` line on its stdout; it is never logged.
    generated = None
    if not token:
        token = generated = secrets.token_urlsafe(32)
        print(f"xeforge_harness: {TOKEN_ENV} is not set: made a token for this run (in the `listening` line on stdout)", file=sys.stderr)
    auth = _Token(token)
    served = Served()

    class Handler(BaseHTTPRequestHandler):
        server_version = f"xeforge-harness/{__version__}"
        timeout = _STALL_S

        def _reply(self, status: int, body: dict, headers: tuple[tuple[str, str], ...] = ()) -> None:
            data = (P.dumps(body) + "\n").encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, value in headers:
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

        def _refuse(self, status: int, message: str, headers: tuple[tuple[str, str], ...] = ()) -> None:
            """Answer without reading the body, then discard what the client still sends (bounded), so
            that it reads the answer instead of a reset connection. Nothing of the body is looked at."""
            self.close_connection = True
            self._reply(status, {"id": None, **P.error_result(message)}, (("Connection", "close"), *headers))
            self.wfile.flush()
            self._drain()

        def _drain(self) -> None:
            try:
                left = min(int(self.headers.get("Content-Length") or 0), max_body + (1 << 20))
            except ValueError:
                left = 0
            try:
                self.connection.settimeout(_DRAIN_S)
                while left > 0:
                    chunk = self.rfile.read1(min(left, 1 << 16)) if hasattr(self.rfile, "read1") else self.rfile.read(min(left, 1 << 16))
                    if not chunk:
                        break
                    left -= len(chunk)
            except OSError:
                pass

        def _authorized(self) -> bool:
            if auth.accepts(self.headers.get("Authorization")):
                return True
            self._refuse(401, f"unauthorized: this harness wants the bearer token of its {TOKEN_ENV}", (("WWW-Authenticate", "Bearer"),))
            return False

        def do_GET(self) -> None:  # noqa: N802  (http.server's naming)
            if not self._authorized():
                return
            if self.path.rstrip("/") == "/ping":
                self._reply(200, _ping(workers, served))
            else:
                self._reply(404, P.error_result(f"no such endpoint: GET {self.path}"))

        def do_POST(self) -> None:  # noqa: N802
            if not self._authorized():  # before anything of the body is read
                return
            command = self.path.strip("/")
            if command and command not in COMMANDS:
                self._refuse(404, f"no such endpoint: POST {self.path}")
                return
            if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
                self._refuse(411, "a request body needs a Content-Length")
                return
            try:
                length = int(self.headers.get("Content-Length") or 0)
            except ValueError:
                self._refuse(400, "Content-Length is not a number")
                return
            if length > max_body:
                self._refuse(413, f"request body of {length} bytes is over this harness's limit of {max_body} (serve --max-body)")
                return
            raw = self.rfile.read(length) if length > 0 else b"{}"
            try:
                body = json.loads(raw or b"{}")
            except ValueError as e:
                self._reply(400, {"id": None, **P.error_result(f"request body is not JSON: {e}")})
                return
            if not command:
                # POST / takes the stdio request object as it is: {"id", "command", "args"}.
                request = body
            elif isinstance(body, dict) and "args" in body:
                # POST /evaluate (or /probe ...) takes a request without `command` ...
                request = {"id": body.get("id"), "command": command, "args": body["args"]}
            else:
                # ... or just the `args` object.
                request = {"id": None, "command": command, "args": body}
            response, stop = handle(request, workers, paths_allowed=False, served=served)
            self._reply(200, response)
            if stop:
                # shutdown() waits for serve_forever to return, so not from this (a request's) thread's caller.
                threading.Thread(target=self.server.shutdown, daemon=True).start()

        def log_message(self, fmt: str, *args) -> None:
            # The request line and status only: headers (the token) are never logged.
            print(f"xeforge_harness http: {fmt % args}", file=sys.stderr)

    server_class = _V6Server if ":" in host else ThreadingHTTPServer
    server = server_class((host, port), Handler)
    scheme_host = f"[{host}]" if ":" in host else host
    listening = {"listening": f"http://{scheme_host}:{server.server_address[1]}"}
    if generated:
        listening["token"] = generated
    print(json.dumps(listening), file=out, flush=True)
    try:
        server.serve_forever(poll_interval=0.2)
    finally:
        server.server_close()
    return 0


def _terminate(signum, frame) -> None:
    raise SystemExit(128 + signum)


class _V6Server(ThreadingHTTPServer):
    address_family = socket.AF_INET6


def main(http: str | None, max_body: int = DEFAULT_MAX_BODY, cpu_workers: int = 1, ray: str | None = None) -> int:
    # Read once and removed: no process started from here (the zygotes, the candidates) inherits it.
    token = os.environ.pop(TOKEN_ENV, "") or None
    if http:
        refused = _address(http, token)
        if isinstance(refused, dict):  # before any worker starts
            print(json.dumps(refused), flush=True)
            return 2
    # SIGTERM ends the server through its `finally`s: the backend closes (a Ray backend cancels its
    # tasks and ends its actors; local zygotes see their stdin close and stop their jobs).
    signal.signal(signal.SIGTERM, _terminate)
    out = _protocol_stdout()
    with make_backend(ray, cpu_workers) as workers:
        _warm(workers)
        if http:
            return serve_http(workers, http, token, max_body, out)
        return serve_stdio(workers, out)
