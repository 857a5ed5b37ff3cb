// RUN: blockscale-opt %s --split-input-file --blockscale-shard-pipeline --verify-diagnostics

// Sharded programs that blockscale's shard pipeline rejects with a
// diagnostic. Several of them crash the upstream passes when run directly
// (docs/upstream-shard-issues.md); --blockscale-check-shardings guards them.

// A and B split K over different grid axes: every device would multiply
// blocks of different K ranges (upstream asserts, then keeps A's axes).
shard.grid @g(shape = 2x2)
func.func @conflicting_k(%a: tensor<256x1024xf8E4M3FN>, %as: tensor<256x8xf32>,
                         %b: tensor<1024x512xf8E4M3FN>, %bs: tensor<8x4xf32>) -> tensor<256x512xbf16> {
  %s_a = shard.sharding @g split_axes = [[], [0]] : !shard.sharding
  %s_b = shard.sharding @g split_axes = [[1]] : !shard.sharding
  %a0 = shard.shard %a to %s_a annotate_for_users : tensor<256x1024xf8E4M3FN>
  %as0 = shard.shard %as to %s_a annotate_for_users : tensor<256x8xf32>
  %b0 = shard.shard %b to %s_b annotate_for_users : tensor<1024x512xf8E4M3FN>
  %bs0 = shard.shard %bs to %s_b annotate_for_users : tensor<8x4xf32>
  // expected-error @+1 {{expected its operands to split loop K over the same grid axes but A splits it over [0] and B over [1]; reshard one of them}}
  %c = blockscale.matmul %a0[%as0], %b0[%bs0] {form = #blockscale.form<fwd>,
         a_recipe = #blockscale.recipe<blk_1x128>, b_recipe = #blockscale.recipe<blk_128x128>}
      : tensor<256x1024xf8E4M3FN>, tensor<256x8xf32>, tensor<1024x512xf8E4M3FN>, tensor<8x4xf32> -> tensor<256x512xbf16>
  return %c : tensor<256x512xbf16>
}

// -----

// One grid axis splitting both M (A's rows) and N (B's columns).
shard.grid @g(shape = 2)
func.func @axis_on_two_loops(%a: tensor<256x1024xf8E4M3FN>, %as: tensor<256x8xf32>,
                             %b: tensor<1024x512xf8E4M3FN>, %bs: tensor<8x4xf32>) -> tensor<256x512xbf16> {
  %s_a = shard.sharding @g split_axes = [[0]] : !shard.sharding
  %s_b = shard.sharding @g split_axes = [[], [0]] : !shard.sharding
  %a0 = shard.shard %a to %s_a annotate_for_users : tensor<256x1024xf8E4M3FN>
  %as0 = shard.shard %as to %s_a annotate_for_users : tensor<256x8xf32>
  %b0 = shard.shard %b to %s_b annotate_for_users : tensor<1024x512xf8E4M3FN>
  %bs0 = shard.shard %bs to %s_b annotate_for_users : tensor<8x4xf32>
  // expected-error @+1 {{expected each grid axis to split one loop but axis 0 of @g splits both M and N}}
  %c = blockscale.matmul %a0[%as0], %b0[%bs0] {form = #blockscale.form<fwd>,
         a_recipe = #blockscale.recipe<blk_1x128>, b_recipe = #blockscale.recipe<blk_128x128>}
      : tensor<256x1024xf8E4M3FN>, tensor<256x8xf32>, tensor<1024x512xf8E4M3FN>, tensor<8x4xf32> -> tensor<256x512xbf16>
  return %c : tensor<256x512xbf16>
}

// -----

// Operands on two grids (the device planner read the second grid's axes
// out of the first grid's shape).
shard.grid @g1(shape = 2)
// expected-error @+1 {{expected one shard.grid in a program the blockscale pipelines partition (a run uses one device grid) but got 2: @g1 and @g2}}
shard.grid @g2(shape = 4)
func.func @two_grids(%a: tensor<256x1024xf8E4M3FN>, %as: tensor<256x8xf32>,
                     %b: tensor<1024x512xf8E4M3FN>, %bs: tensor<8x4xf32>) -> tensor<256x512xbf16> {
  %s_a = shard.sharding @g1 split_axes = [[0]] : !shard.sharding
  %s_b = shard.sharding @g2 split_axes = [[], [0]] : !shard.sharding
  %a0 = shard.shard %a to %s_a annotate_for_users : tensor<256x1024xf8E4M3FN>
  %b0 = shard.shard %b to %s_b annotate_for_users : tensor<1024x512xf8E4M3FN>
  %c = blockscale.matmul %a0[%as], %b0[%bs] {form = #blockscale.form<fwd>,
         a_recipe = #blockscale.recipe<blk_1x128>, b_recipe = #blockscale.recipe<blk_128x128>}
      : tensor<256x1024xf8E4M3FN>, tensor<256x8xf32>, tensor<1024x512xf8E4M3FN>, tensor<8x4xf32> -> tensor<256x512xbf16>
  return %c : tensor<256x512xbf16>
}

// -----

// A grid size of 0 (upstream shard-partition divides by zero).
// expected-error @+1 {{expected grid @g to have static sizes >= 1 but got shape 0x2}}
shard.grid @g(shape = 0x2)
func.func @zero_grid(%x: tensor<256x512xbf16>) -> tensor<256x512xbf16> {
  %s = shard.sharding @g split_axes = [[0, 1]] : !shard.sharding
  %x0 = shard.shard %x to %s : tensor<256x512xbf16>
  return %x0 : tensor<256x512xbf16>
}

// -----

// 2^62 x 4 devices: the device count wraps int64 (upstream divides by the
// wrapped 0).
// expected-error @+1 {{expected grid @g to have at most 2^63 - 1 devices but its shape 4611686018427387904x4 has more}}
shard.grid @g(shape = 4611686018427387904x4)
func.func @huge_grid(%x: tensor<256x512xbf16>) -> tensor<256x512xbf16> {
  %s = shard.sharding @g split_axes = [[0, 1]] : !shard.sharding
  %x0 = shard.shard %x to %s : tensor<256x512xbf16>
  return %x0 : tensor<256x512xbf16>
}

// -----

// 2^62 devices fit in int64, but K = 1024 does not split into whole blocks
// over them (128 x 2^62 itself overflows: checked).
shard.grid @g(shape = 4611686018427387904)
func.func @k_over_2_62(%a: tensor<256x1024xf8E4M3FN>, %as: tensor<256x8xf32>,
                       %b: tensor<1024x512xf8E4M3FN>, %bs: tensor<8x4xf32>) -> tensor<256x512xbf16> {
  %s_a = shard.sharding @g split_axes = [[], [0]] : !shard.sharding
  %s_b = shard.sharding @g split_axes = [[0]] : !shard.sharding
  %a0 = shard.shard %a to %s_a annotate_for_users : tensor<256x1024xf8E4M3FN>
  %as0 = shard.shard %as to %s_a annotate_for_users : tensor<256x8xf32>
  %b0 = shard.shard %b to %s_b annotate_for_users : tensor<1024x512xf8E4M3FN>
  %bs0 = shard.shard %bs to %s_b annotate_for_users : tensor<8x4xf32>
  // expected-error @+1 {{expected K = 1024 split over 4611686018427387904 devices to give every device whole 128-element scale blocks but got 0.00 blocks per device (8 blocks in all); use a device count that divides 8, or run}}
  %c = blockscale.matmul %a0[%as0], %b0[%bs0] {form = #blockscale.form<fwd>,
         a_recipe = #blockscale.recipe<blk_1x128>, b_recipe = #blockscale.recipe<blk_128x128>}
      : tensor<256x1024xf8E4M3FN>, tensor<256x8xf32>, tensor<1024x512xf8E4M3FN>, tensor<8x4xf32> -> tensor<256x512xbf16>
  return %c : tensor<256x512xbf16>
}

// -----

// Halo sizes (upstream shard-partition reads past them or prints garbage).
shard.grid @g(shape = 2)
func.func @halo(%a: tensor<256x1024xf8E4M3FN>, %as: tensor<256x8xf32>,
                %b: tensor<1024x512xf8E4M3FN>, %bs: tensor<8x4xf32>) -> tensor<256x512xbf16> {
  // expected-error @+1 {{expected no halo_sizes (blockscale ops read no halos, and upstream shard-partition mishandles them) but got 2 halo sizes}}
  %s_a = shard.sharding @g split_axes = [[0]] halo_sizes = [1, 2] : !shard.sharding
  %a0 = shard.shard %a to %s_a annotate_for_users : tensor<256x1024xf8E4M3FN>
  %c = blockscale.matmul %a0[%as], %b[%bs] {form = #blockscale.form<fwd>,
         a_recipe = #blockscale.recipe<blk_1x128>, b_recipe = #blockscale.recipe<blk_128x128>}
      : tensor<256x1024xf8E4M3FN>, tensor<256x8xf32>, tensor<1024x512xf8E4M3FN>, tensor<8x4xf32> -> tensor<256x512xbf16>
  return %c : tensor<256x512xbf16>
}

// -----

// More split-axes entries than the tensor has dimensions (upstream writes
// past the local shape).
shard.grid @g(shape = 2)
func.func @too_many_split_axes(%x: tensor<256x512xbf16>) -> tensor<256x512xbf16> {
  %s = shard.sharding @g split_axes = [[], [], [0]] : !shard.sharding
  // expected-error @+1 {{expected at most 2 split-axes entries (one per dimension of 'tensor<256x512xbf16>') but got 3}}
  %x0 = shard.shard %x to %s : tensor<256x512xbf16>
  return %x0 : tensor<256x512xbf16>
}

// -----

// The sharding of a shard.shard must be a shard.sharding (upstream's
// Sharding(Value) dereferences its defining op).
shard.grid @g(shape = 2)
func.func @sharding_argument(%x: tensor<256x512xbf16>, %s: !shard.sharding) -> tensor<256x512xbf16> {
  // expected-error @+1 {{expected its sharding to be a shard.sharding op's result but got a block argument}}
  %x0 = shard.shard %x to %s : tensor<256x512xbf16>
  return %x0 : tensor<256x512xbf16>
}

// -----

// User-given shard offsets: checked against the tensor.
shard.grid @g(shape = 2)
func.func @offsets_past_the_end(%x: tensor<256x512xbf16>) -> tensor<256x512xbf16> {
  %s = shard.sharding @g split_axes = [[0]] sharded_dims_offsets = [0, 128, 300] : !shard.sharding
  // expected-error @+1 {{expected the sharded_dims_offsets of dimension 0 of 'tensor<256x512xbf16>' to run from 0 to 256 without decreasing but got [0, 128, 300]}}
  %x0 = shard.shard %x to %s : tensor<256x512xbf16>
  return %x0 : tensor<256x512xbf16>
}

// -----

shard.grid @g(shape = 2)
func.func @offsets_extra(%x: tensor<256x512xbf16>) -> tensor<256x512xbf16> {
  %s = shard.sharding @g split_axes = [[0]] sharded_dims_offsets = [0, 128, 256, 256] : !shard.sharding
  // expected-error @+1 {{expected 3 sharded_dims_offsets for 'tensor<256x512xbf16>' but got 4}}
  %x0 = shard.shard %x to %s : tensor<256x512xbf16>
  return %x0 : tensor<256x512xbf16>
}

// -----

// Uneven user offsets on the operands of a matmul, which sharding-propagation
// reshards to the even split the matmul asks for: shard-partition cannot
// lower that and would leave the operands unmapped (the partition used to
// dereference them).
shard.grid @g(shape = 2)
func.func @uneven_user_offsets(%a: tensor<256x1024xf8E4M3FN>, %as: tensor<256x8xf32>,
                               %b: tensor<1024x512xf8E4M3FN>, %bs: tensor<8x4xf32>) -> tensor<256x512xbf16> {
  %s_a = shard.sharding @g split_axes = [[], [0]] sharded_dims_offsets = [0, 384, 1024] : !shard.sharding
  %s_as = shard.sharding @g split_axes = [[], [0]] sharded_dims_offsets = [0, 3, 8] : !shard.sharding
  %s_b = shard.sharding @g split_axes = [[0]] sharded_dims_offsets = [0, 384, 1024] : !shard.sharding
  %s_bs = shard.sharding @g split_axes = [[0]] sharded_dims_offsets = [0, 3, 8] : !shard.sharding
  // expected-error @+1 {{expected a resharding between shardings without sharded_dims_offsets (shard-partition lowers none) but got split_axes [[], [0]] -> [[], [0]], sharded_dims_offsets [0, 384, 1024] -> []}}
  %a0 = shard.shard %a to %s_a annotate_for_users : tensor<256x1024xf8E4M3FN>
  // expected-error @+1 {{sharded_dims_offsets [0, 3, 8] -> []}}
  %as0 = shard.shard %as to %s_as annotate_for_users : tensor<256x8xf32>
  // expected-error @+1 {{split_axes [[0]] -> [[0]], sharded_dims_offsets [0, 384, 1024] -> []}}
  %b0 = shard.shard %b to %s_b annotate_for_users : tensor<1024x512xf8E4M3FN>
  // expected-error @+1 {{split_axes [[0]] -> [[0]], sharded_dims_offsets [0, 3, 8] -> []}}
  %bs0 = shard.shard %bs to %s_bs annotate_for_users : tensor<8x4xf32>
  %c = blockscale.matmul %a0[%as0], %b0[%bs0] {form = #blockscale.form<fwd>,
         a_recipe = #blockscale.recipe<blk_1x128>, b_recipe = #blockscale.recipe<blk_128x128>}
      : tensor<256x1024xf8E4M3FN>, tensor<256x8xf32>, tensor<1024x512xf8E4M3FN>, tensor<8x4xf32> -> tensor<256x512xbf16>
  return %c : tensor<256x512xbf16>
}

// -----

// Offsets on a dimension split over two axes: upstream counts its shards as
// the sum of the axis sizes, not their product.
shard.grid @g(shape = 2x2)
func.func @offsets_two_axes(%x: tensor<256x512xbf16>) -> tensor<256x512xbf16> {
  // expected-error @+1 {{expected sharded_dims_offsets only with dimensions split over one grid axis (upstream counts the shards of several axes as their sum) but a dimension is split over 2 axes}}
  %s = shard.sharding @g split_axes = [[0, 1]] sharded_dims_offsets = [0, 64, 128, 192, 256] : !shard.sharding
  %x0 = shard.shard %x to %s : tensor<256x512xbf16>
  return %x0 : tensor<256x512xbf16>
}

// -----

// 256 tokens over 3 devices: shard-partition would give each 85.
shard.grid @g(shape = 3)
func.func @uneven_m(%a: tensor<256x1024xf8E4M3FN>, %as: tensor<256x8xf32>,
                    %b: tensor<1024x512xf8E4M3FN>, %bs: tensor<8x4xf32>) -> tensor<256x512xbf16> {
  %s_a = shard.sharding @g split_axes = [[0]] : !shard.sharding
  // expected-error @+1 {{expected dimension 0 (= 256) of 'tensor<256x1024xf8E4M3FN>' to split evenly over 3 devices (grid axes of @g) but 256 % 3 = 1}}
  %a0 = shard.shard %a to %s_a annotate_for_users : tensor<256x1024xf8E4M3FN>
  // expected-error @+1 {{expected dimension 0 (= 256) of 'tensor<256x8xf32>' to split evenly over 3 devices}}
  %as0 = shard.shard %as to %s_a annotate_for_users : tensor<256x8xf32>
  // The result's sharding, which propagation adds, too.
  // expected-error @+1 {{expected dimension 0 (= 256) of 'tensor<256x512xbf16>' to split evenly over 3 devices}}
  %c = blockscale.matmul %a0[%as0], %b[%bs] {form = #blockscale.form<fwd>,
         a_recipe = #blockscale.recipe<blk_1x128>, b_recipe = #blockscale.recipe<blk_128x128>}
      : tensor<256x1024xf8E4M3FN>, tensor<256x8xf32>, tensor<1024x512xf8E4M3FN>, tensor<8x4xf32> -> tensor<256x512xbf16>
  return %c : tensor<256x512xbf16>
}

// -----

// Propagation leaves the weight's cast unannotated (nothing asks for its
// sharding before the matmul): shard-partition takes every tensor
// argument's only use as its sharding and dereferenced a null shard.shard.
shard.grid @g(shape = 2)
// expected-error @+1 {{expected tensor argument #1 to be used once, by a shard.shard (shard-partition reads its sharding there) but it has 1 use(s) and not one shard.shard}}
func.func @partly_annotated(%x: tensor<256x1024xbf16>, %w: tensor<512x1024xbf16>) -> tensor<256x512xbf16> {
  %s = shard.sharding @g split_axes = [[], [0]] : !shard.sharding
  %x0 = shard.shard %x to %s annotate_for_users : tensor<256x1024xbf16>
  %aq, %as = blockscale.quantize %x0 {recipe = #blockscale.recipe<blk_1x128>}
      : tensor<256x1024xbf16> -> tensor<256x1024xf8E4M3FN>, tensor<256x8xf32>
  %wq, %ws = blockscale.quantize %w {recipe = #blockscale.recipe<blk_128x128>, transpose, layout = #blockscale.layout<col_major>}
      : tensor<512x1024xbf16> -> tensor<1024x512xf8E4M3FN>, tensor<8x4xf32>
  %c = blockscale.matmul %aq[%as], %wq[%ws] {form = #blockscale.form<fwd>,
         a_recipe = #blockscale.recipe<blk_1x128>, b_recipe = #blockscale.recipe<blk_128x128>}
      : tensor<256x1024xf8E4M3FN>, tensor<256x8xf32>, tensor<1024x512xf8E4M3FN>, tensor<8x4xf32> -> tensor<256x512xbf16>
  return %c : tensor<256x512xbf16>
}


// -----

// Ops without sharding rules are named with a fix, sharded or not (upstream
// sharding-propagation stops at them without one).
func.func @dual_cast(%x: tensor<256x512xbf16>) -> (tensor<256x512xf8E4M3FN>, tensor<512x256xf8E4M3FN>) {
  // expected-error @+1 {{'blockscale.quantize_dual' op expected only blockscale ops with sharding rules (matmul, quantize) in a program the shard pipeline partitions but got blockscale.quantize_dual, which has none; write it as two blockscale.quantize ops}}
  %q, %s, %t, %ts = blockscale.quantize_dual %x {recipe = #blockscale.recipe<blk_1x128>}
      : tensor<256x512xbf16> -> tensor<256x512xf8E4M3FN>, tensor<256x4xf32>, tensor<512x256xf8E4M3FN>, tensor<512x2xf32>
  return %q, %t : tensor<256x512xf8E4M3FN>, tensor<512x256xf8E4M3FN>
}

// -----

func.func @experts(%a: tensor<1024x7168xf8E4M3FN>, %as: tensor<1024x56xf32>,
                   %b: tensor<8x7168x4096xf8E4M3FN>, %bs: tensor<8x56x32xf32>,
                   %offs: tensor<8xi32>) -> tensor<1024x4096xbf16> {
  // expected-error @+1 {{'blockscale.grouped_matmul' op expected only blockscale ops with sharding rules (matmul, quantize) in a program the shard pipeline partitions but got blockscale.grouped_matmul, which has none; run it outside the sharded program, on each device's own operands}}
  %c = blockscale.grouped_matmul %a[%as], %b[%bs] groups(%offs : tensor<8xi32>)
          {grouping = #blockscale.grouping<m_contiguous>}
      : tensor<1024x7168xf8E4M3FN>, tensor<1024x56xf32>, tensor<8x7168x4096xf8E4M3FN>, tensor<8x56x32xf32> -> tensor<1024x4096xbf16>
  return %c : tensor<1024x4096xbf16>
}
