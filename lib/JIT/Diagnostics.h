//===- Diagnostics.h - MLIR diagnostics as error text -----------*- C++ -*-===//
//
// Part of blockscale, under the Apache License v2.0 with LLVM Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Private to lib/JIT: the JIT and the device planner report MLIR failures as
// llvm::Error text with locations, severities and notes.
//
//===----------------------------------------------------------------------===//
#ifndef BLOCKSCALE_LIB_JIT_DIAGNOSTICS_H
#define BLOCKSCALE_LIB_JIT_DIAGNOSTICS_H

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace blockscale::detail {

/// Collects diagnostics into a string for llvm::Error.
struct Diagnostics {
  std::string text;
  mlir::ScopedDiagnosticHandler handler;
  explicit Diagnostics(mlir::MLIRContext *ctx)
      : handler(ctx, [this](mlir::Diagnostic &d) {
          llvm::raw_string_ostream os(text);
          const char *sev = d.getSeverity() == mlir::DiagnosticSeverity::Error
                                ? "error"
                                : d.getSeverity() ==
                                          mlir::DiagnosticSeverity::Warning
                                      ? "warning"
                                      : "note";
          os << d.getLocation() << ": " << sev << ": " << d << "\n";
          for (mlir::Diagnostic &note : d.getNotes())
            os << "  note: " << note << "\n";
          return mlir::success();
        }) {}
};

} // namespace blockscale::detail

#endif
