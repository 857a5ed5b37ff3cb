// A function with no blockscale op (errors.test): nothing to emit.

func.func @identity(%x: tensor<128x256xbf16>) -> tensor<128x256xbf16> {
  return %x : tensor<128x256xbf16>
}
