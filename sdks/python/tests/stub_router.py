"""A scripted HTTP server standing in for the router in unit tests: each request gets the next
reply queued for its method and path, and is recorded."""

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Dict, List, Tuple, Union

#: A reply: (status, JSON body[, headers]) or a function of the request that writes it itself.
Reply = Union[Tuple[int, Any], Callable[[BaseHTTPRequestHandler], None]]


class StubRouter:
    def __init__(self) -> None:
        self.replies: Dict[str, List[Reply]] = {}
        self.requests: List[Dict[str, Any]] = []
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _serve(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length) if length else b""
                path = self.path.split("?")[0]
                stub.requests.append({
                    "method": self.command, "path": self.path,
                    "headers": {k.lower(): v for k, v in self.headers.items()},
                    "body": json.loads(raw) if raw else None,
                })
                queue = stub.replies.get(f"{self.command} {path}") or []
                reply: Reply = queue.pop(0) if queue else (404, {"error": "NOT_FOUND", "message": "no reply queued"})
                if callable(reply):
                    reply(self)
                    return
                status, body, *headers = reply
                data = json.dumps(body).encode() if not isinstance(body, bytes) else body
                self.send_response(status)
                for name, value in (headers[0] if headers else {}).items():
                    self.send_header(name, value)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = _serve

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    def queue(self, route: str, *replies: Reply) -> None:
        self.replies.setdefault(route, []).extend(replies)

    def sent(self, route: str) -> List[Dict[str, Any]]:
        method, path = route.split(" ", 1)
        return [r for r in self.requests if r["method"] == method and r["path"].split("?")[0] == path]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
