/*===- blockscale.h - C API of the blockscale JIT ------------------*- C -*-===*\
 *
 * Part of blockscale, under the Apache License v2.0 with LLVM Exceptions.
 * See LICENSE for license information.
 * SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
 *
 * Opaque handles and status codes for hosts that cannot use the C++ API
 * (the Python package loads this through ctypes). Every call that can fail
 * returns a bs_status_t; bs_last_error() then gives the message (thread
 * local, valid until the next failing call on the thread): what was expected,
 * what was found, and the fix.
 *
 * Layouts (logical shapes, as in docs/Runtime.md):
 *   A (M, K) FP8 row-major, row stride lda (multiple of 16)
 *   A scales (M, ceil(K/128)) f32, M-contiguous, K-block stride ldsa (%4)
 *   B given as (N, K) FP8 row-major (the (K, N) operand column-major)
 *   B scales fwd/dgrad (ceil(K/128), ceil(N/128)) any strides (K, N);
 *            wgrad     (ceil(K/128), N) N-contiguous, stride ldsb (%4)
 *   C (M, N) row-major, row stride ldc (16-byte multiple)
 *
\*===----------------------------------------------------------------------===*/
#ifndef BLOCKSCALE_C_BLOCKSCALE_H
#define BLOCKSCALE_C_BLOCKSCALE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define BS_API __attribute__((visibility("default")))

typedef enum {
  BS_SUCCESS = 0,
  BS_ERROR_INVALID_ARGUMENT = 1, /* bad description (one the planning pipeline
                                    refuses too), shape, stride, pointer */
  BS_ERROR_COMPILE = 2,          /* emitting CUDA or NVRTC failed */
  BS_ERROR_NO_DEVICE = 3,        /* no libcuda, no GPU, or not a Hopper GPU */
  BS_ERROR_CUDA = 4,             /* a CUDA driver call failed */
  BS_ERROR_INTERNAL = 5
} bs_status_t;

/* Debug options compiled into a kernel (part of its cache key). */
enum {
  BS_DEBUG_HANG = 1,    /* mbarrier waits trap with a message, never hang */
  BS_DEBUG_TIMELINE = 2 /* GEMMs: per-CTA phase stamps (blockscale-gen) */
};

typedef enum { BS_FORM_FWD = 0, BS_FORM_DGRAD = 1, BS_FORM_WGRAD = 2 } bs_form_t;
typedef enum { BS_FP8_E4M3 = 0, BS_FP8_E5M2 = 1 } bs_fp8_t;
typedef enum { BS_DTYPE_BF16 = 0, BS_DTYPE_F16 = 1, BS_DTYPE_F32 = 2 } bs_dtype_t;

typedef struct bs_gemm_kernel_s *bs_gemm_kernel_t;
typedef struct bs_quant_kernel_s *bs_quant_kernel_t;
typedef struct bs_grouped_gemm_kernel_s *bs_grouped_gemm_kernel_t;

/* m-grouped GEMMs (mixture-of-experts forward / dgrad), C = A @ B[g]^T per
 * group g with A 1x128 and B[g] 128x128 scales:
 *   CONTIGUOUS: A (M, K), C (M, N); groups = G cumulative int32 end offsets
 *               of the groups' rows (torch._scaled_grouped_mm's offs);
 *               group g runs from where group g-1 ended to offs[g] clipped
 *               to [that, M]: decreasing offsets make groups empty, never
 *               two groups on one row;
 *   MASKED:     A (G, m_max, K), C (G, m_max, N); groups = G int32 valid
 *               row counts; rows past a group's count are not written.
 * A scales (rows, ceil(K/128)) rows-contiguous (rows = M or G * m_max);
 * B (G, N, K) K-contiguous; B scales (G, ceil(N/128), ceil(K/128)).
 * The group sizes stay on the device: launches never synchronize. */
/* K_CONTIGUOUS: the k-grouped GEMM of a mixture-of-experts weight
 * gradient, dW_g = dY_g^T X_g over the tokens of group g (groups = G
 * cumulative int32 end offsets of the tokens, as CONTIGUOUS's rows):
 * C[g] (m, n) = A[:, tokens of g] @ B[:, tokens of g]^T with A (m, capacity)
 * and B (n, capacity) FP8 row-major as the group-aware cast
 * (bs_grouped_quant_*) writes them -- group g from padded token block b_g =
 * sum_{i<g} ceil(size_i / 128), zero past its end -- A scales 1x128 and B
 * scales 128x1 along tokens, both (capacity / 128, m or n) with m (n)
 * contiguous and block stride ldsa (ldsb); C (G, m, n) row-major, bf16 or f32,
 * or f32 += (accumulate). The descriptor's k stays 0 (the capacity comes at
 * launch); a group without tokens stores zeros (or leaves C as it was with +=).
 * The offsets are clipped to capacity - 128 G, as the cast clips them. */
typedef enum {
  BS_GROUPING_CONTIGUOUS = 0,
  BS_GROUPING_MASKED = 1,
  BS_GROUPING_K_CONTIGUOUS = 2
} bs_grouping_t;

typedef struct {
  int32_t struct_size; /* sizeof(bs_gemm_desc_t), set by bs_gemm_desc_init */
  bs_form_t form;
  int64_t m; /* -1: dynamic, given at launch */
  int64_t n, k;
  bs_fp8_t a_type, b_type;
  bs_dtype_t out_dtype; /* BF16 or F32 */
  int32_t accumulate;   /* C += A @ B (F32 only) */
  int64_t m_hint;       /* M the tile selection plans for when m = -1 */
  const char *force_tile; /* NULL or e.g. "bm=128,bn=128,stages=4" */
  int32_t num_sms;        /* 0: the current GPU's (132 without one) */
  int32_t debug;          /* BS_DEBUG_* flags */
} bs_gemm_desc_t;

typedef struct {
  int32_t struct_size;
  const void *a, *a_scale, *b, *b_scale;
  void *c;
  int64_t m; /* -1 (bs_gemm_args_init): the kernel's M; required when its M
                is dynamic, else -1 or that M */
  int64_t lda, ldb, ldc, ldsa, ldsb; /* 0: dense / default */
  int64_t sb_stride_k, sb_stride_n;  /* fwd/dgrad B scales; 0,0: default */
  void *workspace;                   /* NULL: runtime-owned */
  size_t workspace_bytes;
} bs_gemm_args_t;

typedef struct {
  int32_t struct_size;
  bs_dtype_t in_dtype;
  bs_fp8_t out_type;
  int32_t block_rows, block_cols; /* recipe of the logical result */
  int32_t transpose;              /* logical result is input^T */
  int32_t col_major;              /* physical order of the result */
  int64_t rows, cols;             /* input; rows = -1: dynamic */
  int32_t debug;                  /* BS_DEBUG_HANG */
  /* Nonzero: a dual-layout cast that also writes, from the same read of the
     input, the result with transpose flipped (q_t, scale_t). The first
     result must be in input order (transpose == col_major) with 1x128 or
     128x128 blocks in the input's frame. */
  int32_t dual;
  /* Since the batched cast (a smaller struct_size leaves it 0): nonzero, a
     batched dual cast of a stack of matrices (G, rows, cols), e.g. expert
     weights (G, N, K), each cast on its own into (G, rows, cols) and (G,
     cols, rows) with 128x128 blocks and row-major scales per matrix, (G,
     ceil(rows/128), ceil(cols/128)) and (G, ceil(cols/128),
     ceil(rows/128)): needs dual, 128x128, transpose = col_major = 0. -1:
     G given at launch (bs_quant_args_t.groups); > 0: G. */
  int64_t groups;
} bs_quant_desc_t;

typedef struct {
  int32_t struct_size;
  const void *x;
  void *q;
  float *scale;
  int64_t rows; /* required when dynamic */
  int64_t ldx, ldq, ld_scale; /* 0: dense / default */
  void *q_t;                  /* dual casts: the second result */
  float *scale_t;             /* and its decode scales */
  int64_t ldq_t, ld_scale_t;  /* 0: dense / default */
  /* Since the batched cast (a smaller struct_size leaves them 0): G (0: the
     description's) and the element distances between consecutive matrices
     of x, q, scale, q_t and scale_t (0: packed). A batched cast's ld_scale
     and ld_scale_t default to ceil(cols/128) and ceil(rows/128). */
  int64_t groups;
  int64_t group_stride_x, group_stride_q, group_stride_scale;
  int64_t group_stride_q_t, group_stride_scale_t;
} bs_quant_args_t;

typedef struct {
  int32_t struct_size; /* set by bs_grouped_gemm_desc_init */
  bs_grouping_t grouping;
  int64_t groups;        /* G */
  int64_t n, k;          /* of one group */
  int64_t m_max;         /* MASKED: rows per group slot */
  bs_fp8_t a_type, b_type;
  bs_dtype_t out_dtype;  /* BF16 or F32 */
  int64_t m_per_group_hint; /* typical rows per group (0: none) */
  const char *force_tile;   /* NULL or e.g. "bm=128,bn=128,stages=5" */
  int32_t num_sms;
  int32_t debug;            /* BS_DEBUG_HANG */
  /* Since the k-grouped GEMMs (a smaller struct_size leaves them 0): */
  int64_t m;          /* K_CONTIGUOUS: rows of each group's C */
  int32_t accumulate; /* K_CONTIGUOUS: C += (F32 only) */
} bs_grouped_gemm_desc_t;

typedef struct {
  int32_t struct_size;
  const void *a, *a_scale, *b, *b_scale;
  const int32_t *groups; /* device pointer, G int32 */
  void *c;
  int64_t m;    /* CONTIGUOUS: rows of A and C (required); MASKED: -1 */
  int64_t ldsa; /* 0: round_up(rows, 4) */
  int64_t sb_stride_g, sb_stride_n, sb_stride_k; /* 0,0,0: contiguous */
  /* Since the k-grouped GEMMs (a smaller struct_size leaves them 0): */
  int64_t capacity; /* K_CONTIGUOUS: padded tokens of A and B (%128) */
  int64_t ldsb;     /* K_CONTIGUOUS: B scales' block stride (0: default) */
} bs_grouped_gemm_args_t;

/* The group-aware cast of the k-grouped GEMMs' operands: x (tokens, cols)
 * bf16/f16/f32 row-major, tokens sorted by group (offs: G cumulative int32
 * ends on the device), to q (cols, capacity) FP8 row-major, x^T with group
 * g's tokens from padded token block b_g (see BS_GROUPING_K_CONTIGUOUS), and
 * scale (capacity / 128, cols) f32, one decode scale per column per
 * 128-token block of a group (amax of the group's tokens in it), at
 * scale[block * ld_scale + col]. capacity: 0 for bs_grouped_token_capacity
 * (tokens, G); blocks past the last group's are not written. */
typedef struct bs_grouped_quant_kernel_s *bs_grouped_quant_kernel_t;

typedef struct {
  int32_t struct_size; /* set by bs_grouped_quant_desc_init */
  bs_dtype_t in_dtype;
  bs_fp8_t out_type;
  int64_t cols;
  int64_t groups; /* G */
  int32_t debug;  /* BS_DEBUG_HANG */
} bs_grouped_quant_desc_t;

typedef struct {
  int32_t struct_size;
  const void *x;
  void *q;
  float *scale;
  const int32_t *offs;
  int64_t tokens;        /* rows of x */
  int64_t capacity;      /* 0: bs_grouped_token_capacity(tokens, G) */
  int64_t ldx, ld_scale; /* 0: dense / round_up(cols, 4) */
} bs_grouped_quant_args_t;

BS_API const char *bs_version(void);
BS_API const char *bs_last_error(void);

BS_API void bs_gemm_desc_init(bs_gemm_desc_t *desc);
BS_API void bs_gemm_args_init(bs_gemm_args_t *args);
/* Runs the pipeline, the emitter and NVRTC (or a cache) once per desc. */
BS_API bs_status_t bs_gemm_kernel_create(const bs_gemm_desc_t *desc,
                                         bs_gemm_kernel_t *out);
BS_API void bs_gemm_kernel_destroy(bs_gemm_kernel_t kernel);
/* stream: a CUstream (cudaStream_t); NULL is the legacy default stream. */
BS_API bs_status_t bs_gemm_launch(bs_gemm_kernel_t kernel,
                                  const bs_gemm_args_t *args, void *stream);
/* Split-K workspace bytes a launch of m rows needs (m = -1: the
 * description's M); 0 when none. */
BS_API bs_status_t bs_gemm_workspace_size(bs_gemm_kernel_t kernel, int64_t m,
                                          size_t *bytes);
/* One line: spec, launch config, cache key, compile time, registers,
 * spills, whether it came from the disk cache. */
BS_API bs_status_t bs_gemm_kernel_info(bs_gemm_kernel_t kernel, char *buf,
                                       size_t len);

BS_API void bs_quant_desc_init(bs_quant_desc_t *desc);
BS_API void bs_quant_args_init(bs_quant_args_t *args);
BS_API bs_status_t bs_quant_kernel_create(const bs_quant_desc_t *desc,
                                          bs_quant_kernel_t *out);
BS_API void bs_quant_kernel_destroy(bs_quant_kernel_t kernel);
BS_API bs_status_t bs_quant_launch(bs_quant_kernel_t kernel,
                                   const bs_quant_args_t *args, void *stream);
BS_API bs_status_t bs_quant_kernel_info(bs_quant_kernel_t kernel, char *buf,
                                        size_t len);
/* Logical scale shape, strides (elements) and f32 count to allocate for a
 * cast of `rows` rows with scale leading stride ld_scale (0: default):
 * out = {rows, cols, stride_row, stride_col, alloc_elements}; of a batched
 * cast, those of one matrix's first result (row-major). */
BS_API bs_status_t bs_quant_scale_geometry(const bs_quant_desc_t *desc,
                                           int64_t rows, int64_t ld_scale,
                                           int64_t out[5]);

/* The layout rule of decode scales (the one the kernels read): for a
 * logical (rows, cols) tensor quantized in blocks of block_rows x
 * block_cols, out = {scale rows, scale cols, stride_row, stride_col,
 * alloc_elements} with leading stride ld (0: the default). */
BS_API bs_status_t bs_scale_geometry(int32_t block_rows, int32_t block_cols,
                                     int64_t rows, int64_t cols, int64_t ld,
                                     int64_t out[5]);

/* The CUDA source the JIT would compile for a description (no GPU needed).
 * Writes at most len bytes (NUL-terminated); returns the full length + 1 in
 * *needed (buf = NULL with needed set: a size query). */
BS_API bs_status_t bs_gemm_source(const bs_gemm_desc_t *desc, char *buf,
                                  size_t len, size_t *needed);
BS_API bs_status_t bs_quant_source(const bs_quant_desc_t *desc, char *buf,
                                   size_t len, size_t *needed);

BS_API void bs_grouped_gemm_desc_init(bs_grouped_gemm_desc_t *desc);
BS_API void bs_grouped_gemm_args_init(bs_grouped_gemm_args_t *args);
BS_API bs_status_t bs_grouped_gemm_kernel_create(
    const bs_grouped_gemm_desc_t *desc, bs_grouped_gemm_kernel_t *out);
BS_API void bs_grouped_gemm_kernel_destroy(bs_grouped_gemm_kernel_t kernel);
BS_API bs_status_t bs_grouped_gemm_launch(bs_grouped_gemm_kernel_t kernel,
                                          const bs_grouped_gemm_args_t *args,
                                          void *stream);
BS_API bs_status_t bs_grouped_gemm_kernel_info(bs_grouped_gemm_kernel_t kernel,
                                               char *buf, size_t len);
BS_API bs_status_t bs_grouped_gemm_source(const bs_grouped_gemm_desc_t *desc,
                                          char *buf, size_t len,
                                          size_t *needed);

BS_API void bs_grouped_quant_desc_init(bs_grouped_quant_desc_t *desc);
BS_API void bs_grouped_quant_args_init(bs_grouped_quant_args_t *args);
BS_API bs_status_t bs_grouped_quant_kernel_create(
    const bs_grouped_quant_desc_t *desc, bs_grouped_quant_kernel_t *out);
BS_API void bs_grouped_quant_kernel_destroy(bs_grouped_quant_kernel_t kernel);
BS_API bs_status_t bs_grouped_quant_launch(bs_grouped_quant_kernel_t kernel,
                                           const bs_grouped_quant_args_t *args,
                                           void *stream);
BS_API bs_status_t bs_grouped_quant_kernel_info(
    bs_grouped_quant_kernel_t kernel, char *buf, size_t len);
BS_API bs_status_t bs_grouped_quant_source(const bs_grouped_quant_desc_t *desc,
                                           char *buf, size_t len,
                                           size_t *needed);
/* The padded tokens of a k-grouped GEMM's operands: round_up(tokens, 128) +
 * 128 * groups (room for every group to start at a multiple of 128); -1 for
 * negative sizes or sizes past 2^40 tokens or 2^20 groups. */
BS_API int64_t bs_grouped_token_capacity(int64_t tokens, int64_t groups);

/* Process-wide counters of the kernel registry. */
BS_API bs_status_t bs_cache_stats(int64_t out[4]); /* mem hits, disk hits,
                                                      compiles, corrupt */
BS_API void bs_clear_memory_cache(void);

/* Programmatic dependent launch of GEMMs and casts (process-wide; on unless
 * BLOCKSCALE_PDL=0): a kernel's set-up may overlap the previous kernel of its
 * stream, and it waits for that kernel before touching global memory. */
BS_API void bs_set_programmatic_launch(int on);
BS_API int bs_programmatic_launch(void);

#ifdef __cplusplus
}
#endif

#endif /* BLOCKSCALE_C_BLOCKSCALE_H */
