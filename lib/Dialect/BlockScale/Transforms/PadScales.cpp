//===- PadScales.cpp - choose physical scale layouts ------------*- C++ -*-===//
//
// Part of blockscale, under the Apache License v2.0 with LLVM Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "blockscale/Dialect/BlockScale/Transforms/Passes.h"
#include "blockscale/Runtime/ScaleLayout.h"

#include "mlir/IR/BuiltinOps.h"

namespace mlir::blockscale {
#define GEN_PASS_DEF_BLOCKSCALEPADSCALES
#include "blockscale/Dialect/BlockScale/Transforms/Passes.h.inc"
} // namespace mlir::blockscale

using namespace mlir;
using namespace mlir::blockscale;

ScaleLayoutAttr mlir::blockscale::getRequiredScaleLayout(MLIRContext *ctx,
                                                         ScaleRecipe recipe,
                                                         bool isA) {
  (void)isA; // (the rule depends on the recipe alone)
  if (recipe == ScaleRecipe::tensorwise)
    return {};
  // The runtime's rule (blockscale/Runtime/ScaleLayout.h), which the casts'
  // and GEMMs' launches and the C API apply too.
  auto [br, bc] = getBlockShape(recipe);
  return ScaleLayoutAttr::get(ctx,
                              ::blockscale::scaleRowMajor(int(br), int(bc))
                                  ? Layout::row_major
                                  : Layout::col_major,
                              ::blockscale::kScaleAlign);
}

/// A layout satisfies a requirement when it has the same order and its
/// padding is at least as coarse (alignments are powers of two).
static bool satisfies(ScaleLayoutAttr have, ScaleLayoutAttr need) {
  return have.getOrder() == need.getOrder() &&
         have.getAlign() % need.getAlign() == 0;
}

namespace {
struct PadScalesPass
    : public mlir::blockscale::impl::BlockScalePadScalesBase<PadScalesPass> {
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    bool failed = false;

    // Gives `op`'s scale operand `scale` (role A or B) the required layout
    // and propagates it to a producing quantize op.
    auto settle = [&](MatmulOp op, Value scale, ScaleRecipe recipe, bool isA,
                      ScaleLayoutAttr have) -> ScaleLayoutAttr {
      ScaleLayoutAttr need = getRequiredScaleLayout(ctx, recipe, isA);
      // 128x128 scales are read as scalars through run-time strides: any
      // order works for the kernel, so a user choice stands.
      bool anyOrder = recipe == ScaleRecipe::blk_128x128;
      if (have && !anyOrder && !satisfies(have, need)) {
        op.emitOpError() << "expected " << (isA ? "A" : "B")
                         << " scale layout " << need << " ("
                         << getRecipeDisplayName(recipe)
                         << " scales as the kernel reads them) but got "
                         << have;
        failed = true;
        return have;
      }
      ScaleLayoutAttr chosen = have ? have : need;
      if (CastResult q = getProducingCast(scale)) {
        ScaleLayoutAttr prev = q.getScaleLayout();
        if (prev && prev != chosen) {
          InFlightDiagnostic diag =
              op.emitOpError()
              << "expected " << (isA ? "A" : "B") << " scales laid out as "
              << chosen << " but the producing quantize writes " << prev;
          diag.attachNote(q.op->getLoc()) << "scales produced here";
          failed = true;
          return chosen;
        }
        q.setScaleLayout(chosen);
      }
      return chosen;
    };

    getOperation().walk([&](MatmulOp op) {
      op.setAScaleLayoutAttr(settle(op, op.getAScale(), op.getARecipe(),
                                    /*isA=*/true, op.getAScaleLayoutAttr()));
      op.setBScaleLayoutAttr(settle(op, op.getBScale(), op.getBRecipe(),
                                    /*isA=*/false, op.getBScaleLayoutAttr()));
    });
    // A grouped matmul reads its A scales as the dense kernels do (through
    // TMA, rows-contiguous); its 128x128 B scales are scalars read through
    // strides, any order. It has no layout attributes of its own: the
    // producing cast must write that layout.
    getOperation().walk([&](GroupedMatmulOp op) {
      ScaleLayoutAttr need =
          getRequiredScaleLayout(ctx, ScaleRecipe::blk_1x128, /*isA=*/true);
      CastResult q = getProducingCast(op.getAScale());
      if (!q)
        return;
      ScaleLayoutAttr prev = q.getScaleLayout();
      if (prev && !satisfies(prev, need)) {
        InFlightDiagnostic diag =
            op.emitOpError()
            << "expected A scales laid out as " << need
            << " (1x128 scales as the grouped kernel reads them) but the "
               "producing quantize writes "
            << prev;
        diag.attachNote(q.op->getLoc()) << "scales produced here";
        failed = true;
        return;
      }
      if (!prev)
        q.setScaleLayout(need);
    });
    // The group-aware cast writes its 1x128 scales rows-contiguous, the
    // layout the k-grouped kernel reads through TMA for both of its
    // operands; it is the only producer of their group-padded operands, so
    // settling the casts settles the k-grouped matmuls.
    getOperation().walk([&](QuantizeGroupedTokensOp op) {
      ScaleLayoutAttr need =
          getRequiredScaleLayout(ctx, ScaleRecipe::blk_1x128, /*isA=*/true);
      ScaleLayoutAttr have = op.getScaleLayoutAttr();
      if (!have) {
        op.setScaleLayoutAttr(need);
        return;
      }
      if (!satisfies(have, need)) {
        op.emitOpError() << "expected scale_layout " << need
                         << " (the group-aware cast writes its scales rows-"
                            "contiguous, as the k-grouped kernel reads them) "
                            "but got "
                         << have;
        failed = true;
      }
    });
    if (failed)
      return signalPassFailure();

    // Casts that feed no matmul (e.g. a standalone cast kernel) get the
    // layout of the role their recipe implies; so does either scale result
    // of a dual cast that feeds none.
    auto settleUnused = [&](const CastResult &q) {
      if (q.getScaleLayout() || q.recipe == ScaleRecipe::tensorwise)
        return;
      q.setScaleLayout(getRequiredScaleLayout(
          ctx, q.recipe, q.recipe == ScaleRecipe::blk_1x128));
    };
    getOperation().walk([&](Operation *op) {
      if (auto q = dyn_cast<QuantizeOp>(op)) {
        settleUnused(getProducingCast(q.getScale()));
      } else if (auto d = dyn_cast<QuantizeDualOp>(op)) {
        settleUnused(getProducingCast(d.getScale()));
        settleUnused(getProducingCast(d.getTScale()));
      }
    });
  }
};
} // namespace
