// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/* A C host of blockscale's C API: describe a forward GEMM, generate its CUDA
 * source, compile it with NVRTC (no GPU needed for that), and, where a
 * Hopper GPU exists, run it and check it against a double-precision host
 * reference. The CUDA driver is opened with dlopen, so this builds and runs
 * (generation and compilation) on a machine without one.
 *
 *   ./bs_c_host            exit 0 on success, 1 on a failure
 */
#include <blockscale-c/blockscale.h>

#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { M = 256, N = 256, K = 512, KB = K / 128, NB = N / 128 };

static int fail(const char *what) {
  fprintf(stderr, "c_host: %s failed: %s\n", what, bs_last_error());
  return 1;
}

/* --- the few CUDA driver entry points the run needs, through dlopen ------ */
typedef int CUresult;
typedef int CUdevice;
typedef void *CUcontext;
typedef unsigned long long CUdeviceptr;
static struct {
  CUresult (*init)(unsigned);
  CUresult (*deviceGetCount)(int *);
  CUresult (*deviceGet)(CUdevice *, int);
  CUresult (*deviceGetName)(char *, int, CUdevice);
  CUresult (*deviceGetAttribute)(int *, int, CUdevice);
  CUresult (*primaryCtxRetain)(CUcontext *, CUdevice);
  CUresult (*ctxSetCurrent)(CUcontext);
  CUresult (*ctxSynchronize)(void);
  CUresult (*memAlloc)(CUdeviceptr *, size_t);
  CUresult (*memFree)(CUdeviceptr);
  CUresult (*memcpyHtoD)(CUdeviceptr, const void *, size_t);
  CUresult (*memcpyDtoH)(void *, CUdeviceptr, size_t);
} cu;

/* 1 when a GPU is usable (context current), 0 when there is none. */
static int openGpu(void) {
  void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!h)
    return 0;
#define LOAD(field, sym)                                                       \
  if (!(*(void **)&cu.field = dlsym(h, sym)))                                  \
    return 0;
  LOAD(init, "cuInit") LOAD(deviceGetCount, "cuDeviceGetCount")
  LOAD(deviceGet, "cuDeviceGet") LOAD(deviceGetName, "cuDeviceGetName")
  LOAD(deviceGetAttribute, "cuDeviceGetAttribute")
  LOAD(primaryCtxRetain, "cuDevicePrimaryCtxRetain")
  LOAD(ctxSetCurrent, "cuCtxSetCurrent") LOAD(ctxSynchronize, "cuCtxSynchronize")
  LOAD(memAlloc, "cuMemAlloc_v2") LOAD(memFree, "cuMemFree_v2")
  LOAD(memcpyHtoD, "cuMemcpyHtoD_v2") LOAD(memcpyDtoH, "cuMemcpyDtoH_v2")
#undef LOAD
  int n = 0;
  if (cu.init(0) != 0 || cu.deviceGetCount(&n) != 0 || n == 0)
    return 0;
  CUdevice dev;
  CUcontext ctx;
  char name[256] = "";
  int major = 0, minor = 0;
  if (cu.deviceGet(&dev, 0) != 0)
    return 0;
  cu.deviceGetName(name, sizeof name, dev);
  cu.deviceGetAttribute(&major, 75, dev); /* COMPUTE_CAPABILITY_MAJOR */
  cu.deviceGetAttribute(&minor, 76, dev); /* COMPUTE_CAPABILITY_MINOR */
  printf("GPU 0: %s, sm_%d%d\n", name, major, minor);
  if (major != 9 || minor != 0) {
    printf("blockscale's kernels need sm_90 (Hopper); not running\n");
    return 0;
  }
  if (cu.primaryCtxRetain(&ctx, dev) != 0 || cu.ctxSetCurrent(ctx) != 0)
    return 0;
  return 1;
}

/* FP8 e4m3 encodings of exactly representable values. */
static const uint8_t kFp8[4] = {0x38 /* 1 */, 0xB8 /* -1 */, 0x30 /* 0.5 */,
                                0x40 /* 2 */};
static const double kVal[4] = {1.0, -1.0, 0.5, 2.0};

static double bf16ToDouble(uint16_t v) {
  uint32_t bits = (uint32_t)v << 16;
  float f;
  memcpy(&f, &bits, 4);
  return f;
}

/* x rounded to bf16 (to nearest, ties to even), as the kernel's output. */
static double roundToBf16(double x) {
  float f = (float)x;
  uint32_t bits;
  memcpy(&bits, &f, 4);
  bits += 0x7FFFu + ((bits >> 16) & 1u);
  return bf16ToDouble((uint16_t)(bits >> 16));
}

/* Runs the kernel on data whose exact product is known; 0 on success. */
static int runAndCheck(bs_gemm_kernel_t kernel) {
  /* A (M, K) row-major; B given as (N, K) row-major; A scales (M, KB)
   * M-contiguous (K-block stride M); B scales (KB, NB) with the default
   * strides (1, round_up(KB, 4)). Values in {+-1, 0.5, 2} and power-of-two
   * scales make every product and partial sum exact, so the kernel's
   * output is the exact sum rounded to bf16, like the reference here. */
  static uint8_t a[M * K], b[N * K];
  static float sa[KB * M], sb[4 * NB];
  static uint16_t c[M * N];
  static int ia[M * K], ib[N * K];
  for (int i = 0; i < M * K; ++i)
    a[i] = kFp8[ia[i] = (i * 7 + i / K) % 4];
  for (int i = 0; i < N * K; ++i)
    b[i] = kFp8[ib[i] = (i * 5 + 3 * (i / K)) % 4];
  for (int kb = 0; kb < KB; ++kb)
    for (int m = 0; m < M; ++m)
      sa[kb * M + m] = (float)ldexp(1.0, (m + kb) % 3 - 1);
  for (int i = 0; i < 4 * NB; ++i)
    sb[i] = (float)ldexp(1.0, i % 3 - 1);

  CUdeviceptr dA, dB, dSA, dSB, dC;
  if (cu.memAlloc(&dA, sizeof a) || cu.memAlloc(&dB, sizeof b) ||
      cu.memAlloc(&dSA, sizeof sa) || cu.memAlloc(&dSB, sizeof sb) ||
      cu.memAlloc(&dC, sizeof c)) {
    fprintf(stderr, "c_host: cuMemAlloc failed\n");
    return 1;
  }
  cu.memcpyHtoD(dA, a, sizeof a);
  cu.memcpyHtoD(dB, b, sizeof b);
  cu.memcpyHtoD(dSA, sa, sizeof sa);
  cu.memcpyHtoD(dSB, sb, sizeof sb);

  bs_gemm_args_t args;
  bs_gemm_args_init(&args);
  args.a = (const void *)dA;
  args.a_scale = (const void *)dSA;
  args.b = (const void *)dB;
  args.b_scale = (const void *)dSB;
  args.c = (void *)dC;
  args.m = M;
  args.ldsa = M;
  if (bs_gemm_launch(kernel, &args, NULL) != BS_SUCCESS)
    return fail("bs_gemm_launch");
  if (cu.ctxSynchronize() != 0 || cu.memcpyDtoH(c, dC, sizeof c) != 0) {
    fprintf(stderr, "c_host: the kernel failed to run\n");
    return 1;
  }
  double num = 0, den = 0;
  for (int m = 0; m < M; ++m)
    for (int n = 0; n < N; ++n) {
      double want = 0;
      for (int k = 0; k < K; ++k)
        want += kVal[ia[m * K + k]] * sa[(k / 128) * M + m] *
                kVal[ib[n * K + k]] * sb[(k / 128) + (n / 128) * 4];
      want = roundToBf16(want);
      double got = bf16ToDouble(c[m * N + n]);
      num += (got - want) * (got - want);
      den += want * want;
    }
  double rel = sqrt(num / (den > 0 ? den : 1));
  printf("check: fwd %dx%dx%d bf16: rel_err=%.3e -> %s\n", M, N, K, rel,
         rel <= 2e-3 ? "PASS" : "FAIL");
  cu.memFree(dA);
  cu.memFree(dB);
  cu.memFree(dSA);
  cu.memFree(dSB);
  cu.memFree(dC);
  return rel <= 2e-3 ? 0 : 1;
}

int main(void) {
  printf("%s\n", bs_version());

  bs_gemm_desc_t desc;
  bs_gemm_desc_init(&desc);
  desc.form = BS_FORM_FWD;
  desc.m = -1; /* any M at launch */
  desc.n = N;
  desc.k = K;
  desc.m_hint = M;

  /* The CUDA source the JIT compiles for this description. */
  size_t need = 0;
  if (bs_gemm_source(&desc, NULL, 0, &need) != BS_SUCCESS)
    return fail("bs_gemm_source");
  char *src = malloc(need);
  if (!src || bs_gemm_source(&desc, src, need, NULL) != BS_SUCCESS)
    return fail("bs_gemm_source");
  const char *spec = strstr(src, "// blockscale-spec:");
  printf("generated %zu bytes of CUDA: %.*s\n", need - 1,
         spec ? (int)strcspn(spec, "\n") : 0, spec ? spec : "");
  free(src);

  /* Pipeline + NVRTC (or the kernel cache). */
  bs_gemm_kernel_t kernel = NULL;
  if (bs_gemm_kernel_create(&desc, &kernel) != BS_SUCCESS)
    return fail("bs_gemm_kernel_create");
  char info[2048];
  if (bs_gemm_kernel_info(kernel, info, sizeof info) == BS_SUCCESS)
    printf("compiled: %s\n", info);

  int rc = 0;
  if (openGpu())
    rc = runAndCheck(kernel);
  else
    printf("no GPU: generated and compiled\n");
  bs_gemm_kernel_destroy(kernel);
  return rc;
}
