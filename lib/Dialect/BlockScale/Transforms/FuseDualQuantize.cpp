//===- FuseDualQuantize.cpp - two casts of a tensor as one ------*- C++ -*-===//
//
// Part of blockscale, under the Apache License v2.0 with LLVM Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "blockscale/Dialect/BlockScale/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/MapVector.h"

namespace mlir::blockscale {
#define GEN_PASS_DEF_BLOCKSCALEFUSEDUALQUANTIZE
#include "blockscale/Dialect/BlockScale/Transforms/Passes.h.inc"
} // namespace mlir::blockscale

using namespace mlir;
using namespace mlir::blockscale;

/// The in-order cast of `a` and `b` when one quantize_dual can replace both
/// (Passes.td lists the rules), else null.
static QuantizeOp getDualFirst(QuantizeOp a, QuantizeOp b) {
  if (a->getBlock() != b->getBlock() || a.getRecipe() != b.getRecipe() ||
      a.getLayout() != b.getLayout() || a.getTranspose() == b.getTranspose() ||
      a.getResult().getType().getElementType() !=
          b.getResult().getType().getElementType())
    return {};
  // Same layout, opposite transpose: exactly one of them is in input order.
  QuantizeOp first = a.writesTransposed() ? b : a;
  auto [rows, cols] = getBlockShape(first.getRecipe());
  if (first.getTranspose())
    std::swap(rows, cols);
  if ((rows != 1 && rows != 128) || cols != 128)
    return {};
  return first;
}

namespace {
struct FuseDualQuantizePass
    : public mlir::blockscale::impl::BlockScaleFuseDualQuantizeBase<
          FuseDualQuantizePass> {
  void runOnOperation() override {
    // Casts by input, in program order, so that the pairing is
    // deterministic.
    llvm::MapVector<Value, SmallVector<QuantizeOp>> byInput;
    getOperation().walk(
        [&](QuantizeOp q) { byInput[q.getInput()].push_back(q); });

    OpBuilder builder(&getContext());
    for (auto &[input, casts] : byInput) {
      SmallVector<bool> paired(casts.size(), false);
      for (size_t i = 0; i < casts.size(); ++i) {
        // (A paired cast has been erased.)
        if (paired[i])
          continue;
        for (size_t j = i + 1; j < casts.size(); ++j) {
          if (paired[j])
            continue;
          QuantizeOp first = getDualFirst(casts[i], casts[j]);
          if (!first)
            continue;
          QuantizeOp second = first == casts[i] ? casts[j] : casts[i];
          QuantizeOp earlier =
              casts[i]->isBeforeInBlock(casts[j]) ? casts[i] : casts[j];
          builder.setInsertionPoint(earlier);
          auto dual = QuantizeDualOp::create(
              builder, builder.getFusedLoc({first.getLoc(), second.getLoc()}),
              first.getResult().getType(), first.getScale().getType(),
              second.getResult().getType(), second.getScale().getType(), input,
              first.getRecipe(), first.getLayout(), first.getTranspose(),
              first.getScaleLayoutAttr(), second.getScaleLayoutAttr());
          first.getResult().replaceAllUsesWith(dual.getResult());
          first.getScale().replaceAllUsesWith(dual.getScale());
          second.getResult().replaceAllUsesWith(dual.getTResult());
          second.getScale().replaceAllUsesWith(dual.getTScale());
          first->erase();
          second->erase();
          paired[i] = paired[j] = true;
          break;
        }
      }
    }
  }
};
} // namespace
