"""`serve`: one warm worker, many requests, over stdio (JSON lines) or HTTP (POST, JSON bodies).

Requests are answered one at a time, in order: candidates share one device and timing needs it alone.
"""

from __future__ import annotations

import json
import sys
from http.server import BaseHTTPRequestHandler, HTTPServer

from . import __version__, compat, service
from . import protocol as P
from .pool import Workers

COMMANDS = ("evaluate", "sweep", "probe", "ping", "shutdown")


def handle(request: object, workers: Workers) -> tuple[dict, bool]:
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
    if command == "evaluate":
        response = service.evaluate(args, workers)
    elif command == "sweep":
        response = service.sweep(args, workers)
    elif command == "probe":
        response = service.probe(args, workers)
    elif command == "ping":
        response = {"ok": True, "version": __version__, "workers": workers.info()}
    elif command == "shutdown":
        response, stop = {"ok": True}, True
    else:
        response = P.error_result(f"unknown command {command!r} (expected one of {', '.join(COMMANDS)})", field="command")
    return {"id": rid, **response}, stop


def _warm(workers: Workers) -> None:
    """Start the worker the first request will most likely need, before it arrives."""
    try:
        kind, _ = workers.resolve("auto")
        workers.start(interpret=(kind == "cpu"))
    except (RuntimeError, OSError, ValueError) as e:
        # Keep serving: every evaluate will report the failure as an `error` verdict.
        print(f"xeforge_harness: worker did not start: {e}", file=sys.stderr)


def serve_stdio(workers: Workers) -> int:
    out = sys.stdout
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


def serve_http(workers: Workers, address: str) -> int:
    host, _, port_text = address.rpartition(":")
    try:
        port = int(port_text)
    except ValueError:
        print(json.dumps(P.error_result(f"--http expects HOST:PORT, got {address!r}")))
        return 2
    host = host.strip("[]") or "127.0.0.1"

    class Handler(BaseHTTPRequestHandler):
        server_version = f"xeforge-harness/{__version__}"

        def _reply(self, status: int, body: dict) -> None:
            data = (P.dumps(body) + "\n").encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:  # noqa: N802  (http.server's naming)
            if self.path.rstrip("/") == "/ping":
                self._reply(200, {"ok": True, "version": __version__, "workers": workers.info()})
            else:
                self._reply(404, P.error_result(f"no such endpoint: GET {self.path}"))

        def do_POST(self) -> None:  # noqa: N802
            command = self.path.strip("/")
            if command and command not in COMMANDS:
                self._reply(404, P.error_result(f"no such endpoint: POST {self.path}"))
                return
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b"{}"
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
            response, stop = handle(request, workers)
            self._reply(200, response)
            if stop:
                self.server.stopping = True  # type: ignore[attr-defined]

        def log_message(self, fmt: str, *args) -> None:
            print(f"xeforge_harness http: {fmt % args}", file=sys.stderr)

    server = HTTPServer((host, port), Handler)
    server.stopping = False  # type: ignore[attr-defined]
    print(json.dumps({"listening": f"http://{host}:{server.server_address[1]}"}), flush=True)
    try:
        while not server.stopping:  # type: ignore[attr-defined]
            server.handle_request()
    finally:
        server.server_close()
    return 0


def main(http: str | None) -> int:
    with Workers() as workers:
        _warm(workers)
        if http:
            return serve_http(workers, http)
        return serve_stdio(workers)
