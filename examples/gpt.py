"""A small character-level GPT trained on a public-domain text kept in the repository
(examples/data/sonnets.txt: ten of Shakespeare's sonnets and Carroll's "Jabberwocky"):
token and position embeddings, pre-norm transformer blocks (causal multi-head self-attention
and a gelu MLP, written with qb ops and qb.nn), a linear head. One compiled step is
``jit(value_and_grad(loss))`` over a batch of random windows, followed by an Adam update
(qb.optim); samples are drawn with ``qb.random.categorical`` from a jitted next-character
model. A tqdm bar shows the training when tqdm is installed (``pip install quabla[examples]``).

    python examples/gpt.py                 # 1500 steps: the loss falls from log(58) = 4.06 to ~0.25
                                           # (the 7 KB text is learnt almost by heart)
    python examples/gpt.py --smoke         # a few seconds: a tiny model, 30 steps
    python examples/gpt.py --steps 3000 --layers 4 --embed 128
"""
import argparse
import math
import os
import time

import numpy as np

import quabla as qb

try:
    from tqdm import tqdm
except ImportError:  # optional extra
    tqdm = None

TEXT_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "sonnets.txt")


def load_text(path=TEXT_PATH):
    """The text without its header line (the source note)."""
    with open(path, encoding="utf-8") as f:
        return f.read().split("\n", 2)[2]


def init(rng, vocab, ctx, embed, layers):
    def normal(*shape, std=0.02):
        return qb.array((rng.normal(size=shape) * std).astype(np.float32))

    def zeros(*shape):
        return qb.zeros(shape, dtype=qb.float32)

    def ones(*shape):
        return qb.ones(shape, dtype=qb.float32)

    proj_std = 0.02 / math.sqrt(2 * layers)
    blocks = [
        {
            "ln1": (ones(embed), zeros(embed)),
            "qkv": (normal(embed, 3 * embed), zeros(3 * embed)),
            "proj": (normal(embed, embed, std=proj_std), zeros(embed)),
            "ln2": (ones(embed), zeros(embed)),
            "fc": (normal(embed, 4 * embed), zeros(4 * embed)),
            "out": (normal(4 * embed, embed, std=proj_std), zeros(embed)),
        }
        for _ in range(layers)
    ]
    return {"wte": normal(vocab, embed), "wpe": normal(ctx, embed, std=0.01), "blocks": blocks, "lnf": (ones(embed), zeros(embed)), "head": (normal(embed, vocab), zeros(vocab))}


def layer_norm(x, gb):
    g, b = gb
    return qb.nn.standardize(x, axis=-1, epsilon=1e-5) * g + b


def dense(x, wb):
    w, b = wb
    return x @ w + b


def attention(x, p, heads):
    """Causal multi-head self-attention over (batch, time, embed)."""
    bsz, t, e = x.shape
    d = e // heads
    qkv = dense(x, p["qkv"]).reshape(bsz, t, 3, heads, d)
    q, k, v = (qb.transpose(qkv[:, :, i], (0, 2, 1, 3)) for i in range(3))  # (B, H, T, D)
    att = (q @ qb.swapaxes(k, -1, -2)) / math.sqrt(d)
    causal = qb.tril(qb.ones((t, t), dtype=qb.bool_))
    att = qb.nn.softmax(qb.where(causal, att, -1e9), axis=-1)
    y = qb.transpose(att @ v, (0, 2, 1, 3)).reshape(bsz, t, e)
    return dense(y, p["proj"])


def logits(params, idx, heads):
    """Next-character logits (batch, time, vocab) for character ids ``idx`` (batch, time)."""
    vocab = params["wte"].shape[0]
    t = idx.shape[1]
    x = qb.nn.one_hot(idx, vocab, dtype=qb.float32) @ params["wte"] + params["wpe"][:t]
    for p in params["blocks"]:
        x = x + attention(layer_norm(x, p["ln1"]), p, heads)
        x = x + dense(qb.nn.gelu(dense(layer_norm(x, p["ln2"]), p["fc"])), p["out"])
    return dense(layer_norm(x, params["lnf"]), params["head"])


def loss(params, idx, targets, heads):
    """Mean next-character cross-entropy."""
    z = logits(params, idx, heads)
    vocab = z.shape[-1]
    return -qb.mean(qb.sum(qb.nn.one_hot(targets, vocab, dtype=qb.float32) * qb.nn.log_softmax(z, axis=-1), axis=-1))


def sample(params, prompt, n, ctx, heads, chars, key, temperature=0.8):
    """``n`` characters drawn after ``prompt`` (the window is the last ``ctx`` characters,
    left-padded with newlines)."""
    ix = {c: i for i, c in enumerate(chars)}
    nxt = qb.jit(lambda p, w, k: qb.random.categorical(k, logits(p, w, heads)[0, -1] / temperature))
    ids = [ix["\n"]] * ctx + [ix[c] for c in prompt]
    for _ in range(n):
        key, sub = qb.random.split(key)
        window = np.array(ids[-ctx:], dtype=np.int32)[None]
        ids.append(int(nxt(params, window, sub).item()))
    return prompt + "".join(chars[i] for i in ids[ctx + len(prompt):])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=1500)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--ctx", type=int, default=64)
    ap.add_argument("--embed", type=int, default=64)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--samples", type=int, default=2)
    ap.add_argument("--smoke", action="store_true", help="a few seconds: a tiny model, 30 steps")
    args = ap.parse_args()
    if args.smoke:
        args.steps, args.batch, args.ctx, args.embed, args.heads, args.layers, args.samples = 30, 8, 16, 32, 2, 1, 1

    text = load_text()
    chars = sorted(set(text))
    ix = {c: i for i, c in enumerate(chars)}
    data = np.array([ix[c] for c in text], dtype=np.int32)
    vocab = len(chars)
    rng = np.random.default_rng(0)
    params = init(rng, vocab, args.ctx, args.embed, args.layers)
    n_params = sum(int(np.prod(x.shape)) for x in qb.tree.leaves(params))
    print(f"{len(text)} characters, vocabulary {vocab}, {n_params} parameters, chance loss {math.log(vocab):.3f}")

    opt = qb.optim.Adam(learning_rate=args.lr)
    state = opt.init(params)
    step = qb.jit(qb.value_and_grad(loss), static_argnums=(3,))
    t0 = time.perf_counter()
    steps = range(args.steps)
    bar = tqdm(steps, mininterval=0.5) if tqdm is not None and not args.smoke else None
    avg = None
    every = max(args.steps // 10, 1)
    for i in bar if bar is not None else steps:
        starts = rng.integers(0, len(data) - args.ctx - 1, size=args.batch)
        xb = np.stack([data[s:s + args.ctx] for s in starts])
        yb = np.stack([data[s + 1:s + args.ctx + 1] for s in starts])
        value, g = step(params, xb, yb, args.heads)
        params, state = opt.update(params, g, state)
        v = value.item()
        avg = v if avg is None else 0.95 * avg + 0.05 * v
        if bar is not None:
            bar.set_postfix(loss=f"{avg:.3f}")
        if i % every == 0 or i == args.steps - 1:
            msg = f"step {i:5d}  loss {v:.4f}  (running mean {avg:.4f})"
            (bar.write if bar is not None else print)(msg)
    if bar is not None:
        bar.close()
    print(f"trained in {time.perf_counter() - t0:.1f} s")
    key = qb.random.key(0)
    for prompt in ["Shall I", "The vorpal"][: args.samples]:
        key, sub = qb.random.split(key)
        n = 40 if args.smoke else 300
        print(f"--- sample ({prompt!r}):\n{sample(params, prompt, n, args.ctx, args.heads, chars, sub)}")


if __name__ == "__main__":
    main()
