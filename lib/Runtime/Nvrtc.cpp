//===- Nvrtc.cpp - run-time CUDA compilation --------------------*- C++ -*-===//
//
// Part of blockscale, under the Apache License v2.0 with LLVM Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "blockscale/Runtime/Nvrtc.h"
#include "blockscale/Runtime/DynamicLibrary.h"
#include "blockscale/Runtime/EmbeddedHeaders.h"
#include "blockscale/Runtime/Error.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Regex.h"

#include <nvrtc.h>

#include <chrono>
#include <cstdlib>
#include <mutex>

using namespace blockscale;

namespace {
/// NVRTC is loaded with dlopen too: the Python package and the tools then
/// run wherever some libnvrtc.so.13 can be found (CUDA toolkit or wheel).
struct NvrtcApi {
#define BS_NVRTC_FNS(X)                                                       \
  X(nvrtcVersion, int *, int *)                                               \
  X(nvrtcGetErrorString, nvrtcResult)                                         \
  X(nvrtcCreateProgram, nvrtcProgram *, const char *, const char *, int,      \
    const char *const *, const char *const *)                                 \
  X(nvrtcDestroyProgram, nvrtcProgram *)                                      \
  X(nvrtcCompileProgram, nvrtcProgram, int, const char *const *)              \
  X(nvrtcGetProgramLogSize, nvrtcProgram, size_t *)                           \
  X(nvrtcGetProgramLog, nvrtcProgram, char *)                                 \
  X(nvrtcGetCUBINSize, nvrtcProgram, size_t *)                                \
  X(nvrtcGetCUBIN, nvrtcProgram, char *)                                      \
  X(nvrtcGetPTXSize, nvrtcProgram, size_t *)                                  \
  X(nvrtcGetPTX, nvrtcProgram, char *)
#define BS_DECL(name, ...) decltype(&::name) name = nullptr;
  BS_NVRTC_FNS(BS_DECL)
#undef BS_DECL
};
} // namespace

static llvm::Expected<const NvrtcApi &> getNvrtc() {
  static std::once_flag once;
  static NvrtcApi api;
  static std::string error;
  std::call_once(once, [] {
    std::vector<std::string> candidates = {"libnvrtc.so.13", "libnvrtc.so"};
    for (const char *env : {"CUDA_HOME", "CUDA_PATH"})
      if (const char *home = std::getenv(env))
        candidates.push_back(std::string(home) + "/lib64/libnvrtc.so");
    candidates.push_back("/usr/local/cuda/lib64/libnvrtc.so");
    DynamicLibrary lib;
    if (!lib.open(candidates)) {
      error = "cannot load NVRTC (libnvrtc.so.13): install the CUDA 13 "
              "toolkit or set CUDA_HOME";
      return;
    }
#define BS_LOAD(name, ...) lib.load(api.name, #name);
    BS_NVRTC_FNS(BS_LOAD)
#undef BS_LOAD
    if (!lib.missing().empty())
      error = "NVRTC lacks " + lib.missing();
  });
  if (!error.empty())
    return makeError(ErrorCode::Compile, error);
  return api;
}

llvm::Expected<std::string> blockscale::nvrtcVersion() {
  auto api = getNvrtc();
  if (!api)
    return api.takeError();
  int major = 0, minor = 0;
  api->nvrtcVersion(&major, &minor);
  return llvm::formatv("{0}.{1}", major, minor).str();
}

std::vector<std::string> CompileOptions::flags() const {
  std::vector<std::string> f = {
      ptx ? "-arch=compute_" + arch : "-arch=sm_" + arch, "-std=c++17",
      "-DNDEBUG"};
  if (!ptx)
    f.push_back("--ptxas-options=-v");
  f.insert(f.end(), extra.begin(), extra.end());
  return f;
}

/// Reads "Used N registers", "N bytes smem", "N bytes spill stores, M bytes
/// spill loads" and ptxas's wgmma serialization advisory.
static void parsePtxasLog(CompileOutput &out) {
  llvm::SmallVector<llvm::StringRef> lines;
  llvm::StringRef(out.log).split(lines, '\n');
  llvm::Regex regs("Used ([0-9]+) registers");
  llvm::Regex spills("([0-9]+) bytes spill stores, ([0-9]+) bytes spill loads");
  llvm::Regex smem("([0-9]+) bytes smem");
  for (llvm::StringRef line : lines) {
    llvm::SmallVector<llvm::StringRef> m;
    if (regs.match(line, &m)) {
      int r = 0;
      m[1].getAsInteger(10, r);
      out.registers = std::max(out.registers, r);
      // The same line names the static shared memory, if there is any.
      out.staticSmemBytes = std::max(out.staticSmemBytes, 0);
    }
    if (smem.match(line, &m)) {
      int b = 0;
      m[1].getAsInteger(10, b);
      out.staticSmemBytes = std::max(out.staticSmemBytes, b);
    }
    size_t at = line.find("wgmma.mma_async instructions are serialized");
    if (at != llvm::StringRef::npos && out.wgmmaSerialized.empty())
      out.wgmmaSerialized = line.substr(at).trim().str();
    if (spills.match(line, &m)) {
      int s = 0, l = 0;
      m[1].getAsInteger(10, s);
      m[2].getAsInteger(10, l);
      out.spillBytes += s + l;
    }
  }
}

llvm::Expected<CompileOutput>
blockscale::compileCuda(llvm::StringRef source, llvm::StringRef programName,
                        const CompileOptions &options) {
  auto apiOr = getNvrtc();
  if (!apiOr)
    return apiOr.takeError();
  const NvrtcApi &api = *apiOr;
  auto start = std::chrono::steady_clock::now();

  const std::vector<EmbeddedHeader> &headers = getEmbeddedHeaders();
  std::vector<const char *> names, contents;
  for (const EmbeddedHeader &h : headers) {
    names.push_back(h.name);
    contents.push_back(h.content);
  }
  std::string src = source.str(), name = programName.str() + ".cu";
  nvrtcProgram prog;
  nvrtcResult r =
      api.nvrtcCreateProgram(&prog, src.c_str(), name.c_str(), names.size(),
                             contents.data(), names.data());
  if (r != NVRTC_SUCCESS)
    return makeError(ErrorCode::Compile, llvm::Twine("nvrtcCreateProgram failed: ") +
                                             api.nvrtcGetErrorString(r));
  std::vector<std::string> flags = options.flags();
  std::vector<const char *> argv;
  for (const std::string &f : flags)
    argv.push_back(f.c_str());
  r = api.nvrtcCompileProgram(prog, argv.size(), argv.data());

  CompileOutput out;
  size_t logSize = 0;
  api.nvrtcGetProgramLogSize(prog, &logSize);
  if (logSize > 1) {
    out.log.resize(logSize);
    api.nvrtcGetProgramLog(prog, out.log.data());
    out.log.resize(logSize - 1);
  }
  if (r != NVRTC_SUCCESS) {
    std::string msg = llvm::formatv("NVRTC failed to compile {0} ({1}):\n{2}",
                                    name, api.nvrtcGetErrorString(r), out.log)
                          .str();
    api.nvrtcDestroyProgram(&prog);
    return makeError(ErrorCode::Compile, msg);
  }
  size_t size = 0;
  if (options.ptx) {
    api.nvrtcGetPTXSize(prog, &size);
    out.binary.resize(size);
    api.nvrtcGetPTX(prog, out.binary.data());
    if (!out.binary.empty() && out.binary.back() == '\0')
      out.binary.pop_back();
  } else {
    api.nvrtcGetCUBINSize(prog, &size);
    out.binary.resize(size);
    api.nvrtcGetCUBIN(prog, out.binary.data());
  }
  api.nvrtcDestroyProgram(&prog);
  parsePtxasLog(out);
  out.seconds = std::chrono::duration<double>(
                    std::chrono::steady_clock::now() - start)
                    .count();
  return out;
}
