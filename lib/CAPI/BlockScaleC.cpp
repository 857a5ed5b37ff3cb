//===- BlockScaleC.cpp - C API of the blockscale JIT ------------*- C++ -*-===//

#include "blockscale-c/blockscale.h"
#include "blockscale/JIT/Jit.h"
#include "blockscale/VersionPrinter.h"

#include "llvm/Support/FormatVariadic.h"

#include <cstring>
#include <string>

using namespace blockscale;

struct bs_gemm_kernel_s {
  std::shared_ptr<const GemmKernel> kernel;
};
struct bs_quant_kernel_s {
  std::shared_ptr<const QuantKernel> kernel;
};

static thread_local std::string lastError;

static bs_status_t classify(const std::string &msg) {
  if (msg.find("no CUDA driver") != std::string::npos ||
      msg.find("no CUDA device") != std::string::npos)
    return BS_ERROR_NO_DEVICE;
  if (msg.find("NVRTC") != std::string::npos ||
      msg.find("pipeline failed") != std::string::npos ||
      msg.find("emitting CUDA") != std::string::npos)
    return BS_ERROR_COMPILE;
  if (msg.find("failed: CUDA_ERROR") != std::string::npos)
    return BS_ERROR_CUDA;
  return BS_ERROR_INVALID_ARGUMENT;
}

static bs_status_t setError(llvm::Error e) {
  lastError = llvm::toString(std::move(e));
  return classify(lastError);
}

static bs_status_t setError(const std::string &msg, bs_status_t s) {
  lastError = msg;
  return s;
}

extern "C" {

const char *bs_version(void) { return blockscale::versionString(); }
const char *bs_last_error(void) { return lastError.c_str(); }

void bs_gemm_desc_init(bs_gemm_desc_t *d) {
  std::memset(d, 0, sizeof(*d));
  d->struct_size = sizeof(*d);
  d->form = BS_FORM_FWD;
  d->m = -1;
  d->m_hint = 4096;
  d->out_dtype = BS_DTYPE_BF16;
}

void bs_gemm_args_init(bs_gemm_args_t *a) {
  std::memset(a, 0, sizeof(*a));
  a->struct_size = sizeof(*a);
  a->m = -1;
}

static bool toDesc(const bs_gemm_desc_t *in, GemmDesc &d, JitOptions &o) {
  if (!in || in->struct_size != sizeof(bs_gemm_desc_t)) {
    setError("bs_gemm_desc_t: struct_size mismatch (call bs_gemm_desc_init)",
             BS_ERROR_INVALID_ARGUMENT);
    return false;
  }
  if (in->form < 0 || in->form > 2 || in->a_type < 0 || in->a_type > 1 ||
      in->b_type < 0 || in->b_type > 1 || in->out_dtype < 0 ||
      in->out_dtype > 2) {
    setError("bs_gemm_desc_t: enum value out of range",
             BS_ERROR_INVALID_ARGUMENT);
    return false;
  }
  d.form = GemmForm(in->form);
  d.m = in->m;
  d.n = in->n;
  d.k = in->k;
  d.a = Fp8Type(in->a_type);
  d.b = Fp8Type(in->b_type);
  d.out = DType(in->out_dtype);
  d.accumulate = in->accumulate != 0;
  d.mHint = in->m_hint > 0 ? in->m_hint : 4096;
  d.forceTile = in->force_tile ? in->force_tile : "";
  d.numSMs = in->num_sms;
  if (in->debug_hang)
    o.compile.extra.push_back("-DBS_DEBUG_HANG");
  return true;
}

bs_status_t bs_gemm_kernel_create(const bs_gemm_desc_t *desc,
                                  bs_gemm_kernel_t *out) {
  if (!out)
    return setError("bs_gemm_kernel_create: out is NULL",
                    BS_ERROR_INVALID_ARGUMENT);
  *out = nullptr;
  GemmDesc d;
  JitOptions o;
  if (!toDesc(desc, d, o))
    return BS_ERROR_INVALID_ARGUMENT;
  auto k = getGemmKernel(d, o);
  if (!k)
    return setError(k.takeError());
  *out = new bs_gemm_kernel_s{*k};
  return BS_SUCCESS;
}

void bs_gemm_kernel_destroy(bs_gemm_kernel_t k) { delete k; }

bs_status_t bs_gemm_launch(bs_gemm_kernel_t k, const bs_gemm_args_t *a,
                           void *stream) {
  if (!k || !a || a->struct_size != sizeof(bs_gemm_args_t))
    return setError("bs_gemm_launch: bad kernel or args (struct_size)",
                    BS_ERROR_INVALID_ARGUMENT);
  GemmArgs g;
  g.a = a->a;
  g.sa = static_cast<const float *>(a->a_scale);
  g.b = a->b;
  g.sb = static_cast<const float *>(a->b_scale);
  g.c = a->c;
  g.m = a->m;
  g.lda = a->lda;
  g.ldb = a->ldb;
  g.ldc = a->ldc;
  g.ldsa = a->ldsa;
  g.ldsb = a->ldsb;
  g.sbStrideK = a->sb_stride_k;
  g.sbStrideN = a->sb_stride_n;
  g.workspace = a->workspace;
  g.workspaceBytes = a->workspace_bytes;
  if (llvm::Error e = (*k->kernel)(g, static_cast<CUstream>(stream)))
    return setError(std::move(e));
  return BS_SUCCESS;
}

size_t bs_gemm_workspace_size(bs_gemm_kernel_t k, int64_t m) {
  return k ? k->kernel->workspaceBytes(m >= 0 ? m : k->kernel->desc.m) : 0;
}

static bs_status_t copyOut(const std::string &s, char *buf, size_t len) {
  if (!buf || len == 0)
    return setError("buffer is NULL or empty", BS_ERROR_INVALID_ARGUMENT);
  size_t n = std::min(len - 1, s.size());
  std::memcpy(buf, s.data(), n);
  buf[n] = '\0';
  return BS_SUCCESS;
}

bs_status_t bs_gemm_kernel_info(bs_gemm_kernel_t k, char *buf, size_t len) {
  if (!k)
    return setError("bs_gemm_kernel_info: NULL kernel",
                    BS_ERROR_INVALID_ARGUMENT);
  const CompiledKernel &c = *k->kernel->compiled;
  std::string s = llvm::formatv(
      "{0} splits={1} raster={2} cache_key={3} compile_s={4:f3} "
      "registers={5} spill_bytes={6} from_disk_cache={7} source={8}",
      c.spec.serialize(), k->kernel->launch.splits, k->kernel->launch.raster,
      c.cacheKey, c.compileSeconds, c.registers, c.spillBytes,
      c.fromDiskCache ? 1 : 0, c.sourcePath.empty() ? "-" : c.sourcePath);
  return copyOut(s, buf, len);
}

void bs_quant_desc_init(bs_quant_desc_t *d) {
  std::memset(d, 0, sizeof(*d));
  d->struct_size = sizeof(*d);
  d->in_dtype = BS_DTYPE_BF16;
  d->block_rows = 1;
  d->block_cols = 128;
  d->rows = -1;
}

void bs_quant_args_init(bs_quant_args_t *a) {
  std::memset(a, 0, sizeof(*a));
  a->struct_size = sizeof(*a);
  a->rows = -1;
}

static bool toQuant(const bs_quant_desc_t *in, QuantDesc &q) {
  if (!in || in->struct_size != sizeof(bs_quant_desc_t)) {
    setError("bs_quant_desc_t: struct_size mismatch (call "
             "bs_quant_desc_init)",
             BS_ERROR_INVALID_ARGUMENT);
    return false;
  }
  if (in->in_dtype < 0 || in->in_dtype > 2 || in->out_type < 0 ||
      in->out_type > 1) {
    setError("bs_quant_desc_t: enum value out of range",
             BS_ERROR_INVALID_ARGUMENT);
    return false;
  }
  q.in = DType(in->in_dtype);
  q.out = Fp8Type(in->out_type);
  q.blockRows = in->block_rows;
  q.blockCols = in->block_cols;
  q.transpose = in->transpose != 0;
  q.colMajor = in->col_major != 0;
  q.rows = in->rows;
  q.cols = in->cols;
  return true;
}

bs_status_t bs_quant_kernel_create(const bs_quant_desc_t *desc,
                                   bs_quant_kernel_t *out) {
  if (!out)
    return setError("bs_quant_kernel_create: out is NULL",
                    BS_ERROR_INVALID_ARGUMENT);
  *out = nullptr;
  QuantDesc q;
  if (!toQuant(desc, q))
    return BS_ERROR_INVALID_ARGUMENT;
  auto k = getQuantKernel(q);
  if (!k)
    return setError(k.takeError());
  *out = new bs_quant_kernel_s{*k};
  return BS_SUCCESS;
}

void bs_quant_kernel_destroy(bs_quant_kernel_t k) { delete k; }

bs_status_t bs_quant_launch(bs_quant_kernel_t k, const bs_quant_args_t *a,
                            void *stream) {
  if (!k || !a || a->struct_size != sizeof(bs_quant_args_t))
    return setError("bs_quant_launch: bad kernel or args (struct_size)",
                    BS_ERROR_INVALID_ARGUMENT);
  QuantArgs q;
  q.x = a->x;
  q.q = a->q;
  q.s = a->scale;
  q.rows = a->rows;
  q.ldx = a->ldx;
  q.ldq = a->ldq;
  q.ldScale = a->ld_scale;
  if (llvm::Error e = (*k->kernel)(q, static_cast<CUstream>(stream)))
    return setError(std::move(e));
  return BS_SUCCESS;
}

bs_status_t bs_quant_scale_geometry(const bs_quant_desc_t *desc, int64_t rows,
                                    int64_t ldScale, int64_t out[5]) {
  QuantDesc q;
  if (!toQuant(desc, q))
    return BS_ERROR_INVALID_ARGUMENT;
  if (llvm::Error e = q.validate())
    return setError(std::move(e));
  if (rows < 0)
    rows = q.rows;
  if (rows < 0)
    return setError("bs_quant_scale_geometry: rows unknown",
                    BS_ERROR_INVALID_ARGUMENT);
  ScaleGeometry g = quantScaleGeometry(q, rows, ldScale);
  out[0] = g.rows;
  out[1] = g.cols;
  out[2] = g.strideRow;
  out[3] = g.strideCol;
  out[4] = g.allocElements;
  return BS_SUCCESS;
}

bs_status_t bs_gemm_source(const bs_gemm_desc_t *desc, char *buf, size_t len,
                           size_t *needed) {
  GemmDesc d;
  JitOptions o;
  if (!toDesc(desc, d, o))
    return BS_ERROR_INVALID_ARGUMENT;
  auto plan = planGemm(d);
  if (!plan)
    return setError(plan.takeError());
  if (needed)
    *needed = plan->source.size() + 1;
  if (!buf)
    return BS_SUCCESS;
  return copyOut(plan->source, buf, len);
}

void bs_cache_stats(int64_t out[4]) {
  RegistryStats &s = KernelRegistry::global().stats();
  out[0] = s.memoryHits;
  out[1] = s.diskHits;
  out[2] = s.compiles;
  out[3] = s.corruptEntries;
}

void bs_clear_memory_cache(void) { clearJitMemoryCache(); }

void bs_set_programmatic_launch(int on) { setProgrammaticLaunch(on != 0); }

int bs_programmatic_launch(void) { return programmaticLaunch() ? 1 : 0; }

} // extern "C"
