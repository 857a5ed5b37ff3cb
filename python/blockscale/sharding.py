# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""DTensor sharding rules for the blockscale ops (``register_sharding``).

For ``scaled_mm(a (M,K), a_scale (M,Kb), b (K,N), b_scale)`` one mesh
dimension may:
  * replicate everything;
  * shard M: a and a_scale on rows, b and its scales replicated -> Shard(0);
  * shard N: b on columns and b_scale on its column dimension (N-blocks for
    128x128, N for 128x1), a replicated -> Shard(1);
  * shard K: a and a_scale on dim 1, b and b_scale on dim 0 -> Partial(sum).
The scale placements follow each recipe's real scale shape: the scales of a
sharded dimension are sharded on the same logical dimension. A shard
boundary must fall on a 128 boundary (K/devices, and N/devices for 128x128
weights); the op checks the local shapes and fails with the sizes otherwise.

For ``quantize(x (R,C), recipe, transpose, layout)``: replicate, or shard R
or C; q is sharded on the corresponding logical dimension (swapped when
transposed) and so is the scale tensor. ``quantize_dual`` follows the same
rule for both of its results (the second is the transposed one).
"""
import torch

_registered = False


def register():
    global _registered
    if _registered:
        return True
    try:
        from torch.distributed.tensor import Partial, Replicate, Shard
        from torch.distributed.tensor.experimental import register_sharding
    except Exception:  # torch without distributed
        return False

    @register_sharding(torch.ops.blockscale.scaled_mm.default)
    def _mm_strategies(a, a_scale, b, b_scale, recipe_a, recipe_b, out_dtype):
        R = Replicate()
        return [
            ([R], [R, R, R, R, None, None, None]),
            ([Shard(0)], [Shard(0), Shard(0), R, R, None, None, None]),
            ([Shard(1)], [R, R, Shard(1), Shard(1), None, None, None]),
            ([Partial()], [Shard(1), Shard(1), Shard(0), Shard(0), None, None, None]),
        ]

    @register_sharding(torch.ops.blockscale.quantize.default)
    def _quant_strategies(x, recipe, transpose=False, layout="row_major",
                          fp8_dtype=torch.float8_e4m3fn):
        R = Replicate()
        out = [([R, R], [R, None, None, None, None])]
        for d in (0, 1):
            od = 1 - d if transpose else d
            out.append(([Shard(od), Shard(od)], [Shard(d), None, None, None, None]))
        return out

    @register_sharding(torch.ops.blockscale.quantize_dual.default)
    def _dual_strategies(x, recipe, fp8_dtype=torch.float8_e4m3fn):
        R = Replicate()
        out = [([R, R, R, R], [R, None, None])]
        for d in (0, 1):
            out.append(([Shard(d), Shard(d), Shard(1 - d), Shard(1 - d)],
                        [Shard(d), None, None]))
        return out

    _registered = True
    return True


def mm_strategies():
    """The acceptable (output, input) placements of scaled_mm, for tests."""
    from torch.distributed.tensor import Partial, Replicate, Shard
    R = Replicate()
    return {
        "replicate": ([R], [R, R, R, R]),
        "M": ([Shard(0)], [Shard(0), Shard(0), R, R]),
        "N": ([Shard(1)], [R, R, Shard(1), Shard(1)]),
        "K": ([Partial()], [Shard(1), Shard(1), Shard(0), Shard(0)]),
    }
