#ifndef FLEXJIT_FLEXJIT_H
#define FLEXJIT_FLEXJIT_H
/** \file
 * The flexjit C API: a C99 layer over the C++ library for every language with a C FFI (Python
 * through ctypes, Rust, Go, Julia, C#). The same expression strings, kernels and caches as the
 * C++ API (`flexjit/attention.hpp`).
 *
 * Conventions:
 * - Every call that can fail returns a `flexjit_status`; `FLEXJIT_OK` (0) is success. After a
 *   failure `flexjit_last_error()` returns the full message of this thread's latest failure: the
 *   same text as the C++ exception's `what()` (for expressions: `mod:line:col`, the text with a
 *   caret and a hint). No C++ exception ever crosses this ABI.
 * - Tensors are DLPack `DLTensor`s (not owned; the caller keeps them alive for the call, and
 *   until the stream has finished with them). `strides` in elements, NULL meaning row-major
 *   compact; `byte_offset` is added to `data`. GPU calls take `kDLCUDA` (or `kDLCUDAManaged`)
 *   tensors, the CPU reference takes `kDLCPU` ones.
 * - Streams are `CUstream` / `cudaStream_t` passed as `void*`; NULL is the legacy default stream.
 *   Calls on a stream are asynchronous, as in the C++ API.
 * - Structs whose first field is `struct_size` are versioned: set it to `sizeof` the struct you
 *   compiled against (zero the rest, e.g. with `= {0}` / `memset`). A newer library reads the
 *   fields an older caller knows and treats the rest as zero, so fields can be appended without
 *   breaking the ABI. A NULL options pointer means all defaults.
 * - Strings the library returns are allocated by it and freed with `flexjit_free`.
 * - Handles are thread-safe; a variant may be used from several threads at once.
 *
 * ABI evolution (planned): decoding over a paged KV cache will come as new functions
 * (`flexjit_decode` with its own versioned argument struct); gradients of learnable buffers as
 * `FLEXJIT_BUFFER_LEARNABLE` in `flexjit_buffer_decl.flags` plus fields appended to
 * `flexjit_call_options` that name the gradient outputs. Existing callers are unaffected.
 */

#include <stddef.h>
#include <stdint.h>

#include <dlpack/dlpack.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Version of this C API: the major part changes on an incompatible change, the minor part when
 * functions or struct fields are added. Encoded as major * 1000 + minor. */
#define FLEXJIT_C_API_VERSION 1000

/** Symbol visibility of the API functions (the shared library exports nothing else that is C). */
#if defined(_WIN32)
#define FLEXJIT_C_EXPORT
#else
#define FLEXJIT_C_EXPORT __attribute__((visibility("default")))
#endif

/** Outcome of a call; the error kinds of the C++ `flexjit::Error` hierarchy, fixed values. */
typedef enum flexjit_status {
  FLEXJIT_OK = 0,                 /**< success */
  FLEXJIT_ERROR_EXPR = 1,         /**< ExprError: a score_mod / mask_mod failed to parse or check */
  FLEXJIT_ERROR_TEMPLATE = 2,     /**< TemplateError: a kernel template failed to render */
  FLEXJIT_ERROR_COMPILE = 3,      /**< CompileError: NVRTC rejected a generated kernel */
  FLEXJIT_ERROR_DRIVER = 4,       /**< DriverError: no CUDA driver / GPU, or a driver call failed */
  FLEXJIT_ERROR_SHAPE = 5,        /**< ShapeError: a tensor's device, dtype, shape or strides are wrong */
  FLEXJIT_ERROR_CACHE = 6,        /**< CacheError: the on-disk cache could not be read or written */
  FLEXJIT_ERROR_USAGE = 7,        /**< UsageError: an invalid argument or option */
  FLEXJIT_ERROR_INTERNAL = 8      /**< anything else (out of memory, a bug): the message says what */
} flexjit_status;

/** Element types of variants and expression buffers (tensors use DLPack's `DLDataType`). */
typedef enum flexjit_dtype {
  FLEXJIT_BF16 = 0,  /**< bfloat16 (the default: a zeroed struct means bf16) */
  FLEXJIT_F16 = 1,   /**< IEEE half */
  FLEXJIT_F32 = 2,   /**< float */
  FLEXJIT_I32 = 3,   /**< int32 */
  FLEXJIT_U8 = 4     /**< uint8 */
} flexjit_dtype;

/** Type of a declared parameter. */
typedef enum flexjit_scalar_type {
  FLEXJIT_SCALAR_INT = 0,   /**< 32-bit int in expressions; passed as `int_value` */
  FLEXJIT_SCALAR_FLOAT = 1  /**< 32-bit float in expressions; passed as `float_value` */
} flexjit_scalar_type;

/** Reserved bit of `flexjit_buffer_decl.flags`: the buffer is learnable (the backward will return
 * its gradient). Not supported by this version: a variant declaring it fails with
 * FLEXJIT_ERROR_USAGE. */
#define FLEXJIT_BUFFER_LEARNABLE 1u

/** A buffer that the expressions may index, e.g. `slope[h]`. */
typedef struct flexjit_buffer_decl {
  const char* name;      /**< identifier used in the expressions */
  flexjit_dtype dtype;   /**< element type (f16/bf16/f32 read as float, i32/u8 as int) */
  int32_t ndim;          /**< rank, 1..8 */
  const int64_t* shape;  /**< `ndim` extents; -1 for an extent given at call time */
  uint32_t flags;        /**< 0, or FLEXJIT_BUFFER_* bits */
} flexjit_buffer_decl;

/** A scalar parameter that the expressions may read, e.g. `window`. */
typedef struct flexjit_param_decl {
  const char* name;          /**< identifier used in the expressions */
  flexjit_scalar_type type;  /**< int or float */
} flexjit_param_decl;

/** What an attention variant computes (the C++ `AttentionSpec`). Versioned (`struct_size`). */
typedef struct flexjit_variant_desc {
  size_t struct_size;                 /**< sizeof(flexjit_variant_desc) */
  const char* score_mod;              /**< NULL or "" for `score` (no modification) */
  const char* mask_mod;               /**< NULL or "" for no mask */
  const flexjit_buffer_decl* buffers; /**< `num_buffers` declarations (may be NULL when 0) */
  size_t num_buffers;                 /**< number of buffers */
  const flexjit_param_decl* params;   /**< `num_params` declarations (may be NULL when 0) */
  size_t num_params;                  /**< number of parameters */
  flexjit_dtype dtype;                /**< Q, K, V, O element type: FLEXJIT_BF16 (0) or FLEXJIT_F16 */
  int32_t head_dim;                   /**< D of Q and K (64, 128, 192, 256); 0 means 128 */
  int32_t head_dim_v;                 /**< D of V and O; 0 means head_dim */
  const char* arch;                   /**< NVRTC target ("sm_90a"); NULL or "" for the current GPU's */
  const char* fwd_config;             /**< forward block config ("m128n128w8s2g"); NULL: autotuned */
  const char* bwd_dq_config;          /**< dQ kernel block config; NULL: autotuned */
  const char* bwd_dkdv_config;        /**< dK/dV kernel block config; NULL: autotuned */
  int32_t rows_guaranteed_safe;       /**< non-zero: promise that no query row is fully masked */
} flexjit_variant_desc;

/** A buffer's value for a call: the tensor holding it (device memory for GPU calls, host memory
 * for the CPU reference; dtype and rank as declared). */
typedef struct flexjit_buffer_value {
  const char* name;        /**< declared name */
  const DLTensor* tensor;  /**< the data */
} flexjit_buffer_value;

/** A parameter's value for a call; `type` must be the declared type. */
typedef struct flexjit_param_value {
  const char* name;          /**< declared name */
  flexjit_scalar_type type;  /**< which of the two values is read */
  int64_t int_value;         /**< the value of an int parameter (must fit in 32 bits) */
  double float_value;        /**< the value of a float parameter */
} flexjit_param_value;

/** Per-call values and options. Versioned (`struct_size`); NULL means no values and defaults. */
typedef struct flexjit_call_options {
  size_t struct_size;                 /**< sizeof(flexjit_call_options) */
  const flexjit_buffer_value* buffers; /**< values of the declared buffers the mods read */
  size_t num_buffers;                 /**< number of buffer values */
  const flexjit_param_value* params;  /**< values of the declared parameters the mods read */
  size_t num_params;                  /**< number of parameter values */
  int32_t has_scale;                  /**< non-zero: use `scale` */
  float scale;                        /**< multiplies Q·Kᵀ before score_mod; default 1/sqrt(head_dim) */
} flexjit_call_options;

/** A compiled attention variant (opaque). */
typedef struct flexjit_variant flexjit_variant;
/** Block-sparse tables of a mask (opaque). */
typedef struct flexjit_block_mask flexjit_block_mask;

/* ---- version, errors, memory ------------------------------------------------------------- */

/** FLEXJIT_C_API_VERSION of the library actually loaded (compare with the header's). */
FLEXJIT_C_EXPORT int flexjit_c_api_version(void);
/** flexjit's version, "major.minor.patch". Static storage. */
FLEXJIT_C_EXPORT const char* flexjit_version_string(void);
/** The message of this thread's latest failed call ("" when none failed yet). Valid until the
 * next failing call on this thread. */
FLEXJIT_C_EXPORT const char* flexjit_last_error(void);
/** The status of this thread's latest failed call (FLEXJIT_OK when none failed yet). */
FLEXJIT_C_EXPORT flexjit_status flexjit_last_status(void);
/** "OK", "ExprError", "TemplateError", "CompileError", "DriverError", "ShapeError", "CacheError",
 * "UsageError", "InternalError"; "unknown" for other values. Static storage. */
FLEXJIT_C_EXPORT const char* flexjit_status_name(flexjit_status status);
/** Frees memory the library returned (strings, emitted bytes). NULL is a no-op. */
FLEXJIT_C_EXPORT void flexjit_free(void* pointer);
/** 1 when the CUDA driver loads and reports a device; else 0, with the reason available from
 * flexjit_last_error() (status FLEXJIT_ERROR_DRIVER). Never fails otherwise. */
FLEXJIT_C_EXPORT int flexjit_gpu_available(void);

/* ---- checking expressions (no GPU) ------------------------------------------------------- */

/** What flexjit_check returns. Versioned (`struct_size`, set by the caller); every string is
 * owned by the struct and freed by flexjit_check_result_free. */
typedef struct flexjit_check_result {
  size_t struct_size;     /**< sizeof(flexjit_check_result) */
  char* report;           /**< the text `flexjit check` prints (canonical forms, types, variables,
                               generated CUDA, gradient) */
  char* score_canonical;  /**< canonical score_mod ("" when none was given) */
  char* mask_canonical;   /**< canonical mask_mod ("" when none was given) */
  char* score_gradient;   /**< d(score_mod)/d(score), canonical ("" when no score_mod) */
  char* cuda;             /**< the generated device code: FlexjitModArgs and the mod functions */
} flexjit_check_result;

/** Parses and type-checks the mods of `desc` (at least one must be given) against its
 * declarations. Needs no GPU. On failure (FLEXJIT_ERROR_EXPR) the message lists every problem of
 * both mods with caret lines. */
FLEXJIT_C_EXPORT flexjit_status flexjit_check(const flexjit_variant_desc* desc, flexjit_check_result* result);
/** Frees the strings of a flexjit_check_result and sets them to NULL. */
FLEXJIT_C_EXPORT void flexjit_check_result_free(flexjit_check_result* result);

/* ---- variants ----------------------------------------------------------------------------- */

/** Creates a variant: checks the expressions and the spec; kernels compile on first use. Needs no
 * GPU. `*variant` is NULL on failure. */
FLEXJIT_C_EXPORT flexjit_status flexjit_variant_create(const flexjit_variant_desc* desc, flexjit_variant** variant);
/** Destroys a variant (NULL is a no-op). Work already queued on a stream is unaffected. */
FLEXJIT_C_EXPORT void flexjit_variant_destroy(flexjit_variant* variant);

/* ---- block masks -------------------------------------------------------------------------- */

/** Where a block mask is built. */
typedef enum flexjit_mask_device {
  FLEXJIT_MASK_GPU = 0,  /**< a JIT kernel on the stream (mask buffers: device tensors) */
  FLEXJIT_MASK_CPU = 1   /**< the interpreter on the host (mask buffers: kDLCPU tensors) */
} flexjit_mask_device;

/** Sizes of a block mask to build. Versioned (`struct_size`). */
typedef struct flexjit_block_mask_desc {
  size_t struct_size;          /**< sizeof(flexjit_block_mask_desc) */
  int32_t batch;               /**< B */
  int32_t q_heads;             /**< Hq */
  int32_t q_len;               /**< Sq */
  int32_t kv_len;              /**< Skv */
  int32_t q_block;             /**< rows of a query block; 0 means 128 */
  int32_t kv_block;            /**< rows of a kv block; 0 means 128 */
  flexjit_mask_device device;  /**< where to build it */
} flexjit_block_mask_desc;

/** Builds the block mask of the variant's mask_mod (asynchronous on `stream` for the GPU). The
 * mask's buffers and parameters come from `options`. `*mask` is NULL on failure. */
FLEXJIT_C_EXPORT flexjit_status flexjit_block_mask_create(const flexjit_variant* variant,
                                                          const flexjit_block_mask_desc* desc,
                                                          const flexjit_call_options* options, void* stream,
                                                          flexjit_block_mask** mask);
/** Destroys a mask and frees its tables (NULL is a no-op). Destroy it only after the kernels that
 * use it have finished, or while they are still queued only if you accept that the free waits for
 * the device (the driver's free is synchronous). */
FLEXJIT_C_EXPORT void flexjit_block_mask_destroy(flexjit_block_mask* mask);

/** Sizes and sparsity of a mask. Versioned (`struct_size`, set by the caller). */
typedef struct flexjit_block_mask_info {
  size_t struct_size;       /**< sizeof(flexjit_block_mask_info) */
  int32_t batch;            /**< table batch: B, or 1 when the mask ignores b */
  int32_t heads;            /**< table heads: Hq, or 1 when the mask ignores h */
  int32_t q_len;            /**< Sq */
  int32_t kv_len;           /**< Skv */
  int32_t q_block;          /**< rows of a query block */
  int32_t kv_block;         /**< rows of a kv block */
  double density;           /**< fraction of block pairs visited (waits for a GPU build) */
  double partial_fraction;  /**< fraction of block pairs where mask_mod runs */
} flexjit_block_mask_info;

/** Fills `info` (downloads the tables of a GPU-built mask, so it synchronises). */
FLEXJIT_C_EXPORT flexjit_status flexjit_block_mask_get_info(const flexjit_block_mask* mask,
                                                            flexjit_block_mask_info* info);

/* ---- attention on the GPU ----------------------------------------------------------------- */

/** Forward attention: q [B, Hq, Sq, D], k [B, Hkv, Skv, D], v [B, Hkv, Skv, Dv] ->
 * out [B, Hq, Sq, Dv] (dtype of the variant; any strides with a contiguous last dimension) and
 * lse [B, Hq, Sq] float32 (natural log; NULL to skip it; the backward needs it). `mask` NULL
 * visits every tile (correct, slower). Asynchronous on `stream`. */
FLEXJIT_C_EXPORT flexjit_status flexjit_forward(const flexjit_variant* variant, const DLTensor* q,
                                                const DLTensor* k, const DLTensor* v, const DLTensor* out,
                                                const DLTensor* lse, const flexjit_block_mask* mask,
                                                void* stream, const flexjit_call_options* options);

/** Backward attention: dq, dk, dv (shapes and dtypes of q, k, v) from the forward's inputs, its
 * `out` and `lse`, and `dout` (shape of out). Deterministic. `mask` must be the forward's. */
FLEXJIT_C_EXPORT flexjit_status flexjit_backward(const flexjit_variant* variant, const DLTensor* q,
                                                 const DLTensor* k, const DLTensor* v, const DLTensor* out,
                                                 const DLTensor* lse, const DLTensor* dout, const DLTensor* dq,
                                                 const DLTensor* dk, const DLTensor* dv,
                                                 const flexjit_block_mask* mask, void* stream,
                                                 const flexjit_call_options* options);

/** Waits for the device, then reports out-of-bounds buffer reads of any kernel since the last
 * check (such reads yield 0 instead of faulting) as FLEXJIT_ERROR_SHAPE; clears the record. */
FLEXJIT_C_EXPORT flexjit_status flexjit_check_buffer_errors(void);

/* ---- caches: warm-up and tuning ----------------------------------------------------------- */

/** The sizes of a problem to compile or tune for. Versioned (`struct_size`). */
typedef struct flexjit_problem_size {
  size_t struct_size;  /**< sizeof(flexjit_problem_size) */
  int32_t batch;       /**< B */
  int32_t q_heads;     /**< Hq */
  int32_t kv_heads;    /**< Hkv (divides Hq) */
  int32_t q_len;       /**< Sq */
  int32_t kv_len;      /**< Skv */
} flexjit_problem_size;

/** Compiles into the disk cache every kernel that forward (and, with `backward` non-zero,
 * backward) will need for this size. Needs no GPU when `arch` is given (NULL or "": the current
 * GPU's). `jobs` parallel compiles (0: one per core). `kernels` / `from_cache` (may be NULL) get
 * the number of kernels and how many of them were already cached. */
FLEXJIT_C_EXPORT flexjit_status flexjit_warm_up(const flexjit_variant* variant, const flexjit_problem_size* size,
                                                int backward, const char* arch, int jobs, size_t* kernels,
                                                size_t* from_cache);

/** Autotunes the block configs of this size on the GPU (as `flexjit tune` does; FLEXJIT_AUTOTUNE
 * says how much): runs forward (and backward) once on random inputs it allocates, with the mask
 * of the variant, then synchronises. The results go to the autotune cache, so later calls of a
 * matching size skip tuning. `options` supplies the mods' buffers (device tensors) and params. */
FLEXJIT_C_EXPORT flexjit_status flexjit_tune(const flexjit_variant* variant, const flexjit_problem_size* size,
                                             int backward, const flexjit_call_options* options, void* stream);

/* ---- kernel source --------------------------------------------------------------------------- */

/** What flexjit_emit renders. Versioned (`struct_size`). */
typedef struct flexjit_emit_options {
  size_t struct_size;        /**< sizeof(flexjit_emit_options) */
  const char* family;        /**< "fwd", "bwd_preprocess", "bwd_dq", "bwd_dkdv", "block_mask", ... */
  const char* format;        /**< "cu" (self-contained source), "ptx", "cubin" or "context" (JSON) */
  const char* arch;          /**< target; NULL or "" means "sm_90a" */
  const char* config;        /**< block config; NULL: the default for the family and arch */
  int32_t gqa_group;         /**< query heads per kv head; 0 means 1 */
  int32_t divisible;         /**< non-zero: lengths are multiples of the tiles */
  int32_t no_block_mask;     /**< non-zero: visit every tile (no block-sparse tables) */
  int32_t q_block;           /**< block-mask query block; 0 means 128 */
  int32_t kv_block;          /**< block-mask kv block; 0 means 128 */
} flexjit_emit_options;

/** Renders one kernel of the variant (its mods, dtype and head dims) and returns its source, PTX,
 * cubin or template context in `*data` (`*size` bytes, plus a terminating NUL not counted; free
 * with flexjit_free). Needs no GPU: NVRTC compiles for `arch`. */
FLEXJIT_C_EXPORT flexjit_status flexjit_emit(const flexjit_variant* variant, const flexjit_emit_options* options,
                                             char** data, size_t* size);

/* ---- the float64 CPU reference (no GPU) -------------------------------------------------- */

/** O = softmax(mask(score_mod(scale · q kᵀ))) v in float64 on host tensors (kDLCPU; float16,
 * bfloat16, float32 or float64 inputs, any strides). `out` [B, Hq, Sq, Dv] and `lse` [B, Hq, Sq]
 * (NULL to skip) are float32 or float64. The tensors' shapes give the sizes (the variant's dtype
 * and head dims are not used). Buffers in `options` are kDLCPU tensors. Slow: for tests. */
FLEXJIT_C_EXPORT flexjit_status flexjit_reference_forward(const flexjit_variant* variant, const DLTensor* q,
                                                          const DLTensor* k, const DLTensor* v,
                                                          const DLTensor* out, const DLTensor* lse,
                                                          const flexjit_call_options* options);

/** Gradients of sum(out · dout) with respect to q, k, v in float64 on host tensors, written to
 * dq, dk, dv (float32 or float64, shapes of q, k, v). */
FLEXJIT_C_EXPORT flexjit_status flexjit_reference_backward(const flexjit_variant* variant, const DLTensor* q,
                                                           const DLTensor* k, const DLTensor* v,
                                                           const DLTensor* dout, const DLTensor* dq,
                                                           const DLTensor* dk, const DLTensor* dv,
                                                           const flexjit_call_options* options);

#ifdef __cplusplus
}  /* extern "C" */
#endif

#endif /* FLEXJIT_FLEXJIT_H */
