//===- jit_latency.cpp - JIT latency bench ----------------------*- C++ -*-===//
//
// Part of blockscale, under the Apache License v2.0 with LLVM Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Measures, for a set of GEMM descriptions:
//   cold   - first request in a process with an empty disk cache (MLIR
//            pipeline + emitter + NVRTC + cache write),
//   disk   - first request after dropping the in-memory maps (pipeline +
//            cache read), plus the module load into the CUDA context,
//   memory - a repeated request (map lookup) and, with a GPU, lookup + launch
//            host time per call (the GPU work is asynchronous).
// Usage: blockscale-bench-jit [--json FILE]; uses a fresh temporary cache
// directory unless BLOCKSCALE_CACHE_DIR is set.
//
//===----------------------------------------------------------------------===//

#include "blockscale/JIT/Jit.h"
#include "blockscale/Runtime/CudaDriver.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <string>
#include <vector>

using namespace blockscale;
using Clock = std::chrono::steady_clock;

static double since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

int main(int argc, char **argv) {
  std::string json;
  for (int i = 1; i + 1 < argc; ++i)
    if (std::string(argv[i]) == "--json")
      json = argv[i + 1];
  if (!std::getenv("BLOCKSCALE_CACHE_DIR")) {
    llvm::SmallString<128> dir;
    llvm::sys::fs::createUniqueDirectory("blockscale-bench-cache", dir);
    setenv("BLOCKSCALE_CACHE_DIR", dir.c_str(), 1);
  }
  struct Case {
    GemmForm form;
    int64_t n, k;
    const char *tile;
  } cases[] = {{GemmForm::Fwd, 7168, 16384, "bm=128,bn=128"},
               {GemmForm::Fwd, 2112, 7168, "bm=128,bn=192"},
               {GemmForm::Fwd, 4096, 7168, "bm=64,bn=64,splits=2"},
               {GemmForm::Wgrad, 4096, 16384, "bm=128,bn=160"},
               {GemmForm::Wgrad, 4096, 4096, "bm=128,bn=96"}};
  bool gpu = static_cast<bool>(getCudaDriver());
  std::string out = "{\"rows\": [";
  llvm::outs() << "cache dir: " << std::getenv("BLOCKSCALE_CACHE_DIR")
               << (gpu ? "" : " (no GPU: compile and disk only)") << "\n";
  bool firstRow = true;
  for (const Case &c : cases) {
    GemmDesc d;
    d.form = c.form;
    d.m = -1;
    d.n = c.n;
    d.k = c.k;
    d.forceTile = c.tile;
    auto t0 = Clock::now();
    auto k = getGemmKernel(d);
    double cold = since(t0);
    if (!k) {
      llvm::errs() << llvm::toString(k.takeError()) << "\n";
      return 1;
    }
    double nvrtc = (*k)->compiled->compileSeconds;
    clearJitMemoryCache();
    t0 = Clock::now();
    auto k2 = getGemmKernel(d);
    double disk = since(t0);
    if (!k2 || !(*k2)->compiled->fromDiskCache) {
      llvm::errs() << "expected a disk-cache hit\n";
      return 1;
    }
    double load = 0;
    if (gpu) {
      t0 = Clock::now();
      auto fn = (*k2)->compiled->function();
      load = since(t0);
      if (!fn) {
        llvm::errs() << llvm::toString(fn.takeError()) << "\n";
        return 1;
      }
    }
    // In-memory lookups.
    const int iters = 20000;
    t0 = Clock::now();
    for (int i = 0; i < iters; ++i)
      (void)getGemmKernel(d);
    double lookup = since(t0) / iters;
    double launch = 0;
    if (gpu) {
      const CudaDriver &drv = *getCudaDriver();
      if (auto ctx = ensureContext(); !ctx) {
        llvm::errs() << llvm::toString(ctx.takeError()) << "\n";
        return 1;
      }
      int64_t m = 64;
      CUdeviceptr a, b, sa, sb, cbuf;
      int64_t kb = (d.k + 127) / 128;
      drv.cuMemAlloc_v2(&a, m * d.k);
      drv.cuMemAlloc_v2(&b, d.n * d.k);
      drv.cuMemAlloc_v2(&sa, kb * m * 4);
      drv.cuMemAlloc_v2(&sb, kb * (d.n + 4) * 4);
      drv.cuMemAlloc_v2(&cbuf, m * d.n * 2);
      drv.cuMemsetD8_v2(a, 0x38, m * d.k);
      drv.cuMemsetD8_v2(b, 0x38, d.n * d.k);
      drv.cuMemsetD8_v2(sa, 0, kb * m * 4);
      drv.cuMemsetD8_v2(sb, 0, kb * (d.n + 4) * 4);
      CUstream s;
      drv.cuStreamCreate(&s, 1);
      GemmArgs args;
      args.a = reinterpret_cast<void *>(a);
      args.b = reinterpret_cast<void *>(b);
      args.sa = reinterpret_cast<float *>(sa);
      args.sb = reinterpret_cast<float *>(sb);
      args.c = reinterpret_cast<void *>(cbuf);
      args.m = m;
      // Few enough launches that the stream's queue never fills: this is
      // host time, not GPU time.
      const int launches = 200;
      std::vector<double> per;
      for (int rep = 0; rep < 5; ++rep) {
        drv.cuStreamSynchronize(s);
        t0 = Clock::now();
        for (int i = 0; i < launches; ++i) {
          auto kk = getGemmKernel(d);
          if (auto e = (**kk)(args, s)) {
            llvm::errs() << llvm::toString(std::move(e)) << "\n";
            return 1;
          }
        }
        per.push_back(since(t0) / launches);
        drv.cuStreamSynchronize(s);
      }
      std::sort(per.begin(), per.end());
      launch = per[per.size() / 2];
    }
    llvm::outs() << llvm::formatv(
        "{0} N={1} K={2} {3}: cold {4:f1} ms (NVRTC {5:f1} ms), disk hit "
        "{6:f2} ms + module load {7:f2} ms, lookup {8:f2} us, lookup+launch "
        "{9:f2} us\n",
        toString(c.form), c.n, c.k, c.tile, cold * 1e3, nvrtc * 1e3,
        disk * 1e3, load * 1e3, lookup * 1e6, launch * 1e6);
    out += llvm::formatv("{0}{{\"form\": \"{1}\", \"n\": {2}, \"k\": {3}, "
                         "\"tile\": \"{4}\", \"cold_ms\": {5}, \"nvrtc_ms\": "
                         "{6}, \"disk_ms\": {7}, \"load_ms\": {8}, "
                         "\"lookup_us\": {9}, \"launch_us\": {10}}",
                         firstRow ? "" : ", ", toString(c.form), c.n, c.k,
                         c.tile, cold * 1e3, nvrtc * 1e3, disk * 1e3,
                         load * 1e3, lookup * 1e6, launch * 1e6)
               .str();
    firstRow = false;
  }
  out += "]}\n";
  if (!json.empty()) {
    std::error_code ec;
    llvm::raw_fd_ostream f(json, ec);
    f << out;
  }
  return 0;
}
