# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Trains a small Llama-style model twice on local text -- once with bf16
linear layers, once with blockscale's FP8 blockwise linears -- with the same
seed, initialization and data order, and compares loss and speed.

The corpus is the Python standard library's sources on this machine (the
.py files under os.path.dirname(os.__file__)), as byte-level tokens (vocab
256), 5 % held out for a validation loss. The model is transformers'
LlamaForCausalLM when transformers is installed (--model hf), else a
self-contained one (--model builtin): RMSNorm, rotary attention through
F.scaled_dot_product_attention, SwiGLU MLP. Parameters and activations are
bf16 in both runs; only the linear layers differ (blockscale.quantize_ with
Float8BlockwiseConfig: the lm_head, 256 outputs, stays bf16).

    python examples/train_llama.py                       # defaults: ~2-3 min on an H200
    python examples/train_llama.py --steps 50 --layers 4 # shorter
    python examples/train_llama.py --compile             # torch.compile both models
    python examples/train_llama.py --compile --optimizer fused   # as frameworks train
    python examples/train_llama.py --hidden 4096 --layers 4 --heads 32 --steps 300 \
        --lr 3e-4 --json out.json                        # issue 32's model (gpu-check.sh train)

Prints the loss every --log-every steps with tokens/s, then one summary line:
the loss gap of the FP8 run (mean training loss of the last 10 steps, and the
validation loss), its speedup in tokens/s (steps after --warmup-steps) and ms
per step, and the goal lines (--goal-speedup, --goal-loss-gap). --json writes
the same as JSON. No CUDA graphs are used.

--runs all adds a third run with torchao's Float8BlockwiseLinear (the same
recipe with cuBLASLt GEMMs and Triton casts) in place of the same layers,
when bench/torchao_anchor.py finds torchao (scripts/fetch-torchao.sh): its
loss gap to bf16 tells whether a gap belongs to the recipe or to blockscale.
"""
import argparse
import json
import math
import os
import time

import torch
import torch.nn.functional as F
from torch import nn

import blockscale


# --------------------------------------------------------------------------
# Data: byte-level tokens of the standard library's sources
# --------------------------------------------------------------------------

def load_corpus(root, max_bytes):
    paths = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in ("__pycache__", "site-packages"))
        paths += [os.path.join(dirpath, f) for f in sorted(filenames) if f.endswith(".py")]
    buf = bytearray()
    for p in paths:
        try:
            with open(p, "rb") as f:
                buf += f.read() + b"\n"
        except OSError:
            continue
        if len(buf) >= max_bytes:
            break
    if len(buf) < 1 << 20:
        raise SystemExit(f"train_llama: only {len(buf)} bytes of .py files under {root}")
    data = torch.frombuffer(buf[:max_bytes], dtype=torch.uint8).to(torch.long)
    split = int(len(data) * 0.95)
    return data[:split], data[split:], len(paths)


def batches(data, steps, batch, seq, seed, device):
    """The same (x, y) sequence for every run with the same seed."""
    g = torch.Generator().manual_seed(seed)
    for _ in range(steps):
        starts = torch.randint(0, len(data) - seq - 1, (batch,), generator=g)
        idx = starts[:, None] + torch.arange(seq + 1)[None, :]
        chunk = data[idx].to(device, non_blocking=True)
        yield chunk[:, :-1], chunk[:, 1:]


# --------------------------------------------------------------------------
# A self-contained Llama
# --------------------------------------------------------------------------

class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        xf = x.float()
        return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + self.eps)).to(x.dtype) * self.weight


def rotary(seq, head_dim, theta=10000.0, device=None):
    inv = 1.0 / theta ** (torch.arange(0, head_dim, 2, device=device).float() / head_dim)
    f = torch.outer(torch.arange(seq, device=device).float(), inv)
    return f.cos(), f.sin()


def apply_rotary(x, cos, sin):  # x (B, H, T, D)
    x1, x2 = x[..., 0::2].float(), x[..., 1::2].float()
    c, s = cos[: x.shape[2]], sin[: x.shape[2]]
    out = torch.stack((x1 * c - x2 * s, x1 * s + x2 * c), dim=-1).flatten(-2)
    return out.to(x.dtype)


class Attention(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads, self.head_dim = heads, dim // heads
        self.wq = nn.Linear(dim, dim, bias=False)
        self.wk = nn.Linear(dim, dim, bias=False)
        self.wv = nn.Linear(dim, dim, bias=False)
        self.wo = nn.Linear(dim, dim, bias=False)

    def forward(self, x, cos, sin):
        b, t, d = x.shape
        q, k, v = (w(x).view(b, t, self.heads, self.head_dim).transpose(1, 2)
                   for w in (self.wq, self.wk, self.wv))
        q, k = apply_rotary(q, cos, sin), apply_rotary(k, cos, sin)
        o = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.wo(o.transpose(1, 2).reshape(b, t, d))


class SwiGLU(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.w1 = nn.Linear(dim, hidden, bias=False)
        self.w3 = nn.Linear(dim, hidden, bias=False)
        self.w2 = nn.Linear(hidden, dim, bias=False)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class Block(nn.Module):
    def __init__(self, dim, heads, hidden):
        super().__init__()
        self.attn_norm, self.attn = RMSNorm(dim), Attention(dim, heads)
        self.mlp_norm, self.mlp = RMSNorm(dim), SwiGLU(dim, hidden)

    def forward(self, x, cos, sin):
        x = x + self.attn(self.attn_norm(x), cos, sin)
        return x + self.mlp(self.mlp_norm(x))


class Llama(nn.Module):
    def __init__(self, dim, layers, heads, hidden, seq, vocab=256):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.layers = nn.ModuleList(Block(dim, heads, hidden) for _ in range(layers))
        self.norm = RMSNorm(dim)
        self.output = nn.Linear(dim, vocab, bias=False)
        cos, sin = rotary(seq, dim // heads)
        self.register_buffer("cos", cos, persistent=False)
        self.register_buffer("sin", sin, persistent=False)
        for m in self.modules():
            if isinstance(m, nn.Linear):
                nn.init.normal_(m.weight, std=0.02)
            elif isinstance(m, nn.Embedding):
                nn.init.normal_(m.weight, std=0.02)

    def forward(self, tokens):
        x = self.embed(tokens)
        for blk in self.layers:
            x = blk(x, self.cos, self.sin)
        return self.output(self.norm(x))


def ffn_hidden(dim, multiple=256):
    h = int(8 * dim / 3)
    return (h + multiple - 1) // multiple * multiple


def build_model(kind, args):
    hidden = ffn_hidden(args.hidden)
    if kind == "hf":
        from transformers import LlamaConfig, LlamaForCausalLM
        cfg = LlamaConfig(vocab_size=256, hidden_size=args.hidden, intermediate_size=hidden,
                          num_hidden_layers=args.layers, num_attention_heads=args.heads,
                          num_key_value_heads=args.heads, max_position_embeddings=args.seq,
                          tie_word_embeddings=False, attn_implementation="sdpa")
        model = LlamaForCausalLM(cfg)
        return model, (lambda m, x: m(input_ids=x).logits)
    return Llama(args.hidden, args.layers, args.heads, hidden, args.seq), (lambda m, x: m(x))


# --------------------------------------------------------------------------
# One run
# --------------------------------------------------------------------------

SKIP = ("output", "lm_head")


def swap_torchao(model, ao):
    """Every nn.Linear but the output head becomes torchao's
    Float8BlockwiseLinear (its weights, same initialization); returns the count."""
    n = 0
    for parent in list(model.modules()):
        for child_name, child in list(parent.named_children()):
            if type(child) is nn.Linear and child_name not in SKIP:
                setattr(parent, child_name, ao.linear.Float8BlockwiseLinear.from_float(child))
                n += 1
    return n


def run(name, fp8, kind, args, train, val, ao=None):
    torch.manual_seed(args.seed)
    model, forward = build_model(kind, args)
    model = model.to(device="cuda", dtype=torch.bfloat16)
    if ao is not None:
        print(f"[{name}] {swap_torchao(model, ao)} linear layers run through torchao "
              f"{ao.version}")
    elif fp8:
        cfg = blockscale.Float8BlockwiseConfig(skip_names=list(SKIP))
        report = blockscale.quantize_(model, cfg)
        print(f"[{name}] {len(report.converted)} linear layers run through blockscale "
              f"(kept bf16: {', '.join(sorted(report.skipped)) or 'none'})")
    # foreach: PyTorch's default multi-tensor AdamW; fused: its single-kernel
    # form, which training frameworks pick for speed (same update rule).
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, betas=(0.9, 0.95), weight_decay=0.1,
                            **{args.optimizer: True})
    step_fn = forward
    if args.compile:
        compiled = torch.compile(model)
        step_fn = lambda m, x: forward(compiled, x)  # noqa: E731
    tokens_per_step = args.batch * args.seq
    warm = min(args.warmup_steps, args.steps // 2)
    losses, timed_tokens, timed_s = [], 0, 0.0
    model.train()
    torch.cuda.synchronize()
    t_last, steps_since = time.perf_counter(), 0
    for step, (x, y) in enumerate(batches(train, args.steps, args.batch, args.seq, args.seed,
                                          "cuda"), 1):
        lr = args.lr * min(1.0, step / max(1, args.warmup_lr)) * \
            0.5 * (1 + math.cos(math.pi * min(1.0, step / args.steps)))
        for gp in opt.param_groups:
            gp["lr"] = max(lr, args.lr * 0.1)
        logits = step_fn(model, x)
        loss = F.cross_entropy(logits.float().view(-1, logits.shape[-1]), y.reshape(-1))
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        steps_since += 1
        if step % args.log_every == 0 or step == args.steps:
            lv = loss.item()  # synchronizes
            now = time.perf_counter()
            tps = steps_since * tokens_per_step / (now - t_last)
            if step > warm:
                timed_tokens += steps_since * tokens_per_step
                timed_s += now - t_last
            print(f"[{name}] step {step:5d}  loss {lv:.4f}  {tps / 1e3:8.1f}k tokens/s", flush=True)
            t_last, steps_since = now, 0
        losses.append(loss.detach())
    tail = torch.stack(losses[-10:]).float().mean().item()
    model.eval()
    with torch.no_grad():
        vl = [F.cross_entropy(step_fn(model, xv).float().view(-1, 256), yv.reshape(-1))
              for xv, yv in batches(val, args.val_batches, args.batch, args.seq, args.seed + 1,
                                    "cuda")]
    val_loss = torch.stack(vl).mean().item()
    tps = timed_tokens / timed_s if timed_s else float("nan")
    print(f"[{name}] final: train loss (last 10 steps) {tail:.4f}, val loss {val_loss:.4f}, "
          f"{tps / 1e3:.1f}k tokens/s ({1e3 * tokens_per_step / tps:.1f} ms/step) after step {warm}")
    del model, opt
    torch.cuda.empty_cache()
    return tail, val_loss, tps


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--hidden", type=int, default=2048, help="model width (multiple of 128)")
    ap.add_argument("--layers", type=int, default=8)
    ap.add_argument("--heads", type=int, default=16)
    ap.add_argument("--seq", type=int, default=1024, help="sequence length")
    ap.add_argument("--batch", type=int, default=8, help="sequences per step")
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--warmup-lr", type=int, default=20, help="steps of learning-rate warm-up")
    ap.add_argument("--log-every", type=int, default=10)
    ap.add_argument("--warmup-steps", type=int, default=20,
                    help="steps left out of tokens/s (kernel compilation, allocator warm-up)")
    ap.add_argument("--val-batches", type=int, default=8)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--model", choices=["auto", "hf", "builtin"], default="auto",
                    help="auto: transformers' LlamaForCausalLM if installed")
    ap.add_argument("--runs", choices=["both", "bf16", "blockscale", "all"], default="both",
                    help="both: bf16 and blockscale; all: also torchao's layer when found")
    ap.add_argument("--compile", action="store_true", help="torch.compile the models")
    ap.add_argument("--optimizer", choices=["foreach", "fused"], default="foreach",
                    help="AdamW implementation of both runs (fused: one kernel per step)")
    ap.add_argument("--data", default=os.path.dirname(os.__file__),
                    help="directory of .py files (default: the standard library)")
    ap.add_argument("--max-mb", type=float, default=32)
    ap.add_argument("--goal-speedup", type=float, default=1.3,
                    help="goal line: FP8 step time at least this much faster than bf16")
    ap.add_argument("--goal-loss-gap", type=float, default=1.0,
                    help="goal line: FP8 train and val loss within this many percent of bf16")
    ap.add_argument("--json", help="write the runs, gaps and goal lines to this file")
    args = ap.parse_args()
    if args.hidden % 128 or args.hidden % args.heads:
        raise SystemExit("--hidden must be a multiple of 128 and of --heads")

    blockscale.integrations.check_device()
    kind = args.model
    if kind == "auto":
        try:
            import transformers  # noqa: F401
            kind = "hf"
        except ImportError:
            kind = "builtin"
    train, val, nfiles = load_corpus(args.data, int(args.max_mb * (1 << 20)))
    print(f"corpus: {len(train) + len(val):,} bytes from {nfiles} files under {args.data}; "
          f"model: {kind}, hidden {args.hidden}, {args.layers} layers, {args.heads} heads, "
          f"FFN {ffn_hidden(args.hidden)}, seq {args.seq} x batch {args.batch} = "
          f"{args.seq * args.batch} tokens/step, {args.steps} steps; GPU "
          f"{torch.cuda.get_device_name()}; blockscale {blockscale._capi.version()}")

    res = {}
    if args.runs in ("both", "bf16", "all"):
        res["bf16"] = run("bf16", False, kind, args, train, val)
    if args.runs in ("both", "blockscale", "all"):
        res["blockscale"] = run("blockscale", True, kind, args, train, val)
    ao_res = None
    if args.runs == "all":
        import sys
        sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                                        "bench"))
        import torchao_anchor
        ao = torchao_anchor.load()
        if ao is not None:
            ao_res = run("torchao", True, kind, args, train, val, ao=ao)
    out = {"args": vars(args), "model": kind, "ffn": ffn_hidden(args.hidden),
           "gpu": torch.cuda.get_device_name(), "blockscale": blockscale._capi.version(),
           "runs": {k: {"train_loss": t, "val_loss": v, "tokens_per_s": s,
                        "ms_per_step": 1e3 * args.batch * args.seq / s} for k, (t, v, s) in res.items()}}
    if ao_res is not None:
        (tb, vb, sb), (ta, va, sa) = res["bf16"], ao_res
        out["runs"]["torchao"] = {"train_loss": ta, "val_loss": va, "tokens_per_s": sa,
                                  "ms_per_step": 1e3 * args.batch * args.seq / sa}
        print(f"torchao: loss gap {100 * (ta - tb) / tb:+.2f} % (train, last 10 steps: "
              f"{ta:.4f} vs {tb:.4f}), {100 * (va - vb) / vb:+.2f} % (val: {va:.4f} vs "
              f"{vb:.4f}); speedup {sa / sb:.3f}x over bf16")
    if len(res) == 2:
        (tb, vb, sb), (tf, vf, sf) = res["bf16"], res["blockscale"]
        gap, vgap, speedup = 100 * (tf - tb) / tb, 100 * (vf - vb) / vb, sf / sb
        print(f"summary: loss gap {gap:+.2f} % (train, last 10 steps: "
              f"{tf:.4f} vs {tb:.4f}), {vgap:+.2f} % (val: {vf:.4f} vs {vb:.4f}); "
              f"speedup {speedup:.3f}x ({sf / 1e3:.1f}k vs {sb / 1e3:.1f}k tokens/s, "
              f"{out['runs']['blockscale']['ms_per_step']:.1f} vs "
              f"{out['runs']['bf16']['ms_per_step']:.1f} ms/step)")
        goals = [f"goal step time >= {args.goal_speedup:.2f}x bf16: "
                 f"{'MET' if speedup >= args.goal_speedup else 'MISSED'} ({speedup:.3f}x)",
                 f"goal loss within {args.goal_loss_gap:g} % of bf16 after {args.steps} steps: "
                 f"{'MET' if max(abs(gap), abs(vgap)) <= args.goal_loss_gap else 'MISSED'} "
                 f"(train {gap:+.2f} %, val {vgap:+.2f} %)"]
        for g in goals:
            print(g)
        out.update(loss_gap_pct=gap, val_gap_pct=vgap, speedup=speedup, goals=goals)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
