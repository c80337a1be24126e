"""OpenAI-compatible chat server: llama.cpp's own HTTP server (through the
prebuilt xllamacpp wheel from PyPI) over one local GGUF file.

    python chat_server.py --gguf model.gguf --alias NAME --host 127.0.0.1 --port 8080

llama.cpp listens on an internal loopback port and serves everything: GET
/health (503 while loading), GET /v1/models, POST /v1/chat/completions
(streaming, usage, and "response_format" with a JSON schema, which it turns
into a grammar so that every answer matches the schema). This process
forwards each request to it unchanged, with one exception (--relax-nullable,
on by default):

OpenAI's strict structured outputs need every property listed in
"required", so a strict-mode schema writes an optional field as required
with a type that admits null (the DIN schema does: Parse treats null as
absent). llama.cpp has no strict mode and enforces "required" literally:
the grammar makes the model write every optional field, and a small model
fills them with something, typically invented task ids ("parent": its own
id, "depends_on": ids that do not exist). So the schema of a chat request
is read the way a non-strict decoder reads it: a required property whose
type admits null becomes optional (and non-null). Measured on the first
turn of a session with Qwen2.5-Coder-1.5B: 4 of 10 answers valid, 2 with a
web_search, as sent; 9 of 10 valid, 8 with a web_search, relaxed. See
docs/models.md.

The process runs until SIGTERM or SIGINT.
"""

import argparse
import copy
import http.client
import json
import os
import signal
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

import xllamacpp as xlc

CHAT_PATHS = ("/v1/chat/completions", "/chat/completions")
FORWARD_HEADERS = ("Content-Type", "Accept", "Authorization")


def relax_nullable(schema):
    """Returns a copy of a JSON schema in which every required property whose
    type admits null is optional and non-null instead, and how many were."""
    schema = copy.deepcopy(schema)
    count = 0

    def walk(node):
        nonlocal count
        if isinstance(node, list):
            for x in node:
                walk(x)
            return
        if not isinstance(node, dict):
            return
        for v in node.values():
            walk(v)
        props, req = node.get("properties"), node.get("required")
        if not isinstance(props, dict) or not isinstance(req, list):
            return
        keep = []
        for name in req:
            p = props.get(name)
            t = p.get("type") if isinstance(p, dict) else None
            if isinstance(t, list) and "null" in t and len(t) > 1:
                rest = [x for x in t if x != "null"]
                p["type"] = rest[0] if len(rest) == 1 else rest
                count += 1
            else:
                keep.append(name)
        node["required"] = keep

    walk(schema)
    return schema, count


def adapt(body):
    """Relaxes the response_format schema of a chat request body, in place."""
    rf = body.get("response_format")
    if not isinstance(rf, dict):
        return 0
    holder = rf.get("json_schema") if isinstance(rf.get("json_schema"), dict) else rf
    if not isinstance(holder.get("schema"), dict):
        return 0
    holder["schema"], n = relax_nullable(holder["schema"])
    return n


class Proxy(BaseHTTPRequestHandler):
    upstream = ""  # host:port of llama.cpp's server, set by main
    relax = True
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def _forward(self, method):
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n) if n else None
        path = self.path
        if method == "POST" and self.relax and urlsplit(path).path.rstrip("/") in CHAT_PATHS and body:
            try:
                req = json.loads(body)
                if isinstance(req, dict) and adapt(req):
                    body = json.dumps(req).encode()
            except json.JSONDecodeError:
                pass  # llama.cpp answers the malformed request itself
        headers = {h: self.headers[h] for h in FORWARD_HEADERS if self.headers.get(h)}
        conn = http.client.HTTPConnection(self.upstream, timeout=3600)
        try:
            conn.request(method, path, body=body, headers=headers)
            resp = conn.getresponse()
        except OSError as e:
            msg = json.dumps({"error": {"message": f"llama.cpp server unreachable: {e}", "type": "server_error"}}).encode()
            self.send_response(503)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(msg)))
            self.end_headers()
            self.wfile.write(msg)
            return
        try:
            ctype = resp.getheader("Content-Type", "application/json")
            self.send_response(resp.status)
            self.send_header("Content-Type", ctype)
            if ctype.startswith("text/event-stream"):
                # Relay the stream as it comes: chunked, flushed per read.
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                while True:
                    chunk = resp.read1(65536)
                    if not chunk:
                        break
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                    self.wfile.flush()
                self.wfile.write(b"0\r\n\r\n")
            else:
                data = resp.read()
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True  # the client went away; llama.cpp notices the closed upstream
        finally:
            conn.close()

    def do_GET(self):
        self._forward("GET")

    def do_POST(self):
        self._forward("POST")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gguf", required=True, help="GGUF model file")
    ap.add_argument("--alias", default="", help="model name served in /v1/models and answers")
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=8080)
    ap.add_argument("--ctx", type=int, default=8192, help="context window in tokens")
    ap.add_argument("--threads", type=int, default=0, help="CPU threads (0 = all cores)")
    ap.add_argument("--dry", type=float, default=0.8,
                    help="default DRY repetition penalty multiplier (0 = off); requests may override")
    ap.add_argument("--relax-nullable", default=True, action=argparse.BooleanOptionalAction,
                    help="read strict-mode schemas as non-strict: nullable required properties become optional")
    a = ap.parse_args()
    if not os.path.isfile(a.gguf):
        sys.exit(f"chat server: no GGUF file at {a.gguf}")
    threads = a.threads or os.cpu_count() or 2

    p = xlc.CommonParams()
    p.model.path = a.gguf
    if a.alias:
        p.model_alias = {a.alias}
    p.hostnames = ["127.0.0.1"]
    p.port = 0                  # an internal port; this process serves --port
    p.n_ctx = a.ctx
    p.n_parallel = 1            # one prompt at a time: the worker runs one LLM call at a time
    p.cpuparams.n_threads = threads
    p.cpuparams_batch.n_threads = threads
    p.cpuparams.poll = 0        # no busy-waiting between requests: idle means idle
    p.cpuparams_batch.poll = 0
    p.ui = False
    p.offline = True            # never reach for a model hub
    # Small models fall into loops inside long strings; DRY stops them
    # without touching the JSON structure the grammar enforces.
    p.sampling.dry_multiplier = a.dry

    # Block the stop signals before llama.cpp starts its threads, so that they
    # inherit the mask and sigwait below receives the signal.
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM, signal.SIGINT})
    t = time.time()
    server = xlc.Server(p)
    Proxy.upstream = urlsplit(server.listening_address).netloc
    Proxy.relax = a.relax_nullable
    front = ThreadingHTTPServer((a.host, a.port), Proxy)
    front.daemon_threads = True
    threading.Thread(target=front.serve_forever, daemon=True).start()
    sys.stderr.write(f"chat server: {a.alias or os.path.basename(a.gguf)} ({a.gguf}) loaded in {time.time() - t:.1f}s; "
                     f"listening on http://{a.host}:{a.port} (llama.cpp on {server.listening_address}, {threads} threads, "
                     f"relax-nullable {'on' if a.relax_nullable else 'off'})\n")
    sys.stderr.flush()
    signal.sigwait({signal.SIGTERM, signal.SIGINT})
    sys.stderr.write("chat server: stopping\n")
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
