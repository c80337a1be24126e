"""OpenAI-compatible chat server: llama.cpp's own HTTP server (through the
prebuilt xllamacpp wheel from PyPI) over one local GGUF file.

    python chat_server.py --gguf model.gguf --alias NAME --host 127.0.0.1 --port 8080

llama.cpp serves everything: GET /health (503 while loading), GET
/v1/models, POST /v1/chat/completions (streaming, usage, and
"response_format" with a JSON schema, which it turns into a grammar so that
every answer matches the schema). Its grammar enforces "required"
literally; the worker therefore sends the DIN schema in its loose form
(llm.json_schema_loose, set by scripts/models.sh env), see docs/models.md.

The process runs until SIGTERM or SIGINT.
"""

import argparse
import os
import signal
import sys
import time

import xllamacpp as xlc


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gguf", required=True, help="GGUF model file")
    ap.add_argument("--alias", default="", help="model name served in /v1/models and answers")
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=8080)
    ap.add_argument("--ctx", type=int, default=8192, help="context window in tokens")
    ap.add_argument("--threads", type=int, default=0, help="CPU threads (0 = all cores)")
    ap.add_argument("--parallel", type=int, default=1,
                    help="prompts decoded side by side in one batch (slots sharing one context window)")
    ap.add_argument("--dry", type=float, default=0.8,
                    help="default DRY repetition penalty multiplier (0 = off); requests may override")
    a = ap.parse_args()
    if not os.path.isfile(a.gguf):
        sys.exit(f"chat server: no GGUF file at {a.gguf}")
    threads = a.threads or os.cpu_count() or 2

    p = xlc.CommonParams()
    p.model.path = a.gguf
    if a.alias:
        p.model_alias = {a.alias}
    p.hostnames = [a.host]
    p.port = a.port
    # Each slot may hold a whole --ctx prompt, so the shared window is
    # --ctx times the slots (KV memory: about 28 KB a token for this model).
    p.n_ctx = a.ctx * max(1, a.parallel)
    # Generation on a CPU is bound by reading the weights once per token, so
    # several answers decoded in one batch cost little more than one. The
    # slots share one unified context window rather than a slice each, so a
    # single long prompt still fits.
    p.n_parallel = max(1, a.parallel)
    p.kv_unified = True
    p.cont_batching = True
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
    sys.stderr.write(f"chat server: {a.alias or os.path.basename(a.gguf)} ({a.gguf}) loaded in {time.time() - t:.1f}s; "
                     f"listening on {server.listening_address}, {threads} threads\n")
    sys.stderr.flush()
    signal.sigwait({signal.SIGTERM, signal.SIGINT})
    sys.stderr.write("chat server: stopping\n")
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
