//===- DevicePlan.cpp - the program of one device ----------------*- C++ -*-===//
//
// Part of blockscale, under the Apache License v2.0 with LLVM Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "blockscale/Distributed/DevicePlan.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

using namespace blockscale;
using namespace blockscale::dist;

int dist::elemBytes(ElemType t) {
  switch (t) {
  case ElemType::F8E4M3:
  case ElemType::F8E5M2:
    return 1;
  case ElemType::BF16:
  case ElemType::F16:
    return 2;
  case ElemType::F32:
    return 4;
  }
  return 0;
}

llvm::StringRef dist::toString(ElemType t) {
  switch (t) {
  case ElemType::F8E4M3:
    return "f8E4M3FN";
  case ElemType::F8E5M2:
    return "f8E5M2";
  case ElemType::BF16:
    return "bf16";
  case ElemType::F16:
    return "f16";
  case ElemType::F32:
    return "f32";
  }
  return "?";
}

int TensorInfo::outerDim() const {
  if (shape.size() < 2)
    return 0;
  return strides[0] >= strides[1] ? 0 : 1;
}

int64_t dist::gridSize(llvm::ArrayRef<int64_t> g) {
  int64_t n = 1;
  for (int64_t d : g)
    n *= d;
  return n;
}

std::vector<int64_t> dist::gridIndex(llvm::ArrayRef<int64_t> g, int64_t rank) {
  std::vector<int64_t> idx(g.size());
  for (int i = int(g.size()) - 1; i >= 0; --i) {
    idx[i] = rank % g[i];
    rank /= g[i];
  }
  return idx;
}

static int64_t linearize(llvm::ArrayRef<int64_t> g,
                         llvm::ArrayRef<int64_t> idx) {
  int64_t r = 0;
  for (size_t i = 0; i < g.size(); ++i)
    r = r * g[i] + idx[i];
  return r;
}

std::vector<int64_t> dist::groupRanks(llvm::ArrayRef<int64_t> g,
                                      llvm::ArrayRef<int> axes, int64_t rank) {
  std::vector<int64_t> base = gridIndex(g, rank);
  std::vector<int64_t> sizes;
  for (int a : axes)
    sizes.push_back(g[a]);
  std::vector<int64_t> out;
  int64_t n = gridSize(sizes);
  for (int64_t i = 0; i < n; ++i) {
    std::vector<int64_t> sub = gridIndex(sizes, i), idx = base;
    for (size_t j = 0; j < axes.size(); ++j)
      idx[axes[j]] = sub[j];
    out.push_back(linearize(g, idx));
  }
  return out;
}

std::vector<int64_t>
dist::shardOffsets(llvm::ArrayRef<int64_t> g,
                   const std::vector<std::vector<int>> &splits,
                   llvm::ArrayRef<int64_t> globalShape, int64_t rank) {
  std::vector<int64_t> idx = gridIndex(g, rank), off(globalShape.size(), 0);
  for (size_t d = 0; d < globalShape.size() && d < splits.size(); ++d) {
    int64_t shard = 0, count = 1;
    for (int a : splits[d]) {
      shard = shard * g[a] + idx[a];
      count *= g[a];
    }
    off[d] = shard * (globalShape[d] / count);
  }
  return off;
}

static std::string shapeStr(const std::vector<int64_t> &v) {
  std::string s;
  llvm::raw_string_ostream os(s);
  llvm::interleave(v, os, "x");
  return s;
}

std::string DevicePlan::str() const {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "grid " << shapeStr(gridShape) << "\n";
  for (auto [i, t] : llvm::enumerate(tensors))
    os << "  %" << i << " " << t.name << ": " << shapeStr(t.shape) << "x"
       << toString(t.type) << " strides [" << shapeStr(t.strides)
       << "] alloc " << t.allocElements << "\n";
  auto ids = [&](const std::vector<int> &v) {
    std::string r;
    for (int x : v)
      r += (r.empty() ? "%" : ", %") + std::to_string(x);
    return r;
  };
  os << "  args (" << ids(args) << ") results (" << ids(results) << ")\n";
  for (const Step &st : steps) {
    switch (st.kind) {
    case Step::Kind::Quantize:
      os << "  quantize " << st.quant.blockRows << "x" << st.quant.blockCols
         << (st.quant.transpose ? " transpose" : "")
         << (st.quant.colMajor ? " col_major" : "") << " rows " << st.quant.rows
         << " cols " << st.quant.cols;
      break;
    case Step::Kind::Gemm:
      os << "  gemm " << blockscale::toString(st.gemm.form) << " "
         << st.gemm.m << "x" << st.gemm.n << "x" << st.gemm.k << " "
         << blockscale::toString(st.gemm.out)
         << (st.gemm.accumulate ? " +=" : "");
      break;
    case Step::Kind::AllReduce:
      os << "  all_reduce axes [" << llvm::join(llvm::map_range(st.gridAxes, [](int a) { return std::to_string(a); }), ",") << "]";
      break;
    case Step::Kind::AllGather:
      os << "  all_gather axes [" << llvm::join(llvm::map_range(st.gridAxes, [](int a) { return std::to_string(a); }), ",") << "] axis " << st.axis;
      break;
    case Step::Kind::ReduceScatter:
      os << "  reduce_scatter axes [" << llvm::join(llvm::map_range(st.gridAxes, [](int a) { return std::to_string(a); }), ",") << "] axis " << st.axis;
      break;
    }
    os << " (" << ids(st.inputs) << ") -> (" << ids(st.outputs) << ")\n";
  }
  return s;
}

