// RUN: blockscale-opt %s --allow-unregistered-dialect --blockscale-check-shardings | FileCheck %s

// An op of an unregistered dialect is not a blockscale op: the guard leaves
// it to upstream propagation (it used to dereference its missing dialect).
// CHECK-LABEL: func.func @foreign
// CHECK: "foo.bar"
func.func @foreign(%x: tensor<128x256xbf16>) -> tensor<128x256xbf16> {
  %y = "foo.bar"(%x) : (tensor<128x256xbf16>) -> tensor<128x256xbf16>
  return %y : tensor<128x256xbf16>
}
