// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A C++ host of blockscale's runtime (blockscale::runtime, no MLIR): build a
// kernel spec (a forward GEMM, 128x128 tiles), generate its CUDA source,
// compile it with NVRTC through the process-wide kernel registry (memory and
// disk cache), and, where a Hopper GPU exists, launch it through its family
// (GemmFamily::launch) on operands whose product is known exactly: every
// FP8 element of A and B is 1.0, A's scales 1 and B's 2, so every element of
// C is 2 K. (The tile selection that picks a spec for a shape is the MLIR
// pipeline, which the C API -- see ../c_host -- includes.)
//
//   ./bs_cpp_host          exit 0 on success, 1 on a failure
#include "blockscale/Runtime/CudaDriver.h"
#include "blockscale/Runtime/Runtime.h"
#include "blockscale/Version.h"

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

using namespace blockscale;

static int fail(llvm::Error e, const char *what) {
  std::fprintf(stderr, "cpp_host: %s: %s\n", what,
               llvm::toString(std::move(e)).c_str());
  return 1;
}

static float bf16ToFloat(uint16_t v) {
  uint32_t u = uint32_t(v) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

static int runAndCheck(const CudaDriver &d, CompiledKernel &kernel) {
  GemmDesc desc; // the shape of this launch (M given at launch)
  desc.n = 256;
  desc.k = 512;
  const int64_t M = 256, N = desc.n, K = desc.k, Kb = K / 128;
  // Scales in the layout rule the kernels read (ScaleLayout.h).
  ScaleGeometry ga = llvm::cantFail(scaleGeometry(1, 128, M, K));
  ScaleGeometry gb = llvm::cantFail(scaleGeometry(128, 128, K, N));
  std::vector<uint8_t> a(size_t(M * K), 0x38), b(size_t(N * K), 0x38);
  std::vector<float> sa(size_t(ga.allocElements), 1.f),
      sb(size_t(gb.allocElements), 2.f);
  size_t cBytes = size_t(M) * N * 2; // bf16
  CUdeviceptr A = 0, B = 0, SA = 0, SB = 0, C = 0;
  for (auto [p, n] : {std::pair{&A, a.size()}, {&B, b.size()},
                      {&SA, sa.size() * 4}, {&SB, sb.size() * 4}, {&C, cBytes}})
    if (auto e = d.check(d.cuMemAlloc_v2(p, n), "cuMemAlloc"))
      return fail(std::move(e), "allocate");
  d.cuMemcpyHtoD_v2(A, a.data(), a.size());
  d.cuMemcpyHtoD_v2(B, b.data(), b.size());
  d.cuMemcpyHtoD_v2(SA, sa.data(), sa.size() * 4);
  d.cuMemcpyHtoD_v2(SB, sb.data(), sb.size() * 4);
  d.cuMemsetD8_v2(C, 0xff, cBytes); // NaN: an unwritten element fails

  GemmArgs args;
  args.a = reinterpret_cast<const void *>(A);
  args.b = reinterpret_cast<const void *>(B);
  args.sa = reinterpret_cast<const float *>(SA);
  args.sb = reinterpret_cast<const float *>(SB);
  args.c = reinterpret_cast<void *>(C);
  args.m = M; // strides: 0, the defaults of the layout rule
  if (auto e = GemmFamily::launch(kernel, GemmLaunchConfig{}, desc, args,
                                  nullptr))
    return fail(std::move(e), "launch");
  if (auto e = d.check(d.cuCtxSynchronize(), "kernel execution"))
    return fail(std::move(e), "run");
  std::vector<uint16_t> c(size_t(M) * N);
  d.cuMemcpyDtoH_v2(c.data(), C, cBytes);
  int64_t wrong = 0;
  for (uint16_t v : c)
    wrong += bf16ToFloat(v) != float(2 * K);
  std::printf("check: fwd %lldx%lldx%lld bf16 (%lld K-blocks): %lld of %zu "
              "elements differ from %lld -> %s\n",
              (long long)M, (long long)N, (long long)K, (long long)Kb,
              (long long)wrong, c.size(), (long long)(2 * K),
              wrong ? "FAIL" : "PASS");
  for (CUdeviceptr p : {A, B, SA, SB, C})
    d.cuMemFree_v2(p);
  return wrong ? 1 : 0;
}

int main() {
  std::printf("%s (C++ runtime)\n", BLOCKSCALE_VERSION_STRING);

  KernelSpec spec;
  spec.kind = KernelKind::Gemm;
  spec.gemm.form = GemmForm::Fwd; // 1x128 x 128x128 -> bf16
  spec.gemm.bm = 128;
  spec.gemm.bn = 128;
  spec.gemm.stages = 4;
  spec.name = kernelName(spec);
  std::string source = generateCudaSource(spec);
  std::printf("generated %zu bytes of CUDA for %s\n", source.size(),
              spec.name.c_str());

  auto compiled = KernelRegistry::global().getOrCompile(source);
  if (!compiled)
    return fail(compiled.takeError(), "compile");
  CompiledKernel &kernel = **compiled;
  std::printf("compiled: %zu bytes of cubin, %d registers, %.3f s%s\n",
              kernel.cubin.size(), kernel.registers, kernel.compileSeconds,
              kernel.fromDiskCache ? " (from the disk cache)" : "");

  auto driver = getCudaDriver();
  if (!driver) {
    std::string why = llvm::toString(driver.takeError());
    std::printf("no GPU: generated and compiled (%s)\n",
                why.substr(0, why.find(';')).c_str());
    return 0;
  }
  const CudaDriver &d = *driver;
  if (auto ctx = ensureContext(0); !ctx) {
    std::string why = llvm::toString(ctx.takeError());
    std::printf("no GPU: generated and compiled (%s)\n", why.c_str());
    return 0;
  }
  CUdevice dev = 0;
  int major = 0, minor = 0;
  char name[256] = "";
  d.cuCtxGetDevice(&dev);
  d.cuDeviceGetName(name, sizeof name, dev);
  d.cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                         dev);
  d.cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
                         dev);
  std::printf("GPU: %s, sm_%d%d\n", name, major, minor);
  if (major != 9 || minor != 0) {
    std::printf("blockscale's kernels need sm_90 (Hopper); generated and "
                "compiled, not run\n");
    return 0;
  }
  return runAndCheck(d, kernel);
}
