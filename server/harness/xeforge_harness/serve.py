"""`serve`: one warm backend, many requests, over stdio (JSON lines) or HTTP (POST, JSON bodies).

Over either, each request has a thread and the backend (`pool.Workers`, `raypool.RayWorkers`)
decides what runs at once: `--jobs-per-device` jobs per device (default 1), whose timed comparisons
take the device to themselves, so candidates are never timed side by side on one device. Over stdio every reply is one whole line tagged with its request's `id`, written when the
request is done (so possibly out of order: a client that waits for each reply before sending the
next sees them in order, as before); `cancel` names a request in flight and stops it alone; `ping`
says how many jobs the pool runs at once (`pool`). The HTTP server runs code sent to it, so it is guarded: a bearer
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
import select
import signal
import socket
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from . import __version__, compat, service
from . import protocol as P
from .pool import Backend, Cancelled, make_backend

COMMANDS = ("evaluate", "sweep", "probe", "ping", "cancel", "shutdown")
TOKEN_ENV = "XEFORGE_HARNESS_TOKEN"
# Bodies carry the kernel, candidates, spec and reference as text: a sweep of 64 candidates of a large
# kernel file fits; anything bigger is refused (HTTP 413) before it is read.
DEFAULT_MAX_BODY = 8 * 1024 * 1024
_STALL_S = 60  # a client that sends nothing for this long is dropped
_DRAIN_S = 2.0  # after a refusal, unread bytes are discarded this long, so the client reads the reply
_FINISH_S = 30.0  # at shutdown or EOF, how long cancelled jobs get to write their replies


class Served:
    """How many jobs each command started, and how many requests a `cancel` stopped: `ping` reports it,
    so a test can see a refused request ran (or cancelled) nothing."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.counts = {"evaluate": 0, "sweep": 0, "probe": 0, "cancelled": 0}

    def started(self, command: str) -> None:
        with self._lock:
            self.counts[command] += 1

    def snapshot(self) -> dict:
        with self._lock:
            return dict(self.counts)


def handle(
    request: object, workers: Backend, *, paths_allowed: bool = True, served: Served | None = None, cancelled: Cancelled | None = None
) -> tuple[dict, bool]:
    """One request object → (response, stop?). The response echoes `id`. `cancelled`: polled by the
    job while it waits for a lane and runs (stdio's `cancel`)."""
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
        response = service.evaluate(args, workers, paths_allowed=paths_allowed, cancelled=cancelled)
    elif command == "sweep":
        response = service.sweep(args, workers, paths_allowed=paths_allowed, cancelled=cancelled)
    elif command == "probe":
        response = service.probe(args, workers, cancelled)
    elif command == "ping":
        response = _ping(workers, served)
    elif command == "cancel":
        # Answered by the server's request loop (`_Flights`), which knows the requests in flight.
        response = P.error_result("`cancel` is answered by a server's request loop, which knows the requests in flight", field="command")
    elif command == "shutdown":
        response, stop = {"ok": True}, True
    else:
        response = P.error_result(f"unknown command {command!r} (expected one of {', '.join(COMMANDS)})", field="command")
    return {"id": rid, **response}, stop


def _ping(workers: Backend, served: Served | None) -> dict:
    out = {"ok": True, "version": __version__, "workers": workers.info(), "pool": workers.pool()}
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


class _Flights:
    """The requests in flight that a `cancel` can name, by `id`, each with its cancel flag: one stdio
    session's, or every HTTP client's of one server (an HTTP client names its requests with ids of its
    own making: the Rust client's are random)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._flags: dict[str, threading.Event] = {}  # json of a request's id → its cancel flag

    def enter(self, rid: object) -> tuple[str | None, threading.Event] | None:
        """A flag for a request about to run, registered under its id (not for a request without one);
        None when a request with that id is still running: `cancel` must name one request."""
        key = _key(rid)
        flag = threading.Event()
        with self._lock:
            if key is not None:
                if key in self._flags:
                    return None
                self._flags[key] = flag
        return key, flag

    def leave(self, key: str | None, flag: threading.Event) -> None:
        with self._lock:
            if key is not None and self._flags.get(key) is flag:
                del self._flags[key]

    def cancel(self, rid: object) -> bool:
        """Set the flag of the request in flight with this id; whether there was one."""
        with self._lock:
            flag = self._flags.get(_key(rid) or "")
        if flag is not None:
            flag.set()
        return flag is not None

    def cancel_all(self) -> None:
        with self._lock:
            flags = list(self._flags.values())
        for flag in flags:
            flag.set()


def _duplicate(rid: object) -> dict:
    return {"id": rid, **P.error_result(f"a request with id {_key(rid)} is still running", field="id")}


def _cancel_target(request: dict) -> tuple[bool, object]:
    """`cancel`'s `args.id`: (True, the id), or (False, the `error` reply when it names none)."""
    args = request.get("args")
    if not isinstance(args, dict) or "id" not in args:
        return False, {"id": request.get("id"), **P.error_result("argument 'id': the id of the request to cancel", field="id")}
    return True, args["id"]


class _StdioSession:
    """The requests of one stdio client in flight: a thread each, a cancel flag each (by `id`), and
    one lock so that every reply is written as one whole line."""

    def __init__(self, workers: Backend, out) -> None:
        self.workers = workers
        self.out = out
        self._write = threading.Lock()
        self._lock = threading.Lock()
        self._flights = _Flights()
        self._threads: set[threading.Thread] = set()

    def reply(self, response: dict) -> None:
        line = P.dumps(response) + "\n"
        with self._write:
            try:
                self.out.write(line)
                self.out.flush()
            except (BrokenPipeError, OSError, ValueError):
                pass  # the client is gone; its jobs are cancelled when stdin ends

    def start(self, request: dict) -> None:
        """Run one request on a thread of its own. An `id` already in flight is refused: `cancel`
        must name one request."""
        entered = self._flights.enter(request.get("id"))
        if entered is None:
            self.reply(_duplicate(request.get("id")))
            return
        with self._lock:
            thread = threading.Thread(target=self._run, args=(request, *entered), daemon=True)
            self._threads.add(thread)
        thread.start()

    def _run(self, request: dict, key: str | None, flag: threading.Event) -> None:
        try:
            response, _ = handle(request, self.workers, cancelled=flag.is_set)
        except Exception as e:  # noqa: BLE001  (a harness bug answers its request, and the session goes on)
            response = {"id": request.get("id"), **P.error_result(f"the harness failed: {type(e).__name__}: {e}")}
        finally:
            self._flights.leave(key, flag)
            with self._lock:
                self._threads.discard(threading.current_thread())
        self.reply(response)

    def cancel(self, request: dict) -> dict:
        """`cancel`: stop the request in flight whose `id` is `args.id` (its own reply says
        `cancelled`); answered at once, `cancelled` false when no such request is running."""
        named, target = _cancel_target(request)
        if not named:
            assert isinstance(target, dict)
            return target
        return {"id": request.get("id"), "ok": True, "cancelled": self._flights.cancel(target)}

    def finish(self) -> None:
        """Cancel every request in flight and give them a while to answer (shutdown, or the client gone)."""
        self._flights.cancel_all()
        with self._lock:
            threads = list(self._threads)
        deadline = time.monotonic() + _FINISH_S
        for thread in threads:
            thread.join(max(0.0, deadline - time.monotonic()))


def _key(rid: object) -> str | None:
    """A request's id as a key (`1` and `"1"` stay apart); None for a request without one."""
    return None if rid is None else json.dumps(rid, sort_keys=True)


def serve_stdio(workers: Backend, out=None) -> int:
    """JSON lines: each request on a thread of its own (the backend's lanes decide what runs at once),
    each reply one line when its request is done; `cancel` and `shutdown` are answered by this loop."""
    session = _StdioSession(workers, out or sys.stdout)
    try:
        for line in sys.stdin:
            line = line.strip()
            if not line:
                continue
            try:
                request = json.loads(line)
            except ValueError as e:
                session.reply({"id": None, **P.error_result(f"request is not JSON: {e}")})
                continue
            command = request.get("command") if isinstance(request, dict) else None
            if command == "cancel":
                session.reply(session.cancel(request))
            elif command == "shutdown" and isinstance(request, dict):
                # Every request in flight is answered (cancelled) before `shutdown` is.
                session.finish()
                session.reply(handle(request, workers)[0])
                return 0
            elif isinstance(request, dict):
                session.start(request)
            else:
                session.reply(handle(request, workers)[0])
    finally:
        # EOF (the client went away) or an interrupt: nobody will read a verdict; stop the jobs.
        session.finish()
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
    flights = _Flights()  # every client's requests that a `POST /cancel` can name

    class Handler(BaseHTTPRequestHandler):
        server_version = f"xeforge-harness/{__version__}"
        timeout = _STALL_S

        def _reply(self, status: int, body: dict, headers: tuple[tuple[str, str], ...] = ()) -> None:
            data = (P.dumps(body) + "\n").encode()
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for name, value in headers:
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)
            except OSError:
                self.close_connection = True  # the client is gone (it cancelled, or closed its connection)

        def _client_gone(self) -> bool:
            """Whether the client closed its connection while its request runs: nobody will read the
            reply, so the job is cancelled. A client waiting for its reply sends nothing meanwhile, so a
            readable socket with nothing to read is a closed one."""
            try:
                ready, _, _ = select.select([self.connection], [], [], 0)
                return bool(ready) and self.connection.recv(1, socket.MSG_PEEK) == b""
            except (OSError, ValueError):
                return True

        def _run(self, request: object) -> tuple[dict, bool]:
            """One request: a job's is registered under its `id` (if it has one) for `POST /cancel`,
            and cancelled too when its client disconnects."""
            command = request.get("command") if isinstance(request, dict) else None
            if not isinstance(request, dict) or command not in ("evaluate", "sweep", "probe"):
                return handle(request, workers, paths_allowed=False, served=served)
            entered = flights.enter(request.get("id"))
            if entered is None:
                return _duplicate(request.get("id")), False
            key, flag = entered
            try:
                return handle(request, workers, paths_allowed=False, served=served, cancelled=lambda: flag.is_set() or self._client_gone())
            finally:
                flights.leave(key, flag)

        def _cancel(self, request: dict) -> dict:
            """`POST /cancel`: stop another request in flight by its `id`, whichever client sent it.
            An id that names none is an `error` (`field: id`): over HTTP there is no session whose
            requests a client could be told apart from another's."""
            named, target = _cancel_target(request)
            if not named:
                assert isinstance(target, dict)
                return target
            if flights.cancel(target):
                served.started("cancelled")
                return {"id": request.get("id"), "ok": True, "cancelled": True}
            message = (
                f"no request with id {_key(target)} is in flight on this harness: it finished, was never sent, "
                "was sent without an `id`, or went to another harness"
            )
            return {"id": request.get("id"), **P.error_result(message, field="id"), "cancelled": False}

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
            if isinstance(request, dict) and request.get("command") == "cancel":
                self._reply(200, self._cancel(request))
                return
            response, stop = self._run(request)
            self._reply(200, response)
            if stop:
                flights.cancel_all()  # the requests in flight are answered (cancelled) as the server ends
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


def main(http: str | None, max_body: int = DEFAULT_MAX_BODY, cpu_workers: int = 1, ray: str | None = None, jobs_per_device: int = 1) -> int:
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
    with make_backend(ray, cpu_workers, jobs_per_device) as workers:
        _warm(workers)
        if http:
            return serve_http(workers, http, token, max_body, out)
        return serve_stdio(workers, out)
