"""A character-level RNN trained with ``qb.scan``: a tanh recurrent cell reads a text one
character at a time and predicts the next one (softmax cross-entropy). One jitted step is the
loss of a whole sequence (a scan over its characters) and its gradient with respect to every
weight (reverse mode through the scan: a forward loop stacking the hidden states and a
reversed loop), followed by an Adam update; the loss falls from log(vocabulary size).

    python examples/rnn.py                  # fast default: a few hundred steps
    python examples/rnn.py --steps 1000 --hidden 64 --seq 64
    python examples/rnn.py --smoke          # a few seconds (CI)
"""
import argparse
import math

import numpy as np

import quabla as qb

TEXT = (
    "the quick brown fox jumps over the lazy dog. "
    "a differentiable array compiler turns loops into loops, and their gradients into loops that run backwards. "
    "the loss of a recurrent network is a scan over its characters. "
)


def init(vocab, hidden, rng):
    s = 1.0 / math.sqrt(hidden)
    return {
        "wxh": qb.array(rng.normal(size=(hidden, vocab)) * 0.1),
        "whh": qb.array(rng.normal(size=(hidden, hidden)) * s * 0.5),
        "bh": qb.zeros(hidden),
        "why": qb.array(rng.normal(size=(vocab, hidden)) * 0.1),
        "by": qb.zeros(vocab),
    }


def loss(params, xs, ys, h0):
    """Mean next-character cross-entropy over one sequence; xs, ys: one-hot [T, V]."""

    def cell(h, xy):
        x, y = xy
        h = qb.tanh(params["wxh"] @ x + params["whh"] @ h + params["bh"])
        logits = params["why"] @ h + params["by"]
        return h, qb.logsumexp(logits) - qb.sum(logits * y)

    h, nll = qb.scan(cell, h0, (xs, ys))
    return qb.mean(nll), h


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=300)
    p.add_argument("--hidden", type=int, default=32)
    p.add_argument("--seq", type=int, default=32)
    p.add_argument("--smoke", action="store_true", help="a few seconds: 40 steps of 16 characters")
    args = p.parse_args()
    if args.smoke:
        args.steps, args.hidden, args.seq = 40, 16, 16
    chars = sorted(set(TEXT))
    ix = {c: i for i, c in enumerate(chars)}
    data = np.array([ix[c] for c in TEXT])
    vocab = len(chars)
    eye = np.eye(vocab)
    rng = np.random.default_rng(0)
    params = init(vocab, args.hidden, rng)
    opt = qb.optim.Adam(learning_rate=0.01)
    state = opt.init(params)
    grad_step = qb.jit(qb.value_and_grad(loss, has_aux=True))
    h = qb.zeros(args.hidden)
    pos, avg = 0, None
    print(f"vocabulary {vocab}, chance loss {math.log(vocab):.3f}")
    for step in range(args.steps):
        if pos + args.seq + 1 > len(data):
            pos, h = 0, qb.zeros(args.hidden)
        chunk = data[pos : pos + args.seq + 1]
        xs, ys = qb.array(eye[chunk[:-1]]), qb.array(eye[chunk[1:]])
        (value, h), g = grad_step(params, xs, ys, h)
        params, state = opt.update(params, g, state)
        pos += args.seq
        avg = value.item() if avg is None else 0.9 * avg + 0.1 * value.item()
        if step % max(args.steps // 10, 1) == 0 or step == args.steps - 1:
            print(f"step {step:4d}  loss {value.item():.3f}  (running mean {avg:.3f})")

    # Greedy sampling from the trained cell.
    def next_char(h, x):
        h = qb.tanh(params["wxh"] @ x + params["whh"] @ h + params["bh"])
        return h, qb.argmax(params["why"] @ h + params["by"])

    nxt = qb.jit(next_char)
    h, c, out = qb.zeros(args.hidden), ix["t"], "t"
    for _ in range(60):
        h, c = nxt(h, qb.array(eye[c]))
        c = int(c.item())
        out += chars[c]
    print(f"sample: {out!r}")


if __name__ == "__main__":
    main()
