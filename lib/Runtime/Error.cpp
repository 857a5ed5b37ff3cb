//===- Error.cpp - typed errors of the runtime and the JIT ------*- C++ -*-===//
//
// Part of blockscale, under the Apache License v2.0 with LLVM Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "blockscale/Runtime/Error.h"

using namespace blockscale;

char blockscale::Error::ID = 0;

std::error_code blockscale::Error::convertToErrorCode() const {
  return llvm::inconvertibleErrorCode();
}

llvm::Error blockscale::makeError(ErrorCode code, const llvm::Twine &message) {
  return llvm::make_error<Error>(code, message.str());
}

ErrorCode blockscale::takeErrorCode(llvm::Error e, std::string *message) {
  ErrorCode code = ErrorCode::Internal;
  std::string text;
  llvm::handleAllErrors(
      std::move(e),
      [&](const Error &b) {
        // Several joined errors: the first one's category, all messages.
        if (text.empty())
          code = b.getCode();
        text += (text.empty() ? "" : "\n") + b.getMessage();
      },
      [&](const llvm::ErrorInfoBase &other) {
        text += (text.empty() ? "" : "\n") + other.message();
      });
  if (message)
    *message = std::move(text);
  return code;
}

llvm::Error blockscale::withContext(llvm::Error e, const llvm::Twine &context) {
  if (!e)
    return e;
  std::string message;
  ErrorCode code = takeErrorCode(std::move(e), &message);
  return makeError(code, context + message);
}
