func.func @fwd(%x: tensor<?x7168xbf16>, %wq: tensor<7168x2112xf8E4M3FN>, %ws: tensor<56x17xf32>) -> tensor<?x2112xbf16> {
  %xq, %xs = blockscale.quantize %x {recipe = #blockscale.recipe<blk_1x128>}
      : tensor<?x7168xbf16> -> tensor<?x7168xf8E4M3FN>, tensor<?x56xf32>
  %c = blockscale.matmul %xq[%xs], %wq[%ws] {form = #blockscale.form<fwd>,
         a_recipe = #blockscale.recipe<blk_1x128>, b_recipe = #blockscale.recipe<blk_128x128>}
      : tensor<?x7168xf8E4M3FN>, tensor<?x56xf32>, tensor<7168x2112xf8E4M3FN>, tensor<56x17xf32> -> tensor<?x2112xbf16>
  return %c : tensor<?x2112xbf16>
}
