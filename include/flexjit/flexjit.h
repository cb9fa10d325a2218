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
 * ABI history: 1000 is the first version. 1001 added decoding over a contiguous or paged KV
 * cache (`flexjit_decode`, `flexjit_reference_decode`, `flexjit_decode_args`,
 * `flexjit_variant_desc.decode_config`) and learnable buffers (`FLEXJIT_BUFFER_LEARNABLE`,
 * `flexjit_call_options.buffer_grads`). Callers built against 1000 are unaffected: their
 * smaller structs read the new fields as zero. 1002 added per-sequence lengths of padded tensors
 * to forward and backward (`flexjit_call_options.q_lens` / `kv_lens` and their host copies).
 * 1003 added the backward's mode (`flexjit_call_options.backward_mode`, FLEXJIT_BACKWARD_*).
 * 1004 added caller-owned storage for GPU block masks (`flexjit_block_mask_desc.storage` /
 * `storage_bytes`, `flexjit_block_mask_storage_bytes`).
 */

#include <stddef.h>
#include <stdint.h>

#include <dlpack/dlpack.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Version of this C API: the major part changes on an incompatible change, the minor part when
 * functions or struct fields are added. Encoded as major * 1000 + minor. */
#define FLEXJIT_C_API_VERSION 1004

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

/** Bit of `flexjit_buffer_decl.flags` (since 1001): the buffer is learnable, and flexjit_backward /
 * flexjit_reference_backward write d(loss)/d(buffer) into the tensor that
 * `flexjit_call_options.buffer_grads` names for it (required). Only float buffers (f32, f16, bf16)
 * that score_mod reads can be learnable: flexjit_variant_create fails otherwise. */
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
  int32_t head_dim;                   /**< D of Q and K: a multiple of 8 up to 256; 0 means 128 */
  int32_t head_dim_v;                 /**< D of V and O; 0 means head_dim */
  const char* arch;                   /**< NVRTC target ("sm_90a"); NULL or "" for the current GPU's */
  const char* fwd_config;             /**< forward block config ("m128n128w8s2g"); NULL: autotuned */
  const char* bwd_dq_config;          /**< dQ kernel block config; NULL: autotuned */
  const char* bwd_dkdv_config;        /**< dK/dV kernel block config; NULL: autotuned */
  int32_t rows_guaranteed_safe;       /**< non-zero: promise that no query row is fully masked */
  /* ---- since 1001 ---- */
  const char* decode_config;          /**< decode kernel config ("m16n64w4s2"); NULL: the default */
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
  /* ---- since 1001 ---- */
  /** Backward calls only (flexjit_backward, flexjit_reference_backward): one entry per learnable
   * buffer, `tensor` receiving d(loss)/d(buffer): float32 (the reference also takes float64), the
   * shape of the buffer's value, contiguous, on the device of the call (kDLCPU for the reference).
   * Written in full (zero where no score reads an element), deterministically. Other calls reject
   * a non-zero `num_buffer_grads`. */
  const flexjit_buffer_value* buffer_grads;
  size_t num_buffer_grads;            /**< number of gradient outputs */
  /* ---- since 1002 ---- */
  /** flexjit_forward, flexjit_backward, their references and GPU block masks only (the C++
   * `SeqLens`): [B] int32 query rows of each sequence of the padded tensors, 0 to Sq, on the
   * device of the call (kDLCPU for the references); NULL: every sequence has Sq. Rows past a
   * sequence's queries are not written by flexjit_forward (the reference writes out 0, lse -inf
   * there); gradients past a sequence's lengths are zero. A block mask built with lengths serves
   * calls with the same length tensors only; a mask_mod that reads q_len or kv_len needs one (or
   * none). Other calls reject the lengths. */
  const DLTensor* q_lens;
  const DLTensor* kv_lens;            /**< [B] int32 keys of each sequence, 0 to Skv; NULL: all Skv */
  const int32_t* host_q_lens;         /**< GPU: optional host copy of q_lens (B values), checked */
  const int32_t* host_kv_lens;        /**< GPU: optional host copy of kv_lens (B values), checked */
  /* ---- since 1003 ---- */
  /** flexjit_backward only: how dQ is summed (the C++ `BackwardMode`). FLEXJIT_BACKWARD_DEFAULT:
   * the environment decides (fast unless FLEXJIT_DETERMINISTIC=1);
   * FLEXJIT_BACKWARD_DETERMINISTIC: the same bits every run (on sm_90a the dK/dV kernel's dQ sums
   * taking turns in a fixed order, elsewhere a dQ kernel); FLEXJIT_BACKWARD_FAST:
   * dQ summed by the dK/dV kernel on sm_90a (varies in its last bits). Other calls reject a
   * non-zero value. */
  int32_t backward_mode;
} flexjit_call_options;

/** Values of flexjit_call_options.backward_mode. */
#define FLEXJIT_BACKWARD_DEFAULT 0
#define FLEXJIT_BACKWARD_DETERMINISTIC 1
#define FLEXJIT_BACKWARD_FAST 2

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
  /* ---- since 1004 ---- */
  void* storage;        /**< GPU masks: device memory you own for the tables (at least
                             flexjit_block_mask_storage_bytes bytes, 16-byte aligned), or NULL for
                             memory the mask allocates and frees itself. With storage the build can
                             be captured into a CUDA graph and destroying the mask never waits for
                             the device; keep the memory alive and unchanged while the mask and the
                             kernels that read it are in use. NULL for CPU masks. */
  size_t storage_bytes; /**< bytes at `storage` */
} flexjit_block_mask_desc;

/** Builds the block mask of the variant's mask_mod (asynchronous on `stream` for the GPU). The
 * mask's buffers and parameters come from `options`. `*mask` is NULL on failure. */
FLEXJIT_C_EXPORT flexjit_status flexjit_block_mask_create(const flexjit_variant* variant,
                                                          const flexjit_block_mask_desc* desc,
                                                          const flexjit_call_options* options, void* stream,
                                                          flexjit_block_mask** mask);
/** The device bytes a GPU mask of `desc`'s sizes takes (what `desc->storage` must hold), with the
 * per-sequence lengths of `options` if it sets them (NULL: none). Since 1004. */
FLEXJIT_C_EXPORT flexjit_status flexjit_block_mask_storage_bytes(const flexjit_variant* variant,
                                                                 const flexjit_block_mask_desc* desc,
                                                                 const flexjit_call_options* options, size_t* bytes);
/** Destroys a mask and frees its tables (NULL is a no-op). Destroy it only after the kernels that
 * use it have finished, or while they are still queued only if you accept that the free waits for
 * the device (the driver's free is synchronous). A mask on caller-owned storage frees nothing. */
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

/** The operands of a decoding step (since 1001). Versioned (`struct_size`). The cache is contiguous
 * when `page_table` is NULL, paged otherwise. Keys past a sequence's length are never read; in the
 * mods `kv_len` is sequence b's length, `q_len` is Sq and `kv_idx` a logical position. */
typedef struct flexjit_decode_args {
  size_t struct_size;                /**< sizeof(flexjit_decode_args) */
  const DLTensor* q;                 /**< [B, Hq, Sq, D], the variant's dtype */
  const DLTensor* k;                 /**< contiguous: [B, Hkv, S, D]; paged: [num_pages, page_size, Hkv, D] */
  const DLTensor* v;                 /**< as `k`, with Dv */
  const DLTensor* seq_lens;          /**< [B] int32: keys of each sequence (0 to the capacity) */
  const DLTensor* page_table;        /**< NULL (contiguous), or [B, max_pages] int32: pool page of each
                                          page_size tokens of each sequence */
  const DLTensor* out;               /**< [B, Hq, Sq, Dv], the variant's dtype */
  const DLTensor* lse;               /**< [B, Hq, Sq] float32, natural log (-inf for an empty
                                          sequence); NULL to skip */
  const int32_t* host_seq_lens;      /**< GPU: optional host copy of seq_lens (B values): checked with
                                          named errors and used to split the keys; NULL: unchecked */
  const int32_t* host_page_table;    /**< GPU: optional host copy of page_table (B x max_pages,
                                          row-major), checked; needs host_seq_lens */
  int32_t max_seq_len;               /**< GPU: upper bound of the lengths when host_seq_lens is NULL
                                          (0: the capacity); only steers the split */
} flexjit_decode_args;

/** Decoding (and chunked prefill) on the GPU against a KV cache with per-sequence lengths
 * (`args`: device tensors). The query rows of sequence b are its last Sq positions; write the
 * causal mask as `q_idx + kv_len - q_len >= kv_idx` when Sq > 1. Needs no block mask; new lengths
 * never recompile. Asynchronous on `stream`. */
FLEXJIT_C_EXPORT flexjit_status flexjit_decode(const flexjit_variant* variant, const flexjit_decode_args* args,
                                               void* stream, const flexjit_call_options* options);

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
 * matching size skip tuning. `options` supplies the mods' buffers (device tensors) and params;
 * learnable buffers get scratch gradient outputs (no `buffer_grads` needed). */
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
 * dq, dk, dv (float32 or float64, shapes of q, k, v), and of every learnable buffer, written to
 * the kDLCPU tensors of `options->buffer_grads` (float32 or float64, the buffer's shape). */
FLEXJIT_C_EXPORT flexjit_status flexjit_reference_backward(const flexjit_variant* variant, const DLTensor* q,
                                                           const DLTensor* k, const DLTensor* v,
                                                           const DLTensor* dout, const DLTensor* dq,
                                                           const DLTensor* dk, const DLTensor* dv,
                                                           const flexjit_call_options* options);

/** The float64 reference of flexjit_decode on host tensors (since 1001): `args` holds kDLCPU
 * tensors (q, k, v: float16, bfloat16, float32 or float64; seq_lens and page_table int32; out and
 * lse float32 or float64); the host_* fields and max_seq_len must be zero. The lengths and the
 * page-table entries the sequences use are checked. Slow: for tests. */
FLEXJIT_C_EXPORT flexjit_status flexjit_reference_decode(const flexjit_variant* variant, const flexjit_decode_args* args,
                                                         const flexjit_call_options* options);

#ifdef __cplusplus
}  /* extern "C" */
#endif

#endif /* FLEXJIT_FLEXJIT_H */
