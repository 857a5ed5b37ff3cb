// RUN: blockscale-opt %s --split-input-file --verify-diagnostics

// One case per verifier branch of the dialect.

func.func @quantize_result_shape(%x: tensor<256x512xbf16>) {
  // expected-error @+1 {{expected result shape 512x256 (the input transposed) but got 256x512}}
  %q, %s = blockscale.quantize %x {recipe = #blockscale.recipe<blk_1x128>, transpose}
      : tensor<256x512xbf16> -> tensor<256x512xf8E4M3FN>, tensor<256x4xf32>
  return
}

// -----

func.func @quantize_scale_partial_block(%x: tensor<300x1000xbf16>) {
  // Partial blocks round up: ceil(1000 / 128) = 8.
  // expected-error @+1 {{expected scale shape 300x8 for 1x128 blocks of a 300x1000 result but got 300x7}}
  %q, %s = blockscale.quantize %x {recipe = #blockscale.recipe<blk_1x128>}
      : tensor<300x1000xbf16> -> tensor<300x1000xf8E4M3FN>, tensor<300x7xf32>
  return
}

// -----

func.func @quantize_scale_128x128(%x: tensor<300x1000xbf16>) {
  // expected-error @+1 {{expected scale shape 3x8 for 128x128 blocks of a 300x1000 result but got 8x3}}
  %q, %s = blockscale.quantize %x {recipe = #blockscale.recipe<blk_128x128>}
      : tensor<300x1000xbf16> -> tensor<300x1000xf8E4M3FN>, tensor<8x3xf32>
  return
}

// -----

func.func @quantize_dynamic_mismatch(%x: tensor<?x256xbf16>) {
  // expected-error @+1 {{expected scale shape ?x256 for 128x1 blocks of a ?x256 result but got 4x256}}
  %q, %s = blockscale.quantize %x {recipe = #blockscale.recipe<blk_128x1>}
      : tensor<?x256xbf16> -> tensor<?x256xf8E4M3FN>, tensor<4x256xf32>
  return
}

// -----

func.func @quantize_tensorwise_scale(%x: tensor<256x256xbf16>) {
  // expected-error @+1 {{expected scale shape scalar for tensorwise blocks of a 256x256 result but got 1x1}}
  %q, %s = blockscale.quantize %x {recipe = #blockscale.recipe<tensorwise>}
      : tensor<256x256xbf16> -> tensor<256x256xf8E4M3FN>, tensor<1x1xf32>
  return
}

// -----

func.func @quantize_tensorwise_layout(%x: tensor<256x256xbf16>) {
  // expected-error @+1 {{expected no scale_layout for a tensorwise (scalar) scale}}
  %q, %s = blockscale.quantize %x {recipe = #blockscale.recipe<tensorwise>,
                                   scale_layout = #blockscale.scale_layout<col_major>}
      : tensor<256x256xbf16> -> tensor<256x256xf8E4M3FN>, tensor<f32>
  return
}

// -----

func.func @quantize_not_fp8(%x: tensor<256x256xbf16>) {
  // expected-error @+1 {{result #0 must be 2D tensor of f8E4M3FN type or f8E5M2 type values, but got 'tensor<256x256xbf16>'}}
  %q, %s = blockscale.quantize %x {recipe = #blockscale.recipe<blk_1x128>}
      : tensor<256x256xbf16> -> tensor<256x256xbf16>, tensor<256x2xf32>
  return
}

// -----

// blockscale.quantize_dual: the rules of blockscale.quantize for each result,
// then its own.

func.func @quantize_dual_result_shape(%x: tensor<256x512xbf16>) {
  // expected-error @+1 {{expected result shape 256x512 but got 512x256}}
  %q, %s, %t, %ts = blockscale.quantize_dual %x {recipe = #blockscale.recipe<blk_1x128>}
      : tensor<256x512xbf16> -> tensor<512x256xf8E4M3FN>, tensor<256x4xf32>, tensor<512x256xf8E4M3FN>, tensor<512x2xf32>
  return
}

// -----

func.func @quantize_dual_scale_shape(%x: tensor<256x512xbf16>) {
  // expected-error @+1 {{expected scale shape 256x4 for 1x128 blocks of a 256x512 result but got 256x2}}
  %q, %s, %t, %ts = blockscale.quantize_dual %x {recipe = #blockscale.recipe<blk_1x128>}
      : tensor<256x512xbf16> -> tensor<256x512xf8E4M3FN>, tensor<256x2xf32>, tensor<512x256xf8E4M3FN>, tensor<512x2xf32>
  return
}

// -----

func.func @quantize_dual_unranked_scale(%x: tensor<?x512xbf16>) {
  // expected-error @+1 {{expected scales of shape ?x4 (a ranked tensor) but got 'tensor<*xf32>'}}
  %q, %s, %t, %ts = blockscale.quantize_dual %x {recipe = #blockscale.recipe<blk_1x128>}
      : tensor<?x512xbf16> -> tensor<?x512xf8E4M3FN>, tensor<*xf32>, tensor<512x?xf8E4M3FN>, tensor<512x?xf32>
  return
}

// -----

func.func @quantize_dual_scale_layout_overflow(%x: tensor<256x512xbf16>) {
  // expected-error @+1 {{expected scale_layout #blockscale.scale_layout<row_major, align = 2305843009213693952> to give 256x4 scales a buffer of at most 2^63 - 1 bytes but its padded size overflows int64}}
  %q, %s, %t, %ts = blockscale.quantize_dual %x {recipe = #blockscale.recipe<blk_1x128>,
                                                 scale_layout = #blockscale.scale_layout<row_major, align = 2305843009213693952>}
      : tensor<256x512xbf16> -> tensor<256x512xf8E4M3FN>, tensor<256x4xf32>, tensor<512x256xf8E4M3FN>, tensor<512x2xf32>
  return
}

// -----

func.func @quantize_dual_t_result_shape(%x: tensor<256x512xbf16>) {
  // expected-error @+1 {{expected t_result shape 512x256 (the input transposed) but got 256x512}}
  %q, %s, %t, %ts = blockscale.quantize_dual %x {recipe = #blockscale.recipe<blk_1x128>}
      : tensor<256x512xbf16> -> tensor<256x512xf8E4M3FN>, tensor<256x4xf32>, tensor<256x512xf8E4M3FN>, tensor<512x2xf32>
  return
}

// -----

// The weight: the in-order result is the transposed one's logical shape.
func.func @quantize_dual_t_result_shape_weight(%w: tensor<2112x7168xbf16>) {
  // expected-error @+1 {{expected t_result shape 2112x7168 but got 7168x2112}}
  %q, %s, %t, %ts = blockscale.quantize_dual %w {recipe = #blockscale.recipe<blk_128x128>, transpose,
                                                 layout = #blockscale.layout<col_major>}
      : tensor<2112x7168xbf16> -> tensor<7168x2112xf8E4M3FN>, tensor<56x17xf32>, tensor<7168x2112xf8E4M3FN>, tensor<17x56xf32>
  return
}

// -----

func.func @quantize_dual_t_scale_shape(%x: tensor<256x512xbf16>) {
  // The transposed result's 1x128 blocks run along the input's rows.
  // expected-error @+1 {{expected t_scale shape 512x2 for 1x128 blocks of a 512x256 t_result but got 512x4}}
  %q, %s, %t, %ts = blockscale.quantize_dual %x {recipe = #blockscale.recipe<blk_1x128>}
      : tensor<256x512xbf16> -> tensor<256x512xf8E4M3FN>, tensor<256x4xf32>, tensor<512x256xf8E4M3FN>, tensor<512x4xf32>
  return
}

// -----

func.func @quantize_dual_unranked_t_scale(%x: tensor<?x512xbf16>) {
  // expected-error @+1 {{expected t_scales of shape 512x? (a ranked tensor) but got 'tensor<*xf32>'}}
  %q, %s, %t, %ts = blockscale.quantize_dual %x {recipe = #blockscale.recipe<blk_1x128>}
      : tensor<?x512xbf16> -> tensor<?x512xf8E4M3FN>, tensor<?x4xf32>, tensor<512x?xf8E4M3FN>, tensor<*xf32>
  return
}

// -----

func.func @quantize_dual_t_scale_layout_overflow(%x: tensor<256x512xbf16>) {
  // expected-error @+1 {{expected t_scale_layout #blockscale.scale_layout<row_major, align = 4611686018427387904> to give 512x2 scales a buffer of at most 2^63 - 1 bytes but its padded size overflows int64}}
  %q, %s, %t, %ts = blockscale.quantize_dual %x {recipe = #blockscale.recipe<blk_1x128>,
                                                 t_scale_layout = #blockscale.scale_layout<row_major, align = 4611686018427387904>}
      : tensor<256x512xbf16> -> tensor<256x512xf8E4M3FN>, tensor<256x4xf32>, tensor<512x256xf8E4M3FN>, tensor<512x2xf32>
  return
}

// -----

func.func @quantize_dual_tensorwise_t_scale_layout(%x: tensor<256x512xbf16>) {
  // expected-error @+1 {{expected no t_scale_layout for a tensorwise (scalar) scale but got #blockscale.scale_layout<col_major>}}
  %q, %s, %t, %ts = blockscale.quantize_dual %x {recipe = #blockscale.recipe<tensorwise>,
                                                 t_scale_layout = #blockscale.scale_layout<col_major>}
      : tensor<256x512xbf16> -> tensor<256x512xf8E4M3FN>, tensor<f32>, tensor<512x256xf8E4M3FN>, tensor<f32>
  return
}

// -----

// 2^61 x 128 bf16 elements: 2^69 bytes.
func.func @quantize_dual_bytes_overflow(%x: tensor<2305843009213693952x128xbf16>) {
  // expected-error @+1 {{expected operand #0 to hold at most 2^63 - 1 bytes but got 'tensor<2305843009213693952x128xbf16>'}}
  %q, %s, %t, %ts = blockscale.quantize_dual %x {recipe = #blockscale.recipe<blk_1x128>}
      : tensor<2305843009213693952x128xbf16> -> tensor<2305843009213693952x128xf8E4M3FN>, tensor<2305843009213693952x1xf32>,
        tensor<128x2305843009213693952xf8E4M3FN>, tensor<128x18014398509481984xf32>
  return
}

// -----

func.func @quantize_dual_fp8_types(%x: tensor<256x512xbf16>) {
  // expected-error @+1 {{expected t_result with the FP8 type of result ('f8E4M3FN') but got 'f8E5M2'; use two blockscale.quantize ops}}
  %q, %s, %t, %ts = blockscale.quantize_dual %x {recipe = #blockscale.recipe<blk_1x128>}
      : tensor<256x512xbf16> -> tensor<256x512xf8E4M3FN>, tensor<256x4xf32>, tensor<512x256xf8E5M2>, tensor<512x2xf32>
  return
}

// -----

// dY^T first: that result is the transposed one.
func.func @quantize_dual_first_transposed(%x: tensor<256x512xbf16>) {
  // expected-error @+1 {{expected result in input order (transpose and layout = col_major agree) but got transpose with layout = row_major; swap the results (negate transpose)}}
  %q, %s, %t, %ts = blockscale.quantize_dual %x {recipe = #blockscale.recipe<blk_1x128>, transpose}
      : tensor<256x512xbf16> -> tensor<512x256xf8E4M3FN>, tensor<512x2xf32>, tensor<256x512xf8E4M3FN>, tensor<256x4xf32>
  return
}

// -----

// The weight's grad-input operand first: also the transposed one.
func.func @quantize_dual_first_transposed_weight(%w: tensor<2112x7168xbf16>) {
  // expected-error @+1 {{expected result in input order (transpose and layout = col_major agree) but got no transpose with layout = col_major; swap the results (negate transpose)}}
  %q, %s, %t, %ts = blockscale.quantize_dual %w {recipe = #blockscale.recipe<blk_128x128>,
                                                 layout = #blockscale.layout<col_major>}
      : tensor<2112x7168xbf16> -> tensor<2112x7168xf8E4M3FN>, tensor<17x56xf32>, tensor<7168x2112xf8E4M3FN>, tensor<56x17xf32>
  return
}

// -----

func.func @quantize_dual_128x1_in_order(%x: tensor<256x512xbf16>) {
  // expected-error @+1 {{expected result blocks of 1x128 or 128x128 in the input's frame but got 128x1; use two blockscale.quantize ops}}
  %q, %s, %t, %ts = blockscale.quantize_dual %x {recipe = #blockscale.recipe<blk_128x1>}
      : tensor<256x512xbf16> -> tensor<256x512xf8E4M3FN>, tensor<2x512xf32>, tensor<512x256xf8E4M3FN>, tensor<4x256xf32>
  return
}

// -----

// 1x128 of the transpose, in input order (col_major): 128x1 of the input.
func.func @quantize_dual_1x128_of_transpose_in_order(%x: tensor<256x512xbf16>) {
  // expected-error @+1 {{expected result blocks of 1x128 or 128x128 in the input's frame but got 128x1; use two blockscale.quantize ops}}
  %q, %s, %t, %ts = blockscale.quantize_dual %x {recipe = #blockscale.recipe<blk_1x128>, transpose,
                                                 layout = #blockscale.layout<col_major>}
      : tensor<256x512xbf16> -> tensor<512x256xf8E4M3FN>, tensor<512x2xf32>, tensor<256x512xf8E4M3FN>, tensor<256x4xf32>
  return
}

// -----

func.func @quantize_dual_tensorwise(%x: tensor<256x512xbf16>) {
  // expected-error @+1 {{expected result blocks of 1x128 or 128x128 in the input's frame but got tensorwise; use two blockscale.quantize ops}}
  %q, %s, %t, %ts = blockscale.quantize_dual %x {recipe = #blockscale.recipe<tensorwise>}
      : tensor<256x512xbf16> -> tensor<256x512xf8E4M3FN>, tensor<f32>, tensor<512x256xf8E4M3FN>, tensor<f32>
  return
}

// -----

func.func @quantize_dual_not_fp8(%x: tensor<256x512xbf16>) {
  // expected-error @+1 {{result #2 must be 2D tensor of f8E4M3FN type or f8E5M2 type values, but got 'tensor<512x256xbf16>'}}
  %q, %s, %t, %ts = blockscale.quantize_dual %x {recipe = #blockscale.recipe<blk_1x128>}
      : tensor<256x512xbf16> -> tensor<256x512xf8E4M3FN>, tensor<256x4xf32>, tensor<512x256xbf16>, tensor<512x2xf32>
  return
}

// -----

func.func @matmul_k_mismatch(%a: tensor<128x256xf8E4M3FN>, %as: tensor<128x2xf32>,
                             %b: tensor<384x512xf8E4M3FN>, %bs: tensor<3x4xf32>) {
  // expected-error @+1 {{expected B with K = 256 rows (A is 128x256) but got 384x512}}
  %c = blockscale.matmul %a[%as], %b[%bs] {form = #blockscale.form<fwd>,
         a_recipe = #blockscale.recipe<blk_1x128>, b_recipe = #blockscale.recipe<blk_128x128>}
      : tensor<128x256xf8E4M3FN>, tensor<128x2xf32>, tensor<384x512xf8E4M3FN>, tensor<3x4xf32> -> tensor<128x512xbf16>
  return
}

// -----

func.func @matmul_k_dynamic(%a: tensor<128x?xf8E4M3FN>, %as: tensor<128x?xf32>,
                            %b: tensor<256x512xf8E4M3FN>, %bs: tensor<2x4xf32>) {
  // expected-error @+1 {{expected A and B to agree on whether K is dynamic but got 128x? and 256x512}}
  %c = blockscale.matmul %a[%as], %b[%bs] {form = #blockscale.form<fwd>,
         a_recipe = #blockscale.recipe<blk_1x128>, b_recipe = #blockscale.recipe<blk_128x128>}
      : tensor<128x?xf8E4M3FN>, tensor<128x?xf32>, tensor<256x512xf8E4M3FN>, tensor<2x4xf32> -> tensor<128x512xbf16>
  return
}

// -----

func.func @matmul_recipe_pair(%a: tensor<128x256xf8E4M3FN>, %as: tensor<1x2xf32>,
                              %b: tensor<256x512xf8E4M3FN>, %bs: tensor<2x4xf32>) {
  // expected-error @+1 {{unsupported recipe pair (128x128, 128x128): expected 1x128 x 128x128 (fwd, dgrad) or 1x128 x 128x1 (wgrad)}}
  %c = blockscale.matmul %a[%as], %b[%bs] {form = #blockscale.form<fwd>,
         a_recipe = #blockscale.recipe<blk_128x128>, b_recipe = #blockscale.recipe<blk_128x128>}
      : tensor<128x256xf8E4M3FN>, tensor<1x2xf32>, tensor<256x512xf8E4M3FN>, tensor<2x4xf32> -> tensor<128x512xbf16>
  return
}

// -----

func.func @matmul_recipe_tensorwise(%a: tensor<128x256xf8E4M3FN>, %as: tensor<128x2xf32>,
                                    %b: tensor<256x512xf8E4M3FN>, %bs: tensor<f32>) {
  // expected-error @+1 {{unsupported recipe pair (1x128, tensorwise)}}
  %c = blockscale.matmul %a[%as], %b[%bs] {form = #blockscale.form<fwd>,
         a_recipe = #blockscale.recipe<blk_1x128>, b_recipe = #blockscale.recipe<tensorwise>}
      : tensor<128x256xf8E4M3FN>, tensor<128x2xf32>, tensor<256x512xf8E4M3FN>, tensor<f32> -> tensor<128x512xbf16>
  return
}

// -----

func.func @matmul_form_recipe(%a: tensor<128x256xf8E4M3FN>, %as: tensor<128x2xf32>,
                              %b: tensor<256x512xf8E4M3FN>, %bs: tensor<2x4xf32>) {
  // expected-error @+1 {{expected B recipe 128x1 for form wgrad but got 128x128}}
  %c = blockscale.matmul %a[%as], %b[%bs] {form = #blockscale.form<wgrad>,
         a_recipe = #blockscale.recipe<blk_1x128>, b_recipe = #blockscale.recipe<blk_128x128>}
      : tensor<128x256xf8E4M3FN>, tensor<128x2xf32>, tensor<256x512xf8E4M3FN>, tensor<2x4xf32> -> tensor<128x512xbf16>
  return
}

// -----

func.func @matmul_a_scales(%a: tensor<128x300xf8E4M3FN>, %as: tensor<128x2xf32>,
                           %b: tensor<300x512xf8E4M3FN>, %bs: tensor<3x4xf32>) {
  // expected-error @+1 {{expected A scales of shape 128x3 (1x128 blocks of 128x300) but got 128x2}}
  %c = blockscale.matmul %a[%as], %b[%bs] {form = #blockscale.form<fwd>,
         a_recipe = #blockscale.recipe<blk_1x128>, b_recipe = #blockscale.recipe<blk_128x128>}
      : tensor<128x300xf8E4M3FN>, tensor<128x2xf32>, tensor<300x512xf8E4M3FN>, tensor<3x4xf32> -> tensor<128x512xbf16>
  return
}

// -----

func.func @matmul_b_scales_128x128(%a: tensor<128x256xf8E4M3FN>, %as: tensor<128x2xf32>,
                                   %b: tensor<256x520xf8E4M3FN>, %bs: tensor<2x4xf32>) {
  // expected-error @+1 {{expected B scales of shape 2x5 (128x128 blocks of 256x520) but got 2x4}}
  %c = blockscale.matmul %a[%as], %b[%bs] {form = #blockscale.form<dgrad>,
         a_recipe = #blockscale.recipe<blk_1x128>, b_recipe = #blockscale.recipe<blk_128x128>}
      : tensor<128x256xf8E4M3FN>, tensor<128x2xf32>, tensor<256x520xf8E4M3FN>, tensor<2x4xf32> -> tensor<128x520xbf16>
  return
}

// -----

func.func @matmul_b_scales_128x1(%a: tensor<128x256xf8E4M3FN>, %as: tensor<128x2xf32>,
                                 %b: tensor<256x512xf8E4M3FN>, %bs: tensor<2x4xf32>) {
  // expected-error @+1 {{expected B scales of shape 2x512 (128x1 blocks of 256x512) but got 2x4}}
  %c = blockscale.matmul %a[%as], %b[%bs] {form = #blockscale.form<wgrad>,
         a_recipe = #blockscale.recipe<blk_1x128>, b_recipe = #blockscale.recipe<blk_128x1>}
      : tensor<128x256xf8E4M3FN>, tensor<128x2xf32>, tensor<256x512xf8E4M3FN>, tensor<2x4xf32> -> tensor<128x512xf32>
  return
}

// -----

func.func @matmul_result_shape(%a: tensor<128x256xf8E4M3FN>, %as: tensor<128x2xf32>,
                               %b: tensor<256x512xf8E4M3FN>, %bs: tensor<2x4xf32>) {
  // expected-error @+1 {{expected result shape 128x512 but got 512x128}}
  %c = blockscale.matmul %a[%as], %b[%bs] {form = #blockscale.form<fwd>,
         a_recipe = #blockscale.recipe<blk_1x128>, b_recipe = #blockscale.recipe<blk_128x128>}
      : tensor<128x256xf8E4M3FN>, tensor<128x2xf32>, tensor<256x512xf8E4M3FN>, tensor<2x4xf32> -> tensor<512x128xbf16>
  return
}

// -----

func.func @matmul_acc_type(%a: tensor<128x256xf8E4M3FN>, %as: tensor<128x2xf32>,
                           %b: tensor<256x512xf8E4M3FN>, %bs: tensor<2x512xf32>,
                           %acc: tensor<128x256xf32>) {
  // expected-error @+1 {{expected acc of type 'tensor<128x512xf32>' (the result type) but got 'tensor<128x256xf32>'}}
  %c = blockscale.matmul %a[%as], %b[%bs] acc(%acc : tensor<128x256xf32>) {form = #blockscale.form<wgrad>,
         a_recipe = #blockscale.recipe<blk_1x128>, b_recipe = #blockscale.recipe<blk_128x1>}
      : tensor<128x256xf8E4M3FN>, tensor<128x2xf32>, tensor<256x512xf8E4M3FN>, tensor<2x512xf32> -> tensor<128x512xf32>
  return
}

// -----

func.func @matmul_acc_bf16(%a: tensor<128x256xf8E4M3FN>, %as: tensor<128x2xf32>,
                           %b: tensor<256x512xf8E4M3FN>, %bs: tensor<2x512xf32>,
                           %acc: tensor<128x512xbf16>) {
  // expected-error @+1 {{expected an f32 result when accumulating but got 'bf16'}}
  %c = blockscale.matmul %a[%as], %b[%bs] acc(%acc : tensor<128x512xbf16>) {form = #blockscale.form<wgrad>,
         a_recipe = #blockscale.recipe<blk_1x128>, b_recipe = #blockscale.recipe<blk_128x1>}
      : tensor<128x256xf8E4M3FN>, tensor<128x2xf32>, tensor<256x512xf8E4M3FN>, tensor<2x512xf32> -> tensor<128x512xbf16>
  return
}

// -----

func.func @matmul_splits(%a: tensor<128x256xf8E4M3FN>, %as: tensor<128x2xf32>,
                         %b: tensor<256x512xf8E4M3FN>, %bs: tensor<2x4xf32>) {
  // expected-error @+1 {{expected tile splits <= 2 (K-blocks of 128) but got 3}}
  %c = blockscale.matmul %a[%as], %b[%bs] {form = #blockscale.form<fwd>,
         a_recipe = #blockscale.recipe<blk_1x128>, b_recipe = #blockscale.recipe<blk_128x128>,
         tile = #blockscale.tile<bm = 128, bn = 128, bk = 128, stages = 4, cluster = 1, swizzle = 128, splits = 3, raster = 8>}
      : tensor<128x256xf8E4M3FN>, tensor<128x2xf32>, tensor<256x512xf8E4M3FN>, tensor<2x4xf32> -> tensor<128x512xbf16>
  return
}

// -----

// A hand-written tile whose ring does not fit sm_90's shared memory (NVRTC
// would reject the kernel with a static_assert and no location).
func.func @matmul_tile_smem(%a: tensor<128x256xf8E4M3FN>, %as: tensor<128x2xf32>,
                            %b: tensor<256x576xf8E4M3FN>, %bs: tensor<2x5xf32>) {
  // expected-error @+1 {{expected a tile whose 8-stage ring and output staging fit in 232448 bytes of shared memory (sm_90) but bm=128,bn=192 with bf16 output needs 382096; use fewer stages (at most 4) or a smaller tile}}
  %c = blockscale.matmul %a[%as], %b[%bs] {form = #blockscale.form<fwd>,
         a_recipe = #blockscale.recipe<blk_1x128>, b_recipe = #blockscale.recipe<blk_128x128>,
         tile = #blockscale.tile<bm = 128, bn = 192, bk = 128, stages = 8, cluster = 1, swizzle = 128, splits = 1, raster = 8>}
      : tensor<128x256xf8E4M3FN>, tensor<128x2xf32>, tensor<256x576xf8E4M3FN>, tensor<2x5xf32> -> tensor<128x576xbf16>
  return
}

// -----

func.func @matmul_not_fp8(%a: tensor<128x256xbf16>, %as: tensor<128x2xf32>,
                          %b: tensor<256x512xf8E4M3FN>, %bs: tensor<2x4xf32>) {
  // expected-error @+1 {{operand #0 must be 2D tensor of f8E4M3FN type or f8E5M2 type values, but got 'tensor<128x256xbf16>'}}
  %c = blockscale.matmul %a[%as], %b[%bs] {form = #blockscale.form<fwd>,
         a_recipe = #blockscale.recipe<blk_1x128>, b_recipe = #blockscale.recipe<blk_128x128>}
      : tensor<128x256xbf16>, tensor<128x2xf32>, tensor<256x512xf8E4M3FN>, tensor<2x4xf32> -> tensor<128x512xbf16>
  return
}

// -----

func.func @matmul_f16_out(%a: tensor<128x256xf8E4M3FN>, %as: tensor<128x2xf32>,
                          %b: tensor<256x512xf8E4M3FN>, %bs: tensor<2x4xf32>) {
  // expected-error @+1 {{result #0 must be 2D tensor of bfloat16 type or 32-bit float values, but got 'tensor<128x512xf16>'}}
  %c = blockscale.matmul %a[%as], %b[%bs] {form = #blockscale.form<fwd>,
         a_recipe = #blockscale.recipe<blk_1x128>, b_recipe = #blockscale.recipe<blk_128x128>}
      : tensor<128x256xf8E4M3FN>, tensor<128x2xf32>, tensor<256x512xf8E4M3FN>, tensor<2x4xf32> -> tensor<128x512xf16>
  return
}

// -----

// expected-error @+1 {{expected scale_layout align to be a power of two >= 1 but got 3}}
func.func @bad_align() attributes {a = #blockscale.scale_layout<col_major, align = 3>}

// -----

// expected-error @+1 {{expected tile bm = 64, 128 or 256 (one or two consumer warpgroups of m64 wgmma, one or two waves) but got 192}}
func.func @bad_bm() attributes {a = #blockscale.tile<bm = 192, bn = 128, bk = 128, stages = 4, cluster = 1, swizzle = 128, splits = 1, raster = 8>}

// -----

// expected-error @+1 {{expected tile bn <= 128 with bm = 256 (two accumulators per thread) but got 160}}
func.func @bad_bm256_bn() attributes {a = #blockscale.tile<bm = 256, bn = 160, bk = 128, stages = 3, cluster = 1, swizzle = 128, splits = 1, raster = 8>}

// -----

// expected-error @+1 {{expected tile bn in {16, 32, ..., 128, 144, 160, 192} but got 176}}
func.func @bad_bn() attributes {a = #blockscale.tile<bm = 128, bn = 176, bk = 128, stages = 4, cluster = 1, swizzle = 128, splits = 1, raster = 8>}

// -----

// expected-error @+1 {{expected tile bk = 128 (one scale block per pipeline stage) but got 64}}
func.func @bad_bk() attributes {a = #blockscale.tile<bm = 128, bn = 128, bk = 64, stages = 4, cluster = 1, swizzle = 128, splits = 1, raster = 8>}

// -----

// expected-error @+1 {{expected tile stages in [2, 16] but got 1}}
func.func @bad_stages() attributes {a = #blockscale.tile<bm = 128, bn = 128, bk = 128, stages = 1, cluster = 1, swizzle = 128, splits = 1, raster = 8>}

// -----

// expected-error @+1 {{expected tile cluster = 1 or 2 (CTA pairs sharing A through TMA multicast) but got 4}}
func.func @bad_cluster() attributes {a = #blockscale.tile<bm = 128, bn = 128, bk = 128, stages = 4, cluster = 4, swizzle = 128, splits = 1, raster = 8>}

// -----

// expected-error @+1 {{expected tile ksplit = 1 or ksplit = splits in [2, 8] (a portable cluster of the splits) but got ksplit = 2 with splits = 4}}
func.func @bad_ksplit() attributes {a = #blockscale.tile<bm = 128, bn = 64, bk = 128, stages = 8, cluster = 1, swizzle = 128, splits = 4, raster = 8, ksplit = 2>}

// -----

// expected-error @+1 {{expected tile cluster = 1 with ksplit = 2 (a cluster either shares A or sums splits) but got cluster = 2}}
func.func @bad_ksplit_cluster() attributes {a = #blockscale.tile<bm = 256, bn = 128, bk = 128, stages = 3, cluster = 2, swizzle = 128, splits = 2, raster = 8, ksplit = 2>}

// -----

// expected-error @+1 {{expected tile swizzle = 128 (bk = 128 FP8 bytes per row) but got 64}}
func.func @bad_swizzle() attributes {a = #blockscale.tile<bm = 128, bn = 128, bk = 128, stages = 4, cluster = 1, swizzle = 64, splits = 1, raster = 8>}

// -----

// expected-error @+1 {{expected tile splits in [1, 2147483647] (a 32-bit launch parameter) but got 0}}
func.func @bad_splits() attributes {a = #blockscale.tile<bm = 128, bn = 128, bk = 128, stages = 4, cluster = 1, swizzle = 128, splits = 0, raster = 8>}

// -----

// expected-error @+1 {{expected tile raster in [1, 2147483647] (a 32-bit launch parameter) but got 0}}
func.func @bad_raster() attributes {a = #blockscale.tile<bm = 128, bn = 128, bk = 128, stages = 4, cluster = 1, swizzle = 128, splits = 1, raster = 0>}

// -----

// Hardening (issue 31): unranked scales are rejected before their shape is
// read; sizes, leading dimensions, alignments, split counts and raster values
// are checked in int64 (no wrapped value is accepted).

func.func @matmul_unranked_a_scale(%a: tensor<128x256xf8E4M3FN>, %as: tensor<*xf32>,
                                   %b: tensor<256x512xf8E4M3FN>, %bs: tensor<2x4xf32>) {
  // expected-error @+1 {{expected A scales of shape 128x2 (a ranked tensor) but got 'tensor<*xf32>'}}
  %c = blockscale.matmul %a[%as], %b[%bs] {form = #blockscale.form<fwd>,
         a_recipe = #blockscale.recipe<blk_1x128>, b_recipe = #blockscale.recipe<blk_128x128>}
      : tensor<128x256xf8E4M3FN>, tensor<*xf32>, tensor<256x512xf8E4M3FN>, tensor<2x4xf32> -> tensor<128x512xbf16>
  return
}

// -----

func.func @matmul_unranked_b_scale(%a: tensor<?x256xf8E4M3FN>, %as: tensor<?x2xf32>,
                                   %b: tensor<256x512xf8E4M3FN>, %bs: tensor<*xf32>) {
  // expected-error @+1 {{expected B scales of shape 2x512 (a ranked tensor) but got 'tensor<*xf32>'}}
  %c = blockscale.matmul %a[%as], %b[%bs] {form = #blockscale.form<wgrad>,
         a_recipe = #blockscale.recipe<blk_1x128>, b_recipe = #blockscale.recipe<blk_128x1>}
      : tensor<?x256xf8E4M3FN>, tensor<?x2xf32>, tensor<256x512xf8E4M3FN>, tensor<*xf32> -> tensor<?x512xf32>
  return
}

// -----

func.func @quantize_unranked_scale(%x: tensor<?x512xbf16>) {
  // expected-error @+1 {{expected scales of shape ?x4 (a ranked tensor) but got 'tensor<*xf32>'}}
  %q, %s = blockscale.quantize %x {recipe = #blockscale.recipe<blk_1x128>}
      : tensor<?x512xbf16> -> tensor<?x512xf8E4M3FN>, tensor<*xf32>
  return
}

// -----

func.func @quantize_unranked_tensorwise(%x: tensor<256x512xbf16>) {
  // expected-error @+1 {{expected scales of shape scalar (a ranked tensor) but got 'tensor<*xf32>'}}
  %q, %s = blockscale.quantize %x {recipe = #blockscale.recipe<tensorwise>}
      : tensor<256x512xbf16> -> tensor<256x512xf8E4M3FN>, tensor<*xf32>
  return
}

// -----

func.func @quantize_scale_rank3(%x: tensor<256x512xbf16>) {
  // expected-error @+1 {{expected scale shape 256x4 for 1x128 blocks of a 256x512 result but got 256x4x1}}
  %q, %s = blockscale.quantize %x {recipe = #blockscale.recipe<blk_1x128>}
      : tensor<256x512xbf16> -> tensor<256x512xf8E4M3FN>, tensor<256x4x1xf32>
  return
}

// -----

// A dynamic dimension is never read as a size: ?x? scales of a ?x256 A do
// not match ?x2.
func.func @matmul_dynamic_scale_cols(%a: tensor<?x256xf8E4M3FN>, %as: tensor<?x?xf32>,
                                     %b: tensor<256x512xf8E4M3FN>, %bs: tensor<2x4xf32>) {
  // expected-error @+1 {{expected A scales of shape ?x2 (1x128 blocks of ?x256) but got ?x?}}
  %c = blockscale.matmul %a[%as], %b[%bs] {form = #blockscale.form<fwd>,
         a_recipe = #blockscale.recipe<blk_1x128>, b_recipe = #blockscale.recipe<blk_128x128>}
      : tensor<?x256xf8E4M3FN>, tensor<?x?xf32>, tensor<256x512xf8E4M3FN>, tensor<2x4xf32> -> tensor<?x512xbf16>
  return
}

// -----

// 2^62 x 2^62 FP8 elements: 2^124 bytes.
func.func @matmul_bytes_overflow(%a: tensor<4611686018427387904x4611686018427387904xf8E4M3FN>, %as: tensor<4611686018427387904x36028797018963968xf32>,
                                 %b: tensor<4611686018427387904x512xf8E4M3FN>, %bs: tensor<36028797018963968x4xf32>) {
  // expected-error @+1 {{expected operand #0 to hold at most 2^63 - 1 bytes but got 'tensor<4611686018427387904x4611686018427387904xf8E4M3FN>'}}
  %c = blockscale.matmul %a[%as], %b[%bs] {form = #blockscale.form<fwd>,
         a_recipe = #blockscale.recipe<blk_1x128>, b_recipe = #blockscale.recipe<blk_128x128>}
      : tensor<4611686018427387904x4611686018427387904xf8E4M3FN>, tensor<4611686018427387904x36028797018963968xf32>, tensor<4611686018427387904x512xf8E4M3FN>, tensor<36028797018963968x4xf32> -> tensor<4611686018427387904x512xbf16>
  return
}

// -----

// 2^61 x 128 bf16 elements: 2^69 bytes.
func.func @quantize_scale_bytes_overflow(%x: tensor<2305843009213693952x128xbf16>) {
  // expected-error @+1 {{expected operand #0 to hold at most 2^63 - 1 bytes but got 'tensor<2305843009213693952x128xbf16>'}}
  %q, %s = blockscale.quantize %x {recipe = #blockscale.recipe<blk_1x128>}
      : tensor<2305843009213693952x128xbf16> -> tensor<2305843009213693952x128xf8E4M3FN>, tensor<2305843009213693952x1xf32>
  return
}

// -----

func.func @matmul_negative_lda(%a: tensor<?x256xf8E4M3FN>, %as: tensor<?x2xf32>,
                               %b: tensor<256x512xf8E4M3FN>, %bs: tensor<2x4xf32>) {
  // A negative stride that is a multiple of 16 bytes used to pass.
  // expected-error @+1 {{expected lda (a leading dimension in elements) >= 1 but got -16}}
  %c = blockscale.matmul %a[%as], %b[%bs] {form = #blockscale.form<fwd>, lda = -16 : i64,
         a_recipe = #blockscale.recipe<blk_1x128>, b_recipe = #blockscale.recipe<blk_128x128>}
      : tensor<?x256xf8E4M3FN>, tensor<?x2xf32>, tensor<256x512xf8E4M3FN>, tensor<2x4xf32> -> tensor<?x512xbf16>
  return
}

// -----

func.func @matmul_zero_ldb(%a: tensor<128x256xf8E4M3FN>, %as: tensor<128x2xf32>,
                           %b: tensor<256x512xf8E4M3FN>, %bs: tensor<2x4xf32>) {
  // expected-error @+1 {{expected ldb (a leading dimension in elements) >= 1 but got 0}}
  %c = blockscale.matmul %a[%as], %b[%bs] {form = #blockscale.form<fwd>, ldb = 0 : i64,
         a_recipe = #blockscale.recipe<blk_1x128>, b_recipe = #blockscale.recipe<blk_128x128>}
      : tensor<128x256xf8E4M3FN>, tensor<128x2xf32>, tensor<256x512xf8E4M3FN>, tensor<2x4xf32> -> tensor<128x512xbf16>
  return
}

// -----

func.func @matmul_ldc_overflow(%a: tensor<1024x256xf8E4M3FN>, %as: tensor<1024x2xf32>,
                               %b: tensor<256x512xf8E4M3FN>, %bs: tensor<2x4xf32>) {
  // ldc * M * 2 bytes = 2^62 * 1024 * 2 wraps int64.
  // expected-error @+1 {{expected ldc = 4611686018427387904 to describe a buffer of at most 2^63 - 1 bytes but ldc x 1024 rows x 2 bytes overflows int64}}
  %c = blockscale.matmul %a[%as], %b[%bs] {form = #blockscale.form<fwd>, ldc = 4611686018427387904 : i64,
         a_recipe = #blockscale.recipe<blk_1x128>, b_recipe = #blockscale.recipe<blk_128x128>}
      : tensor<1024x256xf8E4M3FN>, tensor<1024x2xf32>, tensor<256x512xf8E4M3FN>, tensor<2x4xf32> -> tensor<1024x512xbf16>
  return
}

// -----

func.func @matmul_lda_max(%a: tensor<?x256xf8E4M3FN>, %as: tensor<?x2xf32>,
                          %b: tensor<256x512xf8E4M3FN>, %bs: tensor<2x4xf32>) {
  // With M dynamic only ld x element bytes is known: 2^63 - 1 FP8 bytes fit,
  // so the op verifies (verify-layouts rejects the stride: TMA's 2^40).
  %c = blockscale.matmul %a[%as], %b[%bs] {form = #blockscale.form<fwd>, lda = 9223372036854775807 : i64,
         a_recipe = #blockscale.recipe<blk_1x128>, b_recipe = #blockscale.recipe<blk_128x128>}
      : tensor<?x256xf8E4M3FN>, tensor<?x2xf32>, tensor<256x512xf8E4M3FN>, tensor<2x4xf32> -> tensor<?x512xbf16>
  return
}

// -----

func.func @matmul_ldc_f32_wraps(%a: tensor<?x256xf8E4M3FN>, %as: tensor<?x2xf32>,
                                %b: tensor<256x512xf8E4M3FN>, %bs: tensor<2x512xf32>) {
  // expected-error @+1 {{expected ldc = 4611686018427387904 to describe a buffer of at most 2^63 - 1 bytes but ldc x ? rows x 4 bytes overflows int64}}
  %c = blockscale.matmul %a[%as], %b[%bs] {form = #blockscale.form<wgrad>, ldc = 4611686018427387904 : i64,
         a_recipe = #blockscale.recipe<blk_1x128>, b_recipe = #blockscale.recipe<blk_128x1>}
      : tensor<?x256xf8E4M3FN>, tensor<?x2xf32>, tensor<256x512xf8E4M3FN>, tensor<2x512xf32> -> tensor<?x512xf32>
  return
}

// -----

func.func @matmul_scale_align_overflow(%a: tensor<1024x256xf8E4M3FN>, %as: tensor<1024x2xf32>,
                                       %b: tensor<256x512xf8E4M3FN>, %bs: tensor<2x4xf32>) {
  // The padded K-block stride, 2^62, times 2 K-blocks times 4 bytes wraps.
  // expected-error @+1 {{expected a_scale_layout #blockscale.scale_layout<col_major, align = 4611686018427387904> to give 1024x2 scales a buffer of at most 2^63 - 1 bytes but its padded size overflows int64}}
  %c = blockscale.matmul %a[%as], %b[%bs] {form = #blockscale.form<fwd>,
         a_scale_layout = #blockscale.scale_layout<col_major, align = 4611686018427387904>,
         a_recipe = #blockscale.recipe<blk_1x128>, b_recipe = #blockscale.recipe<blk_128x128>}
      : tensor<1024x256xf8E4M3FN>, tensor<1024x2xf32>, tensor<256x512xf8E4M3FN>, tensor<2x4xf32> -> tensor<1024x512xbf16>
  return
}

// -----

func.func @quantize_scale_align_overflow(%x: tensor<256x512xbf16>) {
  // expected-error @+1 {{expected scale_layout #blockscale.scale_layout<row_major, align = 2305843009213693952> to give 256x4 scales a buffer of at most 2^63 - 1 bytes but its padded size overflows int64}}
  %q, %s = blockscale.quantize %x {recipe = #blockscale.recipe<blk_1x128>,
                                   scale_layout = #blockscale.scale_layout<row_major, align = 2305843009213693952>}
      : tensor<256x512xbf16> -> tensor<256x512xf8E4M3FN>, tensor<256x4xf32>
  return
}

// -----

// expected-error @+1 {{expected scale_layout align to be a power of two >= 1 but got -9223372036854775808}}
func.func @bad_align_min() attributes {a = #blockscale.scale_layout<col_major, align = -9223372036854775808>}

// -----

// expected-error @+1 {{expected scale_layout align to be a power of two >= 1 but got 0}}
func.func @bad_align_zero() attributes {a = #blockscale.scale_layout<col_major, align = 0>}

// -----

// Splits and raster are 32-bit launch parameters: 2^32 + 1 used to wrap to 1.
// expected-error @+1 {{expected tile splits in [1, 2147483647] (a 32-bit launch parameter) but got 4294967297}}
func.func @bad_splits_wrap() attributes {a = #blockscale.tile<bm = 128, bn = 128, bk = 128, stages = 4, cluster = 1, swizzle = 128, splits = 4294967297, raster = 8>}

// -----

// expected-error @+1 {{expected tile raster in [1, 2147483647] (a 32-bit launch parameter) but got 4294967304}}
func.func @bad_raster_wrap() attributes {a = #blockscale.tile<bm = 128, bn = 128, bk = 128, stages = 4, cluster = 1, swizzle = 128, splits = 1, raster = 4294967304>}

// -----

// expected-error @+1 {{expected tile raster in [1, 2147483647] (a 32-bit launch parameter) but got -8}}
func.func @bad_raster_negative() attributes {a = #blockscale.tile<bm = 128, bn = 128, bk = 128, stages = 4, cluster = 1, swizzle = 128, splits = 1, raster = -8>}

// -----

// expected-error @+1 {{expected tile stages in [2, 16] but got 9223372036854775807}}
func.func @bad_stages_huge() attributes {a = #blockscale.tile<bm = 128, bn = 128, bk = 128, stages = 9223372036854775807, cluster = 1, swizzle = 128, splits = 1, raster = 8>}

// -----

// expected-error @+1 {{expected tile ksplit = 1 or ksplit = splits in [2, 8] (a portable cluster of the splits) but got ksplit = -1 with splits = 1}}
func.func @bad_ksplit_negative() attributes {a = #blockscale.tile<bm = 128, bn = 128, bk = 128, stages = 4, cluster = 1, swizzle = 128, splits = 1, raster = 8, ksplit = -1>}

// -----

func.func @matmul_splits_huge_k(%a: tensor<128x4611686018427387904xf8E4M3FN>, %as: tensor<128x36028797018963968xf32>,
                                %b: tensor<4611686018427387904x16xf8E4M3FN>, %bs: tensor<36028797018963968x1xf32>) {
  // expected-error @+1 {{expected operand #0 to hold at most 2^63 - 1 bytes but got 'tensor<128x4611686018427387904xf8E4M3FN>'}}
  %c = blockscale.matmul %a[%as], %b[%bs] {form = #blockscale.form<fwd>,
         a_recipe = #blockscale.recipe<blk_1x128>, b_recipe = #blockscale.recipe<blk_128x128>}
      : tensor<128x4611686018427387904xf8E4M3FN>, tensor<128x36028797018963968xf32>, tensor<4611686018427387904x16xf8E4M3FN>, tensor<36028797018963968x1xf32> -> tensor<128x16xbf16>
  return
}

// -----

func.func @grouped_a_rank(%a: tensor<8x192x256xf8E4M3FN>, %as: tensor<8x192x2xf32>,
                          %b: tensor<8x256x512xf8E4M3FN>, %bs: tensor<8x2x4xf32>, %g: tensor<8xi32>) {
  // expected-error @+1 {{expected A of rank 2 (M, K) for m_contiguous grouping but got 'tensor<8x192x256xf8E4M3FN>'}}
  %c = blockscale.grouped_matmul %a[%as], %b[%bs] groups(%g : tensor<8xi32>) {grouping = #blockscale.grouping<m_contiguous>}
      : tensor<8x192x256xf8E4M3FN>, tensor<8x192x2xf32>, tensor<8x256x512xf8E4M3FN>, tensor<8x2x4xf32> -> tensor<8x192x512xbf16>
  return
}

// -----

func.func @grouped_k_mismatch(%a: tensor<?x384xf8E4M3FN>, %as: tensor<?x3xf32>,
                              %b: tensor<8x256x512xf8E4M3FN>, %bs: tensor<8x2x4xf32>, %g: tensor<8xi32>) {
  // expected-error @+1 {{expected A with K = 256 columns (B is 8x256x512, G x K x N) but got ?x384}}
  %c = blockscale.grouped_matmul %a[%as], %b[%bs] groups(%g : tensor<8xi32>) {grouping = #blockscale.grouping<m_contiguous>}
      : tensor<?x384xf8E4M3FN>, tensor<?x3xf32>, tensor<8x256x512xf8E4M3FN>, tensor<8x2x4xf32> -> tensor<?x512xbf16>
  return
}

// -----

func.func @grouped_masked_groups(%a: tensor<4x192x256xf8E4M3FN>, %as: tensor<4x192x2xf32>,
                                 %b: tensor<8x256x512xf8E4M3FN>, %bs: tensor<8x2x4xf32>, %g: tensor<8xi32>) {
  // expected-error @+1 {{expected A with G = 8 groups (B is 8x256x512) but got 4x192x256}}
  %c = blockscale.grouped_matmul %a[%as], %b[%bs] groups(%g : tensor<8xi32>) {grouping = #blockscale.grouping<m_masked>}
      : tensor<4x192x256xf8E4M3FN>, tensor<4x192x2xf32>, tensor<8x256x512xf8E4M3FN>, tensor<8x2x4xf32> -> tensor<4x192x512xbf16>
  return
}

// -----

func.func @grouped_dynamic_b(%a: tensor<?x256xf8E4M3FN>, %as: tensor<?x2xf32>,
                             %b: tensor<?x256x512xf8E4M3FN>, %bs: tensor<?x2x4xf32>, %g: tensor<?xi32>) {
  // expected-error @+1 {{expected B with static G, K and N (one kernel serves every split of the rows) but got ?x256x512}}
  %c = blockscale.grouped_matmul %a[%as], %b[%bs] groups(%g : tensor<?xi32>) {grouping = #blockscale.grouping<m_contiguous>}
      : tensor<?x256xf8E4M3FN>, tensor<?x2xf32>, tensor<?x256x512xf8E4M3FN>, tensor<?x2x4xf32> -> tensor<?x512xbf16>
  return
}

// -----

func.func @grouped_groups_shape(%a: tensor<?x256xf8E4M3FN>, %as: tensor<?x2xf32>,
                                %b: tensor<8x256x512xf8E4M3FN>, %bs: tensor<8x2x4xf32>, %g: tensor<9xi32>) {
  // expected-error @+1 {{expected groups of shape 8 (one i32 per group: its rows' end offset) but got 9}}
  %c = blockscale.grouped_matmul %a[%as], %b[%bs] groups(%g : tensor<9xi32>) {grouping = #blockscale.grouping<m_contiguous>}
      : tensor<?x256xf8E4M3FN>, tensor<?x2xf32>, tensor<8x256x512xf8E4M3FN>, tensor<8x2x4xf32> -> tensor<?x512xbf16>
  return
}

// -----

func.func @grouped_groups_type(%a: tensor<?x256xf8E4M3FN>, %as: tensor<?x2xf32>,
                               %b: tensor<8x256x512xf8E4M3FN>, %bs: tensor<8x2x4xf32>, %g: tensor<8xi64>) {
  // expected-error @+1 {{operand #4 must be 1D tensor of 32-bit signless integer values}}
  %c = blockscale.grouped_matmul %a[%as], %b[%bs] groups(%g : tensor<8xi64>) {grouping = #blockscale.grouping<m_contiguous>}
      : tensor<?x256xf8E4M3FN>, tensor<?x2xf32>, tensor<8x256x512xf8E4M3FN>, tensor<8x2x4xf32> -> tensor<?x512xbf16>
  return
}

// -----

func.func @grouped_a_scales(%a: tensor<8x192x300xf8E4M3FN>, %as: tensor<8x192x2xf32>,
                            %b: tensor<8x300x512xf8E4M3FN>, %bs: tensor<8x3x4xf32>, %g: tensor<8xi32>) {
  // expected-error @+1 {{expected A scales of shape 8x192x3 (1x128 blocks of 8x192x300) but got 8x192x2}}
  %c = blockscale.grouped_matmul %a[%as], %b[%bs] groups(%g : tensor<8xi32>) {grouping = #blockscale.grouping<m_masked>}
      : tensor<8x192x300xf8E4M3FN>, tensor<8x192x2xf32>, tensor<8x300x512xf8E4M3FN>, tensor<8x3x4xf32> -> tensor<8x192x512xbf16>
  return
}

// -----

func.func @grouped_b_scales(%a: tensor<?x256xf8E4M3FN>, %as: tensor<?x2xf32>,
                            %b: tensor<8x256x520xf8E4M3FN>, %bs: tensor<8x2x4xf32>, %g: tensor<8xi32>) {
  // expected-error @+1 {{expected B scales of shape 8x2x5 (128x128 blocks of each group's K x N) but got 8x2x4}}
  %c = blockscale.grouped_matmul %a[%as], %b[%bs] groups(%g : tensor<8xi32>) {grouping = #blockscale.grouping<m_contiguous>}
      : tensor<?x256xf8E4M3FN>, tensor<?x2xf32>, tensor<8x256x520xf8E4M3FN>, tensor<8x2x4xf32> -> tensor<?x520xbf16>
  return
}

// -----

func.func @grouped_result(%a: tensor<8x192x256xf8E4M3FN>, %as: tensor<8x192x2xf32>,
                          %b: tensor<8x256x512xf8E4M3FN>, %bs: tensor<8x2x4xf32>, %g: tensor<8xi32>) {
  // expected-error @+1 {{expected result shape 8x192x512 but got 'tensor<1536x512xbf16>'}}
  %c = blockscale.grouped_matmul %a[%as], %b[%bs] groups(%g : tensor<8xi32>) {grouping = #blockscale.grouping<m_masked>}
      : tensor<8x192x256xf8E4M3FN>, tensor<8x192x2xf32>, tensor<8x256x512xf8E4M3FN>, tensor<8x2x4xf32> -> tensor<1536x512xbf16>
  return
}

// -----

func.func @grouped_split_k(%a: tensor<?x256xf8E4M3FN>, %as: tensor<?x2xf32>,
                           %b: tensor<8x256x512xf8E4M3FN>, %bs: tensor<8x2x4xf32>, %g: tensor<8xi32>) {
  // expected-error @+1 {{expected a tile without split-K (splits = 1, ksplit = 1) for a grouped matmul but got #blockscale.tile<bm = 128, bn = 128, bk = 128, stages = 6, cluster = 1, swizzle = 128, splits = 2, raster = 8>}}
  %c = blockscale.grouped_matmul %a[%as], %b[%bs] groups(%g : tensor<8xi32>) {grouping = #blockscale.grouping<m_contiguous>,
         tile = #blockscale.tile<bm = 128, bn = 128, bk = 128, stages = 6, cluster = 1, swizzle = 128, splits = 2, raster = 8>}
      : tensor<?x256xf8E4M3FN>, tensor<?x2xf32>, tensor<8x256x512xf8E4M3FN>, tensor<8x2x4xf32> -> tensor<?x512xbf16>
  return
}

// -----

// The group-aware cast and the k-grouped matmul.

func.func @gq_input_rank(%x: tensor<1000xbf16>, %o: tensor<8xi32>) {
  // expected-error @+1 {{expected input of rank 2 (T, C) of bf16, f16 or f32 but got 'tensor<1000xbf16>'}}
  %q, %s = blockscale.quantize_grouped_tokens %x offsets(%o : tensor<8xi32>)
      : tensor<1000xbf16> -> tensor<256x2048xf8E4M3FN>, tensor<256x16xf32>
  return
}

// -----

func.func @gq_input_type(%x: tensor<1000x256xi8>, %o: tensor<8xi32>) {
  // expected-error @+1 {{expected input of rank 2 (T, C) of bf16, f16 or f32 but got 'tensor<1000x256xi8>'}}
  %q, %s = blockscale.quantize_grouped_tokens %x offsets(%o : tensor<8xi32>)
      : tensor<1000x256xi8> -> tensor<256x2048xf8E4M3FN>, tensor<256x16xf32>
  return
}

// -----

func.func @gq_offsets_type(%x: tensor<1000x256xbf16>, %o: tensor<8xi64>) {
  // expected-error @+1 {{expected offsets of type tensor<Gxi32> (the groups' cumulative end offsets) but got 'tensor<8xi64>'}}
  %q, %s = blockscale.quantize_grouped_tokens %x offsets(%o : tensor<8xi64>)
      : tensor<1000x256xbf16> -> tensor<256x2048xf8E4M3FN>, tensor<256x16xf32>
  return
}

// -----

func.func @gq_offsets_rank(%x: tensor<1000x256xbf16>, %o: tensor<2x4xi32>) {
  // expected-error @+1 {{expected offsets of type tensor<Gxi32> (the groups' cumulative end offsets) but got 'tensor<2x4xi32>'}}
  %q, %s = blockscale.quantize_grouped_tokens %x offsets(%o : tensor<2x4xi32>)
      : tensor<1000x256xbf16> -> tensor<256x2048xf8E4M3FN>, tensor<256x16xf32>
  return
}

// -----

func.func @gq_offsets_dynamic(%x: tensor<1000x256xbf16>, %o: tensor<?xi32>) {
  // expected-error @+1 {{expected offsets with a static group count G >= 1 (the kernel and the capacity depend on it) but got 'tensor<?xi32>'}}
  %q, %s = blockscale.quantize_grouped_tokens %x offsets(%o : tensor<?xi32>)
      : tensor<1000x256xbf16> -> tensor<256x2048xf8E4M3FN>, tensor<256x16xf32>
  return
}

// -----

func.func @gq_offsets_empty(%x: tensor<1000x256xbf16>, %o: tensor<0xi32>) {
  // expected-error @+1 {{expected offsets with a static group count G >= 1 (the kernel and the capacity depend on it) but got 'tensor<0xi32>'}}
  %q, %s = blockscale.quantize_grouped_tokens %x offsets(%o : tensor<0xi32>)
      : tensor<1000x256xbf16> -> tensor<256x2048xf8E4M3FN>, tensor<256x16xf32>
  return
}

// -----

func.func @gq_dynamic_cols(%x: tensor<1000x?xbf16>, %o: tensor<8xi32>) {
  // expected-error @+1 {{expected input with static C columns (one kernel per width) but got 'tensor<1000x?xbf16>'}}
  %q, %s = blockscale.quantize_grouped_tokens %x offsets(%o : tensor<8xi32>)
      : tensor<1000x?xbf16> -> tensor<256x2048xf8E4M3FN>, tensor<256x16xf32>
  return
}

// -----

func.func @gq_result_type(%x: tensor<1000x256xbf16>, %o: tensor<8xi32>) {
  // expected-error @+1 {{expected result of rank 2 (C, capacity) with an FP8 element type but got 'tensor<256x2048xbf16>'}}
  %q, %s = blockscale.quantize_grouped_tokens %x offsets(%o : tensor<8xi32>)
      : tensor<1000x256xbf16> -> tensor<256x2048xbf16>, tensor<256x16xf32>
  return
}

// -----

func.func @gq_result_rows(%x: tensor<1000x256xbf16>, %o: tensor<8xi32>) {
  // expected-error @+1 {{expected result with C = 256 rows (the input transposed) but got 'tensor<1000x2048xf8E4M3FN>'}}
  %q, %s = blockscale.quantize_grouped_tokens %x offsets(%o : tensor<8xi32>)
      : tensor<1000x256xbf16> -> tensor<1000x2048xf8E4M3FN>, tensor<256x16xf32>
  return
}

// -----

func.func @gq_capacity_small(%x: tensor<1000x256xbf16>, %o: tensor<8xi32>) {
  // expected-error @+1 {{expected result capacity a multiple of 128 of at least 2048 (round_up(T, 128) + 128 G: every group starts a block) but got 1920}}
  %q, %s = blockscale.quantize_grouped_tokens %x offsets(%o : tensor<8xi32>)
      : tensor<1000x256xbf16> -> tensor<256x1920xf8E4M3FN>, tensor<256x15xf32>
  return
}

// -----

func.func @gq_capacity_unaligned(%x: tensor<?x256xbf16>, %o: tensor<8xi32>) {
  // expected-error @+1 {{expected result capacity a multiple of 128 of at least 1024 (128 G: every group starts a block) but got 2100}}
  %q, %s = blockscale.quantize_grouped_tokens %x offsets(%o : tensor<8xi32>)
      : tensor<?x256xbf16> -> tensor<256x2100xf8E4M3FN>, tensor<256x17xf32>
  return
}

// -----

func.func @gq_scale_type(%x: tensor<1000x256xbf16>, %o: tensor<8xi32>) {
  // expected-error @+1 {{expected scales of type tensor<256x16xf32> but got 'tensor<256x16xf16>'}}
  %q, %s = blockscale.quantize_grouped_tokens %x offsets(%o : tensor<8xi32>)
      : tensor<1000x256xbf16> -> tensor<256x2048xf8E4M3FN>, tensor<256x16xf16>
  return
}

// -----

func.func @gq_scale_shape(%x: tensor<1000x256xbf16>, %o: tensor<8xi32>) {
  // expected-error @+1 {{expected scale shape 256x16 (one per row of the result per 128-token block) but got 16x256}}
  %q, %s = blockscale.quantize_grouped_tokens %x offsets(%o : tensor<8xi32>)
      : tensor<1000x256xbf16> -> tensor<256x2048xf8E4M3FN>, tensor<16x256xf32>
  return
}

// -----

func.func @gk_a_type(%a: tensor<256x1024xbf16>, %as: tensor<256x8xf32>, %b: tensor<512x1024xf8E4M3FN>, %bs: tensor<512x8xf32>, %o: tensor<4xi32>) {
  // expected-error @+1 {{expected A of rank 2 (M, capacity: dY^T) with an FP8 element type but got 'tensor<256x1024xbf16>'}}
  %c = blockscale.grouped_matmul_k %a[%as], %b[%bs] offsets(%o : tensor<4xi32>)
      : tensor<256x1024xbf16>, tensor<256x8xf32>, tensor<512x1024xf8E4M3FN>, tensor<512x8xf32> -> tensor<4x256x512xf32>
  return
}

// -----

func.func @gk_a_rank(%a: tensor<2x256x1024xf8E4M3FN>, %as: tensor<256x8xf32>, %b: tensor<512x1024xf8E4M3FN>, %bs: tensor<512x8xf32>, %o: tensor<4xi32>) {
  // expected-error @+1 {{expected A of rank 2 (M, capacity: dY^T) with an FP8 element type but got 'tensor<2x256x1024xf8E4M3FN>'}}
  %c = blockscale.grouped_matmul_k %a[%as], %b[%bs] offsets(%o : tensor<4xi32>)
      : tensor<2x256x1024xf8E4M3FN>, tensor<256x8xf32>, tensor<512x1024xf8E4M3FN>, tensor<512x8xf32> -> tensor<4x256x512xf32>
  return
}

// -----

func.func @gk_b_type(%a: tensor<256x1024xf8E4M3FN>, %as: tensor<256x8xf32>, %b: tensor<512x1024xf16>, %bs: tensor<512x8xf32>, %o: tensor<4xi32>) {
  // expected-error @+1 {{expected B of rank 2 (N, capacity: X^T) with an FP8 element type but got 'tensor<512x1024xf16>'}}
  %c = blockscale.grouped_matmul_k %a[%as], %b[%bs] offsets(%o : tensor<4xi32>)
      : tensor<256x1024xf8E4M3FN>, tensor<256x8xf32>, tensor<512x1024xf16>, tensor<512x8xf32> -> tensor<4x256x512xf32>
  return
}

// -----

func.func @gk_offsets_type(%a: tensor<256x1024xf8E4M3FN>, %as: tensor<256x8xf32>, %b: tensor<512x1024xf8E4M3FN>, %bs: tensor<512x8xf32>, %o: tensor<4xf32>) {
  // expected-error @+1 {{expected offsets of type tensor<Gxi32> (the groups' cumulative end offsets) but got 'tensor<4xf32>'}}
  %c = blockscale.grouped_matmul_k %a[%as], %b[%bs] offsets(%o : tensor<4xf32>)
      : tensor<256x1024xf8E4M3FN>, tensor<256x8xf32>, tensor<512x1024xf8E4M3FN>, tensor<512x8xf32> -> tensor<4x256x512xf32>
  return
}

// -----

func.func @gk_offsets_rank(%a: tensor<256x1024xf8E4M3FN>, %as: tensor<256x8xf32>, %b: tensor<512x1024xf8E4M3FN>, %bs: tensor<512x8xf32>, %o: tensor<4x1xi32>) {
  // expected-error @+1 {{expected offsets of type tensor<Gxi32> (the groups' cumulative end offsets) but got 'tensor<4x1xi32>'}}
  %c = blockscale.grouped_matmul_k %a[%as], %b[%bs] offsets(%o : tensor<4x1xi32>)
      : tensor<256x1024xf8E4M3FN>, tensor<256x8xf32>, tensor<512x1024xf8E4M3FN>, tensor<512x8xf32> -> tensor<4x256x512xf32>
  return
}

// -----

func.func @gk_offsets_dynamic(%a: tensor<256x1024xf8E4M3FN>, %as: tensor<256x8xf32>, %b: tensor<512x1024xf8E4M3FN>, %bs: tensor<512x8xf32>, %o: tensor<?xi32>) {
  // expected-error @+1 {{expected offsets with a static group count G >= 1 (the kernel and the capacity depend on it) but got 'tensor<?xi32>'}}
  %c = blockscale.grouped_matmul_k %a[%as], %b[%bs] offsets(%o : tensor<?xi32>)
      : tensor<256x1024xf8E4M3FN>, tensor<256x8xf32>, tensor<512x1024xf8E4M3FN>, tensor<512x8xf32> -> tensor<4x256x512xf32>
  return
}

// -----

func.func @gk_dynamic_m(%a: tensor<?x1024xf8E4M3FN>, %as: tensor<256x8xf32>, %b: tensor<512x1024xf8E4M3FN>, %bs: tensor<512x8xf32>, %o: tensor<4xi32>) {
  // expected-error @+1 {{expected static M and N (the rows of A and B: one kernel per output shape) but got 'tensor<?x1024xf8E4M3FN>' and 'tensor<512x1024xf8E4M3FN>'}}
  %c = blockscale.grouped_matmul_k %a[%as], %b[%bs] offsets(%o : tensor<4xi32>)
      : tensor<?x1024xf8E4M3FN>, tensor<256x8xf32>, tensor<512x1024xf8E4M3FN>, tensor<512x8xf32> -> tensor<4x256x512xf32>
  return
}

// -----

func.func @gk_capacity_mismatch(%a: tensor<256x1024xf8E4M3FN>, %as: tensor<256x8xf32>, %b: tensor<512x896xf8E4M3FN>, %bs: tensor<512x8xf32>, %o: tensor<4xi32>) {
  // expected-error @+1 {{expected B with A's capacity of 1024 tokens (A is 'tensor<256x1024xf8E4M3FN>') but got 'tensor<512x896xf8E4M3FN>'}}
  %c = blockscale.grouped_matmul_k %a[%as], %b[%bs] offsets(%o : tensor<4xi32>)
      : tensor<256x1024xf8E4M3FN>, tensor<256x8xf32>, tensor<512x896xf8E4M3FN>, tensor<512x8xf32> -> tensor<4x256x512xf32>
  return
}

// -----

func.func @gk_capacity_dynamic_mismatch(%a: tensor<256x?xf8E4M3FN>, %as: tensor<256x?xf32>, %b: tensor<512x1024xf8E4M3FN>, %bs: tensor<512x8xf32>, %o: tensor<4xi32>) {
  // expected-error @+1 {{expected B with A's capacity of ? tokens (A is 'tensor<256x?xf8E4M3FN>') but got 'tensor<512x1024xf8E4M3FN>'}}
  %c = blockscale.grouped_matmul_k %a[%as], %b[%bs] offsets(%o : tensor<4xi32>)
      : tensor<256x?xf8E4M3FN>, tensor<256x?xf32>, tensor<512x1024xf8E4M3FN>, tensor<512x8xf32> -> tensor<4x256x512xf32>
  return
}

// -----

func.func @gk_capacity_unaligned(%a: tensor<256x1000xf8E4M3FN>, %as: tensor<256x8xf32>, %b: tensor<512x1000xf8E4M3FN>, %bs: tensor<512x8xf32>, %o: tensor<4xi32>) {
  // expected-error @+1 {{expected capacity a multiple of 128 of at least 512 (128 G: every group starts a 128-token block) but got 1000}}
  %c = blockscale.grouped_matmul_k %a[%as], %b[%bs] offsets(%o : tensor<4xi32>)
      : tensor<256x1000xf8E4M3FN>, tensor<256x8xf32>, tensor<512x1000xf8E4M3FN>, tensor<512x8xf32> -> tensor<4x256x512xf32>
  return
}

// -----

func.func @gk_capacity_small(%a: tensor<256x896xf8E4M3FN>, %as: tensor<256x7xf32>, %b: tensor<512x896xf8E4M3FN>, %bs: tensor<512x7xf32>, %o: tensor<8xi32>) {
  // expected-error @+1 {{expected capacity a multiple of 128 of at least 1024 (128 G: every group starts a 128-token block) but got 896}}
  %c = blockscale.grouped_matmul_k %a[%as], %b[%bs] offsets(%o : tensor<8xi32>)
      : tensor<256x896xf8E4M3FN>, tensor<256x7xf32>, tensor<512x896xf8E4M3FN>, tensor<512x7xf32> -> tensor<8x256x512xf32>
  return
}

// -----

func.func @gk_a_scale_type(%a: tensor<256x1024xf8E4M3FN>, %as: tensor<256x8xbf16>, %b: tensor<512x1024xf8E4M3FN>, %bs: tensor<512x8xf32>, %o: tensor<4xi32>) {
  // expected-error @+1 {{expected A scales of type tensor<256x8xf32> but got 'tensor<256x8xbf16>'}}
  %c = blockscale.grouped_matmul_k %a[%as], %b[%bs] offsets(%o : tensor<4xi32>)
      : tensor<256x1024xf8E4M3FN>, tensor<256x8xbf16>, tensor<512x1024xf8E4M3FN>, tensor<512x8xf32> -> tensor<4x256x512xf32>
  return
}

// -----

func.func @gk_a_scale_shape(%a: tensor<256x1024xf8E4M3FN>, %as: tensor<8x256xf32>, %b: tensor<512x1024xf8E4M3FN>, %bs: tensor<512x8xf32>, %o: tensor<4xi32>) {
  // expected-error @+1 {{expected A scales of shape 256x8 (one per row per 128-token block) but got 8x256}}
  %c = blockscale.grouped_matmul_k %a[%as], %b[%bs] offsets(%o : tensor<4xi32>)
      : tensor<256x1024xf8E4M3FN>, tensor<8x256xf32>, tensor<512x1024xf8E4M3FN>, tensor<512x8xf32> -> tensor<4x256x512xf32>
  return
}

// -----

func.func @gk_b_scale_shape(%a: tensor<256x1024xf8E4M3FN>, %as: tensor<256x8xf32>, %b: tensor<512x1024xf8E4M3FN>, %bs: tensor<512x9xf32>, %o: tensor<4xi32>) {
  // expected-error @+1 {{expected B scales of shape 512x8 (one per row per 128-token block) but got 512x9}}
  %c = blockscale.grouped_matmul_k %a[%as], %b[%bs] offsets(%o : tensor<4xi32>)
      : tensor<256x1024xf8E4M3FN>, tensor<256x8xf32>, tensor<512x1024xf8E4M3FN>, tensor<512x9xf32> -> tensor<4x256x512xf32>
  return
}

// -----

func.func @gk_result_rank(%a: tensor<256x1024xf8E4M3FN>, %as: tensor<256x8xf32>, %b: tensor<512x1024xf8E4M3FN>, %bs: tensor<512x8xf32>, %o: tensor<4xi32>) {
  // expected-error @+1 {{expected a result of rank 3 (G, M, N) of bf16 or f32 but got 'tensor<1024x512xf32>'}}
  %c = blockscale.grouped_matmul_k %a[%as], %b[%bs] offsets(%o : tensor<4xi32>)
      : tensor<256x1024xf8E4M3FN>, tensor<256x8xf32>, tensor<512x1024xf8E4M3FN>, tensor<512x8xf32> -> tensor<1024x512xf32>
  return
}

// -----

func.func @gk_result_type(%a: tensor<256x1024xf8E4M3FN>, %as: tensor<256x8xf32>, %b: tensor<512x1024xf8E4M3FN>, %bs: tensor<512x8xf32>, %o: tensor<4xi32>) {
  // expected-error @+1 {{expected a result of rank 3 (G, M, N) of bf16 or f32 but got 'tensor<4x256x512xf16>'}}
  %c = blockscale.grouped_matmul_k %a[%as], %b[%bs] offsets(%o : tensor<4xi32>)
      : tensor<256x1024xf8E4M3FN>, tensor<256x8xf32>, tensor<512x1024xf8E4M3FN>, tensor<512x8xf32> -> tensor<4x256x512xf16>
  return
}

// -----

func.func @gk_result_shape(%a: tensor<256x1024xf8E4M3FN>, %as: tensor<256x8xf32>, %b: tensor<512x1024xf8E4M3FN>, %bs: tensor<512x8xf32>, %o: tensor<4xi32>) {
  // expected-error @+1 {{expected result shape 4x256x512 (G, M, N) but got 4x512x256}}
  %c = blockscale.grouped_matmul_k %a[%as], %b[%bs] offsets(%o : tensor<4xi32>)
      : tensor<256x1024xf8E4M3FN>, tensor<256x8xf32>, tensor<512x1024xf8E4M3FN>, tensor<512x8xf32> -> tensor<4x512x256xf32>
  return
}

// -----

func.func @gk_acc_type(%a: tensor<256x1024xf8E4M3FN>, %as: tensor<256x8xf32>, %b: tensor<512x1024xf8E4M3FN>, %bs: tensor<512x8xf32>, %o: tensor<4xi32>, %acc: tensor<4x256x512xbf16>) {
  // expected-error @+1 {{expected acc of type 'tensor<4x256x512xf32>' (the result type) but got 'tensor<4x256x512xbf16>'}}
  %c = blockscale.grouped_matmul_k %a[%as], %b[%bs] offsets(%o : tensor<4xi32>) acc(%acc : tensor<4x256x512xbf16>)
      : tensor<256x1024xf8E4M3FN>, tensor<256x8xf32>, tensor<512x1024xf8E4M3FN>, tensor<512x8xf32> -> tensor<4x256x512xf32>
  return
}

// -----

func.func @gk_acc_bf16(%a: tensor<256x1024xf8E4M3FN>, %as: tensor<256x8xf32>, %b: tensor<512x1024xf8E4M3FN>, %bs: tensor<512x8xf32>, %o: tensor<4xi32>, %acc: tensor<4x256x512xbf16>) {
  // expected-error @+1 {{expected an f32 result when accumulating but got 'bf16'}}
  %c = blockscale.grouped_matmul_k %a[%as], %b[%bs] offsets(%o : tensor<4xi32>) acc(%acc : tensor<4x256x512xbf16>)
      : tensor<256x1024xf8E4M3FN>, tensor<256x8xf32>, tensor<512x1024xf8E4M3FN>, tensor<512x8xf32> -> tensor<4x256x512xbf16>
  return
}

// -----

func.func @gk_tile_splits(%a: tensor<256x1024xf8E4M3FN>, %as: tensor<256x8xf32>, %b: tensor<512x1024xf8E4M3FN>, %bs: tensor<512x8xf32>, %o: tensor<4xi32>) {
  // expected-error @+1 {{expected a tile without split-K or clusters (splits = 1, ksplit = 1, cluster = 1) for a k-grouped matmul but got #blockscale.tile<bm = 128, bn = 128, bk = 128, stages = 4, cluster = 1, swizzle = 128, splits = 2, raster = 8>}}
  %c = blockscale.grouped_matmul_k %a[%as], %b[%bs] offsets(%o : tensor<4xi32>) {tile = #blockscale.tile<bm = 128, bn = 128, bk = 128, stages = 4, cluster = 1, swizzle = 128, splits = 2, raster = 8>}
      : tensor<256x1024xf8E4M3FN>, tensor<256x8xf32>, tensor<512x1024xf8E4M3FN>, tensor<512x8xf32> -> tensor<4x256x512xf32>
  return
}

// -----

func.func @gq_bytes(%x: tensor<?x256xbf16>, %o: tensor<8xi32>) {
  // expected-error @+1 {{expected result #0 to hold at most 2^63 - 1 bytes but got 'tensor<256x9223372036854775680xf8E4M3FN>'}}
  %q, %s = blockscale.quantize_grouped_tokens %x offsets(%o : tensor<8xi32>)
      : tensor<?x256xbf16> -> tensor<256x9223372036854775680xf8E4M3FN>, tensor<256x72057594037927935xf32>
  return
}

// -----

func.func @gq_layout(%x: tensor<?x256xbf16>, %o: tensor<8xi32>) {
  // expected-error @+1 {{expected scale_layout #blockscale.scale_layout<col_major, align = 4611686018427387904> to give 256x16 scales a buffer of at most 2^63 - 1 bytes but its padded size overflows int64}}
  %q, %s = blockscale.quantize_grouped_tokens %x offsets(%o : tensor<8xi32>) {scale_layout = #blockscale.scale_layout<col_major, align = 4611686018427387904>}
      : tensor<?x256xbf16> -> tensor<256x2048xf8E4M3FN>, tensor<256x16xf32>
  return
}

// -----

func.func @gk_b_scale_type(%a: tensor<256x1024xf8E4M3FN>, %as: tensor<256x8xf32>, %b: tensor<512x1024xf8E4M3FN>, %bs: tensor<512x8xi32>, %o: tensor<4xi32>) {
  // expected-error @+1 {{expected B scales of type tensor<512x8xf32> but got 'tensor<512x8xi32>'}}
  %c = blockscale.grouped_matmul_k %a[%as], %b[%bs] offsets(%o : tensor<4xi32>)
      : tensor<256x1024xf8E4M3FN>, tensor<256x8xf32>, tensor<512x1024xf8E4M3FN>, tensor<512x8xi32> -> tensor<4x256x512xf32>
  return
}
