//===- Error.h - typed errors of the runtime and the JIT --------*- C++ -*-===//
//
// Part of blockscale, under the Apache License v2.0 with LLVM Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Every failure the runtime, the JIT and the C API report is a
// blockscale::Error carrying a category (ErrorCode) and the message the user
// reads: what was expected, what was found, and the fix. The C API maps the
// category to its status code; nothing parses messages.
//
//===----------------------------------------------------------------------===//
#ifndef BLOCKSCALE_RUNTIME_ERROR_H
#define BLOCKSCALE_RUNTIME_ERROR_H

#include "llvm/ADT/Twine.h"
#include "llvm/Support/Error.h"

#include <string>

namespace blockscale {

/// Values equal the C API's bs_status_t codes.
enum class ErrorCode {
  InvalidArgument = 1, // bad description, shape, stride, pointer, option
  Compile = 2,         // the emitter or NVRTC failed
  NoDevice = 3,        // no libcuda, no GPU, or a GPU the kernels cannot run on
  Cuda = 4,            // a CUDA driver call failed
  Internal = 5,        // a broken invariant of blockscale itself
};

class Error : public llvm::ErrorInfo<Error> {
public:
  static char ID;
  Error(ErrorCode code, std::string message)
      : code(code), message(std::move(message)) {}
  ErrorCode getCode() const { return code; }
  const std::string &getMessage() const { return message; }
  void log(llvm::raw_ostream &os) const override { os << message; }
  std::error_code convertToErrorCode() const override;

private:
  ErrorCode code;
  std::string message;
};

/// The one way to make an error.
llvm::Error makeError(ErrorCode code, const llvm::Twine &message);
inline llvm::Error invalidArgument(const llvm::Twine &message) {
  return makeError(ErrorCode::InvalidArgument, message);
}

/// The category of `e` (Internal for an error that is not a
/// blockscale::Error) and its message; consumes `e`.
ErrorCode takeErrorCode(llvm::Error e, std::string *message = nullptr);

/// `e` with `context` in front of its message, keeping its category.
llvm::Error withContext(llvm::Error e, const llvm::Twine &context);

} // namespace blockscale

#endif
