# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Sharded-vs-unsharded parity of an FP8 (blockscale) ToyModel FFN.

Run with torchrun, one process per GPU:

  torchrun --nproc-per-node 2 test/gpu/multigpu/toy_parity.py --dp 1 --tp 2   # TP
  torchrun --nproc-per-node 2 test/gpu/multigpu/toy_parity.py --dp 2 --tp 1   # FSDP2
  torchrun --nproc-per-node 4 test/gpu/multigpu/toy_parity.py --dp 2 --tp 2   # TP, then FSDP2 on dp

The model: two FFN blocks, each out_proj(silu(w1(x)) * w2(x)) with bf16
master weights and every nn.Linear swapped for Float8BlockwiseLinear. TP
(tp > 1): w1, w2 ColwiseParallel, out_proj RowwiseParallel. FSDP2 (dp > 1):
fully_shard on every block and on the root. The reference is the same FP8
model, unsharded, on every rank. Compared after one forward, backward and
AdamW step: outputs, loss, gradients and parameters (atol = rtol = 2e-2,
and the relative Frobenius error <= 2e-2, 5e-2 for gradients; loss to 1e-3
relative). With
--dp 1 --tp 1 --apply tp|fsdp|both it runs those code paths on one GPU.
"""
import argparse
import copy
import os
import sys

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "python"))
import blockscale  # noqa: E402
import blockscale.nn  # noqa: E402


class FFN(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.w1 = nn.Linear(dim, hidden, bias=False)
        self.w2 = nn.Linear(dim, hidden, bias=False)
        self.out_proj = nn.Linear(hidden, dim, bias=False)

    def forward(self, x):
        return self.out_proj(F.silu(self.w1(x)) * self.w2(x))


class ToyModel(nn.Module):
    def __init__(self, dim=1024, hidden=2048, layers=2):
        super().__init__()
        self.layers = nn.ModuleList(FFN(dim, hidden) for _ in range(layers))

    def forward(self, x):
        for layer in self.layers:
            x = x + layer(x)
        return x


def full(t):
    from torch.distributed.tensor import DTensor
    return t.full_tensor() if isinstance(t, DTensor) else t


def compare(name, got, want, tol, failures, rank, rel_tol=None):
    got, want = full(got).float(), full(want).float()
    rel = ((got - want).norm() / want.norm().clamp_min(1e-30)).item()
    ok = rel <= (rel_tol or tol) and torch.allclose(got, want, atol=tol, rtol=tol)
    if rank == 0:
        print(f"{name:40s} rel_err {rel:.3e} max_abs {(got - want).abs().max().item():.3e} "
              f"{'ok' if ok else 'FAIL'}", flush=True)
    if not ok:
        failures.append(name)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--dp", type=int, default=1)
    p.add_argument("--tp", type=int, default=1)
    p.add_argument("--tokens", type=int, default=1024)
    p.add_argument("--apply", choices=["auto", "tp", "fsdp", "both"], default="auto",
                   help="which parallelisms to apply (auto: those whose mesh "
                        "dimension is > 1); tp/fsdp/both on a 1x1 mesh run "
                        "their code paths on one GPU")
    args = p.parse_args()

    dist.init_process_group("nccl")
    rank, world = dist.get_rank(), dist.get_world_size()
    assert world == args.dp * args.tp, f"expected {args.dp * args.tp} processes but got {world}"
    torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", rank)))
    from torch.distributed.device_mesh import init_device_mesh
    mesh = init_device_mesh("cuda", (args.dp, args.tp), mesh_dim_names=("dp", "tp"))

    torch.manual_seed(0)
    ref = ToyModel().to(device="cuda", dtype=torch.bfloat16)
    for prm in ref.parameters():  # weights of realistic scale
        nn.init.normal_(prm, std=0.02)
    model = copy.deepcopy(ref)
    blockscale.nn.convert(ref)
    blockscale.nn.convert(model)
    assert all(type(m).__name__ == "Float8BlockwiseLinear"
               for layer in model.layers for m in (layer.w1, layer.w2, layer.out_proj))

    use_tp = args.apply in ("tp", "both") or (args.apply == "auto" and args.tp > 1)
    use_fsdp = args.apply in ("fsdp", "both") or (args.apply == "auto" and args.dp > 1)
    if use_tp:
        from torch.distributed.tensor.parallel import (ColwiseParallel, RowwiseParallel,
                                                       parallelize_module)
        for layer in model.layers:
            parallelize_module(layer, mesh["tp"], {
                "w1": ColwiseParallel(), "w2": ColwiseParallel(),
                "out_proj": RowwiseParallel()})
    if use_fsdp:
        from torch.distributed.fsdp import fully_shard
        for layer in model.layers:
            fully_shard(layer, mesh=mesh["dp"])
        fully_shard(model, mesh=mesh["dp"])

    # Every rank feeds the same batch (the data-parallel ranks would differ in
    # training; equal batches make the reference exact for every rank).
    g = torch.Generator(device="cuda").manual_seed(1)
    x = torch.randn(args.tokens // 256, 256, 1024, device="cuda", dtype=torch.bfloat16,
                    generator=g)
    target = torch.randn(x.shape, device="cuda", dtype=torch.bfloat16, generator=g)

    opt_ref = torch.optim.AdamW(ref.parameters(), lr=1e-3, foreach=False)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, foreach=False)
    failures = []

    out_ref = ref(x)
    loss_ref = F.mse_loss(out_ref.float(), target.float())
    out = model(x)
    loss = F.mse_loss(full(out).float(), target.float())
    compare("output", out, out_ref, 2e-2, failures, rank)
    lrel = abs(loss.item() - loss_ref.item()) / abs(loss_ref.item())
    if rank == 0:
        print(f"{'loss':40s} {loss.item():.6f} vs {loss_ref.item():.6f} rel {lrel:.2e} "
              f"{'ok' if lrel <= 1e-3 else 'FAIL'}", flush=True)
    if lrel > 1e-3:
        failures.append("loss")

    loss_ref.backward()
    loss.backward()
    named_ref = dict(ref.named_parameters())
    for n, prm in model.named_parameters():
        # Gradients are small (|g| ~ 1e-5), so atol alone says little; the
        # relative error is bounded at 5e-2: on a 1x1 mesh the first block's
        # dW already differed by up to 2.8e-2 (likely a different bf16
        # summation order of dx feeding its FP8 casts). A missing or doubled
        # reduction is O(1).
        compare(f"grad {n}", prm.grad, named_ref[n].grad, 2e-2, failures, rank,
                rel_tol=5e-2)
    opt_ref.step()
    opt.step()
    for n, prm in model.named_parameters():
        compare(f"param after step {n}", prm, named_ref[n], 2e-2, failures, rank)

    ok = torch.tensor([0 if failures else 1], device="cuda")
    dist.all_reduce(ok, op=dist.ReduceOp.MIN)
    if rank == 0:
        print(f"toy parity dp={args.dp} tp={args.tp} tp_applied={use_tp} "
              f"fsdp_applied={use_fsdp}: "
              f"{'PASS' if ok.item() else 'FAIL ' + ', '.join(failures)}", flush=True)
    dist.destroy_process_group()
    sys.exit(0 if ok.item() else 1)


if __name__ == "__main__":
    main()
