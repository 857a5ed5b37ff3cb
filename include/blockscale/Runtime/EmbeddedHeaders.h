//===- EmbeddedHeaders.h - CUDA templates compiled into the binary -*- C++ -*-===//
//
// Part of blockscale, under the Apache License v2.0 with LLVM Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
#ifndef BLOCKSCALE_RUNTIME_EMBEDDEDHEADERS_H
#define BLOCKSCALE_RUNTIME_EMBEDDEDHEADERS_H

#include <vector>

namespace blockscale {

struct EmbeddedHeader {
  const char *name;    // include name, e.g. "blockscale/gemm_sm90.cuh"
  const char *content;
};

/// Every kernel template header (include/blockscale/Target/Cuda/Kernels).
const std::vector<EmbeddedHeader> &getEmbeddedHeaders();

} // namespace blockscale

#endif
