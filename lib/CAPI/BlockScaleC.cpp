//===- BlockScaleC.cpp - C API of the blockscale JIT ------------*- C++ -*-===//
//
// Part of blockscale, under the Apache License v2.0 with LLVM Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "blockscale-c/blockscale.h"
#include "blockscale/JIT/Jit.h"
#include "blockscale/VersionPrinter.h"

#include "llvm/Support/FormatVariadic.h"

#include <cstddef>
#include <cstring>
#include <string>

using namespace blockscale;

struct bs_gemm_kernel_s {
  std::shared_ptr<const GemmKernel> kernel;
};
struct bs_quant_kernel_s {
  std::shared_ptr<const QuantKernel> kernel;
};
struct bs_grouped_gemm_kernel_s {
  std::shared_ptr<const GroupedGemmKernel> kernel;
};
struct bs_grouped_quant_kernel_s {
  std::shared_ptr<const GroupedQuantKernel> kernel;
};

static thread_local std::string lastError;

static_assert(int(ErrorCode::InvalidArgument) == BS_ERROR_INVALID_ARGUMENT &&
                  int(ErrorCode::Compile) == BS_ERROR_COMPILE &&
                  int(ErrorCode::NoDevice) == BS_ERROR_NO_DEVICE &&
                  int(ErrorCode::Cuda) == BS_ERROR_CUDA &&
                  int(ErrorCode::Internal) == BS_ERROR_INTERNAL,
              "the C status codes are the runtime's error categories");
static_assert(int(DebugHang) == BS_DEBUG_HANG &&
                  int(DebugTimeline) == BS_DEBUG_TIMELINE,
              "the C debug flags are the runtime's");

static bs_status_t fail(llvm::Error e) {
  return bs_status_t(takeErrorCode(std::move(e), &lastError));
}

static bs_status_t fail(const llvm::Twine &msg) {
  lastError = msg.str();
  return BS_ERROR_INVALID_ARGUMENT;
}

//===----------------------------------------------------------------------===//
// Per family: C structs <-> descriptions and arguments
//===----------------------------------------------------------------------===//

/// The bits of a C enum field as the host wrote them: reading an enum
/// object that holds a value outside its enumerators is undefined behaviour,
/// so they are copied out as an int first.
template <class E> static int32_t rawEnum(const E &field) {
  static_assert(sizeof(E) == sizeof(int32_t), "C enums are ints here");
  int32_t v;
  std::memcpy(&v, &field, sizeof(v));
  return v;
}

namespace {
template <class Family> struct CFamily;

template <> struct CFamily<GemmFamily> {
  using CDesc = bs_gemm_desc_t;
  using CArgs = bs_gemm_args_t;
  using Handle = bs_gemm_kernel_t;
  static constexpr const char *name = "bs_gemm";
  static constexpr size_t kOldDescSizes[] = {0}, kOldArgsSizes[] = {0};

  static llvm::Error toDesc(const CDesc &in, GemmDesc &d) {
    const int32_t form = rawEnum(in.form), at = rawEnum(in.a_type),
                  bt = rawEnum(in.b_type), out = rawEnum(in.out_dtype);
    if (form < 0 || form > 2 || at < 0 || at > 1 || bt < 0 || bt > 1 ||
        out < 0 || out > 2)
      return invalidArgument(llvm::formatv(
          "bs_gemm_desc_t: expected form 0-2, a_type and b_type 0-1, "
          "out_dtype 0-2 but got {0}, {1}, {2}, {3}",
          form, at, bt, out));
    d.form = GemmForm(form);
    d.m = in.m;
    d.n = in.n;
    d.k = in.k;
    d.a = Fp8Type(at);
    d.b = Fp8Type(bt);
    d.out = DType(out);
    d.accumulate = in.accumulate != 0;
    d.mHint = in.m_hint;
    d.forceTile = in.force_tile ? in.force_tile : "";
    d.numSMs = in.num_sms;
    d.debug = unsigned(in.debug);
    return d.validate();
  }

  static GemmArgs toArgs(const CArgs &a) {
    GemmArgs g;
    g.a = a.a;
    g.sa = static_cast<const float *>(a.a_scale);
    g.b = a.b;
    g.sb = static_cast<const float *>(a.b_scale);
    g.c = a.c;
    g.m = a.m;
    g.lda = a.lda;
    g.ldb = a.ldb;
    g.ldc = a.ldc;
    g.ldsa = a.ldsa;
    g.ldsb = a.ldsb;
    g.sbStrideK = a.sb_stride_k;
    g.sbStrideN = a.sb_stride_n;
    g.workspace = a.workspace;
    g.workspaceBytes = a.workspace_bytes;
    return g;
  }
};

template <> struct CFamily<QuantFamily> {
  using CDesc = bs_quant_desc_t;
  using CArgs = bs_quant_args_t;
  using Handle = bs_quant_kernel_t;
  static constexpr const char *name = "bs_quant";
  // The dual-layout cast's `dual` took the description's tail padding (its
  // size was unchanged); the arguments of hosts built before it end before
  // q_t, and those built before the batched cast before `groups`: still
  // accepted, the newer fields left 0.
  static constexpr size_t kOldDescSizes[] = {offsetof(bs_quant_desc_t, groups)};
  static constexpr size_t kOldArgsSizes[] = {offsetof(bs_quant_args_t, q_t),
                                             offsetof(bs_quant_args_t, groups)};
  static_assert(sizeof(void *) != 8 ||
                    (kOldDescSizes[0] == 56 && kOldArgsSizes[0] == 64 &&
                     kOldArgsSizes[1] == 96),
                "the sizes of the cast structs before the dual and the "
                "batched cast (LP64)");

  static llvm::Error toDesc(const CDesc &in, QuantDesc &q) {
    const int32_t dt = rawEnum(in.in_dtype), ot = rawEnum(in.out_type);
    if (dt < 0 || dt > 2 || ot < 0 || ot > 1)
      return invalidArgument(llvm::formatv(
          "bs_quant_desc_t: expected in_dtype 0-2 and out_type 0-1 but got "
          "{0}, {1}",
          dt, ot));
    q.in = DType(dt);
    q.out = Fp8Type(ot);
    q.blockRows = in.block_rows;
    q.blockCols = in.block_cols;
    q.transpose = in.transpose != 0;
    q.colMajor = in.col_major != 0;
    q.rows = in.rows;
    q.cols = in.cols;
    q.debug = unsigned(in.debug);
    q.dual = in.dual != 0;
    q.groups = in.groups;
    return q.validate();
  }

  static QuantArgs toArgs(const CArgs &a) {
    QuantArgs q;
    q.x = a.x;
    q.q = a.q;
    q.s = a.scale;
    q.rows = a.rows;
    q.ldx = a.ldx;
    q.ldq = a.ldq;
    q.ldScale = a.ld_scale;
    q.qT = a.q_t;
    q.sT = a.scale_t;
    q.ldqT = a.ldq_t;
    q.ldScaleT = a.ld_scale_t;
    q.groups = a.groups;
    q.groupStrideX = a.group_stride_x;
    q.groupStrideQ = a.group_stride_q;
    q.groupStrideScale = a.group_stride_scale;
    q.groupStrideQT = a.group_stride_q_t;
    q.groupStrideScaleT = a.group_stride_scale_t;
    return q;
  }
};

template <> struct CFamily<GroupedGemmFamily> {
  using CDesc = bs_grouped_gemm_desc_t;
  using CArgs = bs_grouped_gemm_args_t;
  using Handle = bs_grouped_gemm_kernel_t;
  static constexpr const char *name = "bs_grouped_gemm";
  // The structs of hosts built before the k-grouped GEMMs end before m
  // and capacity: still accepted, the newer fields left 0.
  static constexpr size_t kOldDescSizes[] = {
      offsetof(bs_grouped_gemm_desc_t, m)};
  static constexpr size_t kOldArgsSizes[] = {
      offsetof(bs_grouped_gemm_args_t, capacity)};
  static_assert(sizeof(void *) != 8 ||
                    (kOldDescSizes[0] == 80 && kOldArgsSizes[0] == 96),
                "the sizes of the structs before the k-grouped fields (LP64)");

  static llvm::Error toDesc(const CDesc &in, GroupedGemmDesc &d) {
    const int32_t gr = rawEnum(in.grouping), at = rawEnum(in.a_type),
                  bt = rawEnum(in.b_type), out = rawEnum(in.out_dtype);
    if (gr < 0 || gr > 2 || at < 0 || at > 1 || bt < 0 || bt > 1 || out < 0 ||
        out > 2)
      return invalidArgument(llvm::formatv(
          "bs_grouped_gemm_desc_t: expected grouping 0-2, a_type and b_type "
          "0-1, out_dtype 0-2 but got {0}, {1}, {2}, {3}",
          gr, at, bt, out));
    d.grouping = Grouping(gr);
    d.groups = in.groups;
    d.n = in.n;
    d.k = in.k;
    d.mMax = in.m_max;
    d.a = Fp8Type(at);
    d.b = Fp8Type(bt);
    d.out = DType(out);
    d.mPerGroupHint = in.m_per_group_hint;
    d.forceTile = in.force_tile ? in.force_tile : "";
    d.numSMs = in.num_sms;
    d.debug = unsigned(in.debug);
    d.m = in.m;
    d.accumulate = in.accumulate != 0;
    return d.validate();
  }

  static GroupedGemmArgs toArgs(const CArgs &a) {
    GroupedGemmArgs g;
    g.a = a.a;
    g.sa = static_cast<const float *>(a.a_scale);
    g.b = a.b;
    g.sb = static_cast<const float *>(a.b_scale);
    g.groups = a.groups;
    g.c = a.c;
    g.m = a.m;
    g.ldsa = a.ldsa;
    g.sbStrideG = a.sb_stride_g;
    g.sbStrideN = a.sb_stride_n;
    g.sbStrideK = a.sb_stride_k;
    g.capacity = a.capacity;
    g.ldsb = a.ldsb;
    return g;
  }
};

template <> struct CFamily<GroupedQuantFamily> {
  using CDesc = bs_grouped_quant_desc_t;
  using CArgs = bs_grouped_quant_args_t;
  using Handle = bs_grouped_quant_kernel_t;
  static constexpr const char *name = "bs_grouped_quant";
  static constexpr size_t kOldDescSizes[] = {0}, kOldArgsSizes[] = {0};

  static llvm::Error toDesc(const CDesc &in, GroupedQuantDesc &q) {
    const int32_t dt = rawEnum(in.in_dtype), ot = rawEnum(in.out_type);
    if (dt < 0 || dt > 2 || ot < 0 || ot > 1)
      return invalidArgument(llvm::formatv(
          "bs_grouped_quant_desc_t: expected in_dtype 0-2 and out_type 0-1 "
          "but got {0}, {1}",
          dt, ot));
    q.in = DType(dt);
    q.out = Fp8Type(ot);
    q.cols = in.cols;
    q.groups = in.groups;
    q.debug = unsigned(in.debug);
    return q.validate();
  }

  static GroupedQuantArgs toArgs(const CArgs &a) {
    GroupedQuantArgs q;
    q.x = a.x;
    q.q = a.q;
    q.s = a.scale;
    q.offs = a.offs;
    q.tokens = a.tokens;
    q.capacity = a.capacity;
    q.ldx = a.ldx;
    q.ldScale = a.ld_scale;
    return q;
  }
};

/// A C struct of this or an older size (kOld*Sizes, fields added at the end
/// since; 0: none) as the current struct, the newer fields 0; nullptr when
/// its struct_size is none of them.
template <class CStruct, size_t N>
const CStruct *currentStruct(const CStruct *in, const size_t (&oldSizes)[N],
                             CStruct &scratch) {
  if (in->struct_size == int32_t(sizeof(CStruct)))
    return in;
  size_t oldSize = 0;
  for (size_t s : oldSizes)
    if (s != 0 && in->struct_size == int32_t(s))
      oldSize = s;
  if (oldSize == 0)
    return nullptr;
  std::memset(&scratch, 0, sizeof(scratch));
  std::memcpy(&scratch, in, oldSize);
  scratch.struct_size = int32_t(sizeof(CStruct));
  return &scratch;
}

/// The description of a C struct whose struct_size says it is one.
template <class Family>
llvm::Expected<typename Family::Desc>
readDesc(const typename CFamily<Family>::CDesc *in, const char *fn) {
  if (!in)
    return invalidArgument(llvm::Twine(fn) + ": the description is NULL");
  typename CFamily<Family>::CDesc scratch;
  const auto *cur = currentStruct(in, CFamily<Family>::kOldDescSizes, scratch);
  if (!cur)
    return invalidArgument(llvm::formatv(
        "{0}: expected struct_size {1} but got {2} (call {3}_desc_init)", fn,
        sizeof(*in), in->struct_size, CFamily<Family>::name));
  typename Family::Desc d;
  if (llvm::Error e = CFamily<Family>::toDesc(*cur, d))
    return std::move(e);
  return d;
}

template <class Family> llvm::Expected<std::shared_ptr<const JitKernel<Family>>>
jitKernel(const typename Family::Desc &d);
template <>
llvm::Expected<std::shared_ptr<const GemmKernel>>
jitKernel<GemmFamily>(const GemmDesc &d) {
  return getGemmKernel(d);
}
template <>
llvm::Expected<std::shared_ptr<const QuantKernel>>
jitKernel<QuantFamily>(const QuantDesc &d) {
  return getQuantKernel(d);
}
template <>
llvm::Expected<std::shared_ptr<const GroupedGemmKernel>>
jitKernel<GroupedGemmFamily>(const GroupedGemmDesc &d) {
  return getGroupedGemmKernel(d);
}
template <>
llvm::Expected<std::shared_ptr<const GroupedQuantKernel>>
jitKernel<GroupedQuantFamily>(const GroupedQuantDesc &d) {
  return getGroupedQuantKernel(d);
}

template <class Family>
bs_status_t createKernel(const typename CFamily<Family>::CDesc *desc,
                         typename CFamily<Family>::Handle *out,
                         const char *fn) {
  if (!out)
    return fail(llvm::Twine(fn) + ": out is NULL");
  *out = nullptr;
  auto d = readDesc<Family>(desc, fn);
  if (!d)
    return fail(d.takeError());
  auto k = jitKernel<Family>(*d);
  if (!k)
    return fail(k.takeError());
  *out = new std::remove_pointer_t<typename CFamily<Family>::Handle>{*k};
  return BS_SUCCESS;
}

template <class Family>
bs_status_t launchKernel(typename CFamily<Family>::Handle k,
                         const typename CFamily<Family>::CArgs *a,
                         void *stream, const char *fn) {
  if (!k)
    return fail(llvm::Twine(fn) + ": the kernel is NULL");
  if (!a)
    return fail(llvm::Twine(fn) + ": the arguments are NULL");
  typename CFamily<Family>::CArgs scratch;
  const auto *cur = currentStruct(a, CFamily<Family>::kOldArgsSizes, scratch);
  if (!cur)
    return fail(llvm::formatv(
        "{0}: expected struct_size {1} but got {2} (call {3}_args_init)", fn,
        sizeof(*a), a->struct_size, CFamily<Family>::name));
  if (llvm::Error e = (*k->kernel)(CFamily<Family>::toArgs(*cur),
                                   static_cast<CUstream>(stream)))
    return fail(std::move(e));
  return BS_SUCCESS;
}

template <class Family>
bs_status_t kernelSource(const typename CFamily<Family>::CDesc *desc,
                         char *buf, size_t len, size_t *needed,
                         const char *fn);
} // namespace

static bs_status_t copyOut(const std::string &s, char *buf, size_t len,
                           size_t *needed, const char *fn) {
  if (needed)
    *needed = s.size() + 1;
  if (!buf) {
    if (needed)
      return BS_SUCCESS; // a size query
    return fail(llvm::Twine(fn) + ": the buffer is NULL");
  }
  if (len == 0)
    return fail(llvm::Twine(fn) + ": the buffer is empty");
  size_t n = std::min(len - 1, s.size());
  std::memcpy(buf, s.data(), n);
  buf[n] = '\0';
  return BS_SUCCESS;
}

namespace {
template <class Family>
bs_status_t kernelSource(const typename CFamily<Family>::CDesc *desc,
                         char *buf, size_t len, size_t *needed,
                         const char *fn) {
  auto d = readDesc<Family>(desc, fn);
  if (!d)
    return fail(d.takeError());
  llvm::Expected<KernelPlan<Family>> plan = [&] {
    if constexpr (std::is_same_v<Family, GemmFamily>)
      return planGemm(*d);
    else if constexpr (std::is_same_v<Family, GroupedGemmFamily>)
      return planGroupedGemm(*d);
    else if constexpr (std::is_same_v<Family, GroupedQuantFamily>)
      return planGroupedQuantize(*d);
    else
      return planQuantize(*d);
  }();
  if (!plan)
    return fail(plan.takeError());
  return copyOut(plan->source, buf, len, needed, fn);
}
} // namespace

static std::string kernelInfo(const CompiledKernel &c,
                              const std::string &launch) {
  return llvm::formatv("{0}{1} cache_key={2} compile_s={3:f3} registers={4} "
                       "spill_bytes={5} from_disk_cache={6} source={7}",
                       c.spec.serialize(), launch, c.cacheKey,
                       c.compileSeconds, c.registers, c.spillBytes,
                       c.fromDiskCache ? 1 : 0,
                       c.sourcePath.empty() ? "-" : c.sourcePath)
      .str();
}

extern "C" {

const char *bs_version(void) { return blockscale::versionString(); }
const char *bs_last_error(void) { return lastError.c_str(); }

void bs_gemm_desc_init(bs_gemm_desc_t *d) {
  if (!d)
    return;
  std::memset(d, 0, sizeof(*d));
  d->struct_size = sizeof(*d);
  d->form = BS_FORM_FWD;
  d->m = -1;
  d->m_hint = 4096;
  d->out_dtype = BS_DTYPE_BF16;
}

void bs_gemm_args_init(bs_gemm_args_t *a) {
  if (!a)
    return;
  std::memset(a, 0, sizeof(*a));
  a->struct_size = sizeof(*a);
  a->m = -1;
}

void bs_quant_desc_init(bs_quant_desc_t *d) {
  if (!d)
    return;
  std::memset(d, 0, sizeof(*d));
  d->struct_size = sizeof(*d);
  d->in_dtype = BS_DTYPE_BF16;
  d->block_rows = 1;
  d->block_cols = 128;
  d->rows = -1;
}

void bs_quant_args_init(bs_quant_args_t *a) {
  if (!a)
    return;
  std::memset(a, 0, sizeof(*a));
  a->struct_size = sizeof(*a);
  a->rows = -1;
}

bs_status_t bs_gemm_kernel_create(const bs_gemm_desc_t *desc,
                                  bs_gemm_kernel_t *out) {
  return createKernel<GemmFamily>(desc, out, "bs_gemm_kernel_create");
}

bs_status_t bs_quant_kernel_create(const bs_quant_desc_t *desc,
                                   bs_quant_kernel_t *out) {
  return createKernel<QuantFamily>(desc, out, "bs_quant_kernel_create");
}

void bs_gemm_kernel_destroy(bs_gemm_kernel_t k) { delete k; }
void bs_quant_kernel_destroy(bs_quant_kernel_t k) { delete k; }

bs_status_t bs_gemm_launch(bs_gemm_kernel_t k, const bs_gemm_args_t *a,
                           void *stream) {
  return launchKernel<GemmFamily>(k, a, stream, "bs_gemm_launch");
}

bs_status_t bs_quant_launch(bs_quant_kernel_t k, const bs_quant_args_t *a,
                            void *stream) {
  return launchKernel<QuantFamily>(k, a, stream, "bs_quant_launch");
}

bs_status_t bs_gemm_workspace_size(bs_gemm_kernel_t k, int64_t m,
                                   size_t *bytes) {
  if (!k || !bytes)
    return fail("bs_gemm_workspace_size: the kernel or bytes is NULL");
  auto n = workspaceBytes(*k->kernel, m);
  if (!n)
    return fail(n.takeError());
  *bytes = *n;
  return BS_SUCCESS;
}

bs_status_t bs_gemm_kernel_info(bs_gemm_kernel_t k, char *buf, size_t len) {
  if (!k)
    return fail("bs_gemm_kernel_info: the kernel is NULL");
  std::string launch = llvm::formatv(" splits={0} raster={1}",
                                     k->kernel->launch.splits,
                                     k->kernel->launch.raster);
  return copyOut(kernelInfo(*k->kernel->compiled, launch), buf, len, nullptr,
                 "bs_gemm_kernel_info");
}

bs_status_t bs_quant_kernel_info(bs_quant_kernel_t k, char *buf, size_t len) {
  if (!k)
    return fail("bs_quant_kernel_info: the kernel is NULL");
  return copyOut(kernelInfo(*k->kernel->compiled, ""), buf, len, nullptr,
                 "bs_quant_kernel_info");
}

static bs_status_t geometryOut(llvm::Expected<ScaleGeometry> g,
                               int64_t out[5], const char *fn) {
  if (!out)
    return fail(llvm::Twine(fn) + ": out is NULL");
  if (!g)
    return fail(withContext(g.takeError(), llvm::Twine(fn) + ": "));
  out[0] = g->rows;
  out[1] = g->cols;
  out[2] = g->strideRow;
  out[3] = g->strideCol;
  out[4] = g->allocElements;
  return BS_SUCCESS;
}

bs_status_t bs_scale_geometry(int32_t block_rows, int32_t block_cols,
                              int64_t rows, int64_t cols, int64_t ld,
                              int64_t out[5]) {
  return geometryOut(scaleGeometry(block_rows, block_cols, rows, cols, ld),
                     out, "bs_scale_geometry");
}

bs_status_t bs_quant_scale_geometry(const bs_quant_desc_t *desc, int64_t rows,
                                    int64_t ldScale, int64_t out[5]) {
  auto d = readDesc<QuantFamily>(desc, "bs_quant_scale_geometry");
  if (!d)
    return fail(d.takeError());
  return geometryOut(quantScaleGeometry(*d, rows, ldScale), out,
                     "bs_quant_scale_geometry");
}

bs_status_t bs_gemm_source(const bs_gemm_desc_t *desc, char *buf, size_t len,
                           size_t *needed) {
  return kernelSource<GemmFamily>(desc, buf, len, needed, "bs_gemm_source");
}

bs_status_t bs_quant_source(const bs_quant_desc_t *desc, char *buf,
                            size_t len, size_t *needed) {
  return kernelSource<QuantFamily>(desc, buf, len, needed, "bs_quant_source");
}

void bs_grouped_gemm_desc_init(bs_grouped_gemm_desc_t *d) {
  if (!d)
    return;
  std::memset(d, 0, sizeof(*d));
  d->struct_size = sizeof(*d);
  d->grouping = BS_GROUPING_CONTIGUOUS;
  d->out_dtype = BS_DTYPE_BF16;
}

void bs_grouped_gemm_args_init(bs_grouped_gemm_args_t *a) {
  if (!a)
    return;
  std::memset(a, 0, sizeof(*a));
  a->struct_size = sizeof(*a);
  a->m = -1;
}

bs_status_t bs_grouped_gemm_kernel_create(const bs_grouped_gemm_desc_t *desc,
                                          bs_grouped_gemm_kernel_t *out) {
  return createKernel<GroupedGemmFamily>(desc, out,
                                         "bs_grouped_gemm_kernel_create");
}

void bs_grouped_gemm_kernel_destroy(bs_grouped_gemm_kernel_t k) { delete k; }

bs_status_t bs_grouped_gemm_launch(bs_grouped_gemm_kernel_t k,
                                   const bs_grouped_gemm_args_t *a,
                                   void *stream) {
  return launchKernel<GroupedGemmFamily>(k, a, stream,
                                         "bs_grouped_gemm_launch");
}

bs_status_t bs_grouped_gemm_kernel_info(bs_grouped_gemm_kernel_t k, char *buf,
                                        size_t len) {
  if (!k)
    return fail("bs_grouped_gemm_kernel_info: the kernel is NULL");
  std::string launch =
      llvm::formatv(" raster={0}", k->kernel->launch.raster).str();
  return copyOut(kernelInfo(*k->kernel->compiled, launch), buf, len, nullptr,
                 "bs_grouped_gemm_kernel_info");
}

bs_status_t bs_grouped_gemm_source(const bs_grouped_gemm_desc_t *desc,
                                   char *buf, size_t len, size_t *needed) {
  return kernelSource<GroupedGemmFamily>(desc, buf, len, needed,
                                         "bs_grouped_gemm_source");
}

void bs_grouped_quant_desc_init(bs_grouped_quant_desc_t *d) {
  if (!d)
    return;
  std::memset(d, 0, sizeof(*d));
  d->struct_size = sizeof(*d);
  d->in_dtype = BS_DTYPE_BF16;
}

void bs_grouped_quant_args_init(bs_grouped_quant_args_t *a) {
  if (!a)
    return;
  std::memset(a, 0, sizeof(*a));
  a->struct_size = sizeof(*a);
  a->tokens = -1;
}

bs_status_t bs_grouped_quant_kernel_create(const bs_grouped_quant_desc_t *desc,
                                           bs_grouped_quant_kernel_t *out) {
  return createKernel<GroupedQuantFamily>(desc, out,
                                          "bs_grouped_quant_kernel_create");
}

void bs_grouped_quant_kernel_destroy(bs_grouped_quant_kernel_t k) { delete k; }

bs_status_t bs_grouped_quant_launch(bs_grouped_quant_kernel_t k,
                                    const bs_grouped_quant_args_t *a,
                                    void *stream) {
  return launchKernel<GroupedQuantFamily>(k, a, stream,
                                          "bs_grouped_quant_launch");
}

bs_status_t bs_grouped_quant_kernel_info(bs_grouped_quant_kernel_t k, char *buf,
                                         size_t len) {
  if (!k)
    return fail("bs_grouped_quant_kernel_info: the kernel is NULL");
  return copyOut(kernelInfo(*k->kernel->compiled, ""), buf, len, nullptr,
                 "bs_grouped_quant_kernel_info");
}

bs_status_t bs_grouped_quant_source(const bs_grouped_quant_desc_t *desc,
                                    char *buf, size_t len, size_t *needed) {
  return kernelSource<GroupedQuantFamily>(desc, buf, len, needed,
                                          "bs_grouped_quant_source");
}

int64_t bs_grouped_token_capacity(int64_t tokens, int64_t groups) {
  // (Sizes no launch accepts would overflow the arithmetic.)
  if (tokens < 0 || groups < 0 || tokens > (int64_t(1) << 40) ||
      groups > (int64_t(1) << 20))
    return -1;
  return groupedTokenCapacity(tokens, groups);
}

bs_status_t bs_cache_stats(int64_t out[4]) {
  if (!out)
    return fail("bs_cache_stats: out is NULL");
  RegistryStats &s = KernelRegistry::global().stats();
  out[0] = s.memoryHits;
  out[1] = s.diskHits;
  out[2] = s.compiles;
  out[3] = s.corruptEntries;
  return BS_SUCCESS;
}

void bs_clear_memory_cache(void) { clearJitMemoryCache(); }

void bs_set_programmatic_launch(int on) { setProgrammaticLaunch(on != 0); }

int bs_programmatic_launch(void) { return programmaticLaunch() ? 1 : 0; }

} // extern "C"
