// A C++ host of blockscale's runtime (blockscale::runtime, no MLIR): build a
// kernel spec (a forward GEMM, 128x128 tiles), generate its CUDA source,
// compile it with NVRTC through the process-wide kernel registry (memory and
// disk cache), and, where a Hopper GPU exists, launch it on random operands
// and check the result against the runtime's double-precision reference.
// (The tile selection that picks a spec for a shape is the MLIR pipeline,
// which the C API -- see ../c_host -- includes.)
//
//   ./bs_cpp_host          exit 0 on success, 1 on a failure
#include "blockscale/Runtime/CudaDriver.h"
#include "blockscale/Runtime/Reference.h"
#include "blockscale/Runtime/Runtime.h"
#include "blockscale/Runtime/SourceGen.h"
#include "blockscale/Version.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

using namespace blockscale;

static int fail(llvm::Error e, const char *what) {
  std::fprintf(stderr, "cpp_host: %s: %s\n", what,
               llvm::toString(std::move(e)).c_str());
  return 1;
}

static int runAndCheck(const CudaDriver &d, CompiledKernel &kernel) {
  const int64_t M = 256, N = 256, K = 512;
  std::mt19937_64 rng(1);
  ref::GemmOperands ops = ref::makeGemmOperands(
      GemmForm::Fwd, M, N, K, Fp8Type::E4M3, Fp8Type::E4M3, false, rng);
  size_t cBytes = size_t(M) * N * 2; // bf16
  CUdeviceptr A = 0, B = 0, SA = 0, SB = 0, C = 0;
  if (auto e = d.check(d.cuMemAlloc_v2(&A, ops.a.size()), "cuMemAlloc"))
    return fail(std::move(e), "allocate");
  if (auto e = d.check(d.cuMemAlloc_v2(&B, ops.b.size()), "cuMemAlloc"))
    return fail(std::move(e), "allocate");
  if (auto e = d.check(d.cuMemAlloc_v2(&SA, ops.sa.size() * 4), "cuMemAlloc"))
    return fail(std::move(e), "allocate");
  if (auto e = d.check(d.cuMemAlloc_v2(&SB, ops.sb.size() * 4), "cuMemAlloc"))
    return fail(std::move(e), "allocate");
  if (auto e = d.check(d.cuMemAlloc_v2(&C, cBytes), "cuMemAlloc"))
    return fail(std::move(e), "allocate");
  d.cuMemcpyHtoD_v2(A, ops.a.data(), ops.a.size());
  d.cuMemcpyHtoD_v2(B, ops.b.data(), ops.b.size());
  d.cuMemcpyHtoD_v2(SA, ops.sa.data(), ops.sa.size() * 4);
  d.cuMemcpyHtoD_v2(SB, ops.sb.data(), ops.sb.size() * 4);

  GemmArgs args;
  args.a = reinterpret_cast<const void *>(A);
  args.b = reinterpret_cast<const void *>(B);
  args.sa = reinterpret_cast<const float *>(SA);
  args.sb = reinterpret_cast<const float *>(SB);
  args.c = reinterpret_cast<void *>(C);
  args.m = M;
  args.ldsa = ops.ldsa;
  args.sbStrideK = ops.sbStrideK;
  args.sbStrideN = ops.sbStrideN;
  if (auto e = launchGemm(kernel, GemmLaunchConfig{}, N, K, args, nullptr))
    return fail(std::move(e), "launchGemm");
  if (auto e = d.check(d.cuCtxSynchronize(), "kernel execution"))
    return fail(std::move(e), "run");
  std::vector<uint16_t> c(size_t(M) * N);
  d.cuMemcpyDtoH_v2(c.data(), C, cBytes);

  std::vector<double> want;
  ref::gemmReference(ops, GemmForm::Fwd, Fp8Type::E4M3, Fp8Type::E4M3, {},
                     want);
  double num = 0, den = 0;
  for (size_t i = 0; i < c.size(); ++i) {
    double got = ref::bf16ToFloat(c[i]);
    num += (got - want[i]) * (got - want[i]);
    den += want[i] * want[i];
  }
  double rel = std::sqrt(num / (den > 0 ? den : 1));
  // The bf16 rounding of the output alone is ~1.6e-3 on random data.
  bool ok = rel <= 2e-3;
  std::printf("check: fwd %lldx%lldx%lld bf16: rel_err=%.3e -> %s\n",
              (long long)M, (long long)N, (long long)K, rel,
              ok ? "PASS" : "FAIL");
  for (CUdeviceptr p : {A, B, SA, SB, C})
    d.cuMemFree_v2(p);
  return ok ? 0 : 1;
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
