"""flexjit: FlexAttention-style attention kernels compiled at run time from expression strings.

    import flexjit
    out = flexjit.attention(q, k, v, score_mod="score + slope[h] * (kv_idx - q_idx)",
                            mask_mod="q_idx >= kv_idx", buffers={"slope": slopes})

`q`, `k`, `v` are [B, H, S, D] arrays: PyTorch / CuPy / JAX on a CUDA device run the JIT kernels
on the framework's current stream (differentiable in PyTorch); NumPy arrays (or CPU tensors) run
the float64 CPU reference. `check`, `emit` and the CPU reference need no GPU. Errors raise the
subclasses of `flexjit.FlexjitError`, with the library's message (caret and hint included).
Pure Python over libflexjit's C API (include/flexjit/flexjit.h) through ctypes.
"""
import collections
import ctypes
import threading

from . import _lib, _tensors
from .errors import (CacheError, CompileError, DriverError, ExprError, FlexjitError, InternalError, LibraryNotFound,
                     ShapeError, TemplateError, UsageError)

__all__ = ["attention", "block_mask", "check", "emit", "reference_backward", "warm_up", "tune", "gpu_available",
           "library_version", "BlockMask", "CheckResult", "FlexjitError", "ExprError", "TemplateError",
           "CompileError", "DriverError", "ShapeError", "CacheError", "UsageError", "InternalError",
           "LibraryNotFound"]
__version__ = "0.1.0"

_DTYPES = {"bfloat16": _lib.BF16, "bf16": _lib.BF16, "float16": _lib.F16, "f16": _lib.F16, "half": _lib.F16,
           "float32": _lib.F32, "f32": _lib.F32, "int32": _lib.I32, "i32": _lib.I32, "uint8": _lib.U8,
           "u8": _lib.U8}


def library_version():
    """flexjit's version string, as the loaded libflexjit.so reports it."""
    return _lib.lib().flexjit_version_string().decode()


def gpu_available():
    """(True, "") when a CUDA driver and device are present, else (False, the reason)."""
    lib = _lib.lib()
    if lib.flexjit_gpu_available():
        return True, ""
    return False, lib.flexjit_last_error().decode("utf-8", "replace")


# ---- declarations: what the expressions may read ----------------------------------------------

def _buffer_decl(name, value):
    """(name, flexjit dtype, shape) from an array, or from a (dtype, shape) pair."""
    if isinstance(value, tuple) and len(value) == 2 and isinstance(value[0], str):
        dtype, shape = value
    else:
        dtype, shape = _tensors.dtype_name(value), _tensors.shape_of(value)
    if dtype not in _DTYPES:
        raise ShapeError(f"buffer '{name}' has dtype {dtype}: buffers are float16, bfloat16, float32, int32 or uint8")
    return (str(name), _DTYPES[dtype], tuple(int(e) for e in shape))


def _param_decl(name, value):
    """(name, scalar type) from a value (int or float) or from the text 'int' / 'float'."""
    if value in ("int", "float"):
        return (str(name), _lib.SCALAR_INT if value == "int" else _lib.SCALAR_FLOAT)
    if isinstance(value, bool) or not _is_number(value):
        raise UsageError(f"parameter '{name}' = {value!r}: parameters are int or float numbers")
    return (str(name), _lib.SCALAR_INT if _is_int(value) else _lib.SCALAR_FLOAT)


def _is_int(value):
    import numbers
    return isinstance(value, numbers.Integral)


def _is_number(value):
    import numbers
    return isinstance(value, numbers.Real)


def _desc(score_mod, mask_mod, buffer_decls, param_decls, dtype=_lib.BF16, head_dim=0, head_dim_v=0, arch=None,
          configs=(None, None, None), keep=None):
    """A flexjit_variant_desc; `keep` collects the ctypes objects it points into."""
    buffers = (_lib.BufferDecl * max(len(buffer_decls), 1))()
    for i, (name, dt, shape) in enumerate(buffer_decls):
        extents = (ctypes.c_int64 * max(len(shape), 1))(*shape)
        keep.append(extents)
        buffers[i] = _lib.BufferDecl(name.encode(), dt, len(shape), extents, 0)
    params = (_lib.ParamDecl * max(len(param_decls), 1))()
    for i, (name, kind) in enumerate(param_decls):
        params[i] = _lib.ParamDecl(name.encode(), kind)
    keep.extend([buffers, params])
    encode = lambda s: s.encode() if s else None  # noqa: E731
    return _lib.VariantDesc.new(score_mod=encode(score_mod), mask_mod=encode(mask_mod), buffers=buffers,
                                num_buffers=len(buffer_decls), params=params, num_params=len(param_decls),
                                dtype=dtype, head_dim=head_dim, head_dim_v=head_dim_v, arch=encode(arch),
                                fwd_config=encode(configs[0]), bwd_dq_config=encode(configs[1]),
                                bwd_dkdv_config=encode(configs[2]))


# ---- check --------------------------------------------------------------------------------------

CheckResult = collections.namedtuple("CheckResult", "report score_canonical mask_canonical score_gradient cuda")
CheckResult.__doc__ = ("What flexjit understood of the expressions: the full report (as `flexjit check` prints "
                       "it), the canonical forms, d(score_mod)/d(score) and the generated CUDA.")


def check(score_mod=None, mask_mod=None, buffers=None, params=None):
    """Parses and type-checks the expressions (no GPU needed). `buffers` maps names to arrays or to
    (dtype, shape) pairs, e.g. {"slope": ("float32", (16,))}; `params` maps names to values or to
    "int" / "float". Raises ExprError with every problem, caret lines and hints."""
    if not score_mod and not mask_mod:
        raise UsageError("check needs a score_mod or a mask_mod")
    keep = []
    desc = _desc(score_mod, mask_mod, [_buffer_decl(n, v) for n, v in (buffers or {}).items()],
                 [_param_decl(n, v) for n, v in (params or {}).items()], keep=keep)
    result = _lib.CheckResult.new()
    lib = _lib.lib()
    _lib.check(lib.flexjit_check(ctypes.byref(desc), ctypes.byref(result)))
    try:
        text = lambda p: ctypes.string_at(p).decode() if p else ""  # noqa: E731
        return CheckResult(text(result.report), text(result.score_canonical), text(result.mask_canonical),
                           text(result.score_gradient), text(result.cuda))
    finally:
        lib.flexjit_check_result_free(ctypes.byref(result))


# ---- variants -----------------------------------------------------------------------------------

class _Variant:
    """An owned flexjit_variant handle."""

    def __init__(self, key, desc):
        self.key = key
        handle = ctypes.c_void_p()
        _lib.check(_lib.lib().flexjit_variant_create(ctypes.byref(desc), ctypes.byref(handle)))
        self.handle = handle
        self._destroy = _lib.lib().flexjit_variant_destroy

    def __del__(self):
        if getattr(self, "handle", None):
            self._destroy(self.handle)
            self.handle = None


_variants = collections.OrderedDict()
_variants_lock = threading.Lock()
_MAX_VARIANTS = 64


def _variant(score_mod, mask_mod, buffer_decls, param_decls, dtype=_lib.BF16, head_dim=0, head_dim_v=0, arch=None,
             configs=(None, None, None)):
    key = (score_mod or "", mask_mod or "", tuple(buffer_decls), tuple(param_decls), dtype, head_dim, head_dim_v,
           arch or "", tuple(configs))
    with _variants_lock:
        found = _variants.get(key)
        if found is not None:
            _variants.move_to_end(key)
            return found
    keep = []
    variant = _Variant(key, _desc(score_mod, mask_mod, buffer_decls, param_decls, dtype, head_dim, head_dim_v, arch,
                                  configs, keep))
    with _variants_lock:
        _variants[key] = variant
        while len(_variants) > _MAX_VARIANTS:
            _variants.popitem(last=False)
    return variant


class _Options:
    """flexjit_call_options for a call, with the DLTensors it points to kept alive."""

    def __init__(self, buffers, params, scale, stream=None):
        self.keep = []
        items = list((buffers or {}).items())
        values = (_lib.BufferValue * max(len(items), 1))()
        for i, (name, array) in enumerate(items):
            described = _tensors.describe(array, f"buffer '{name}'", stream)
            self.keep.append(described)
            values[i] = _lib.BufferValue(str(name).encode(), described.pointer)
        plist = list((params or {}).items())
        pvalues = (_lib.ParamValue * max(len(plist), 1))()
        for i, (name, value) in enumerate(plist):
            _, kind = _param_decl(name, value)
            pvalues[i] = _lib.ParamValue(str(name).encode(), kind, int(value) if kind == _lib.SCALAR_INT else 0,
                                         float(value) if kind == _lib.SCALAR_FLOAT else 0.0)
        self.keep.extend([values, pvalues])
        self.struct = _lib.CallOptions.new(buffers=values, num_buffers=len(items), params=pvalues,
                                           num_params=len(plist), has_scale=scale is not None,
                                           scale=float(scale) if scale is not None else 0.0)

    @property
    def pointer(self):
        return ctypes.byref(self.struct)


# ---- block masks --------------------------------------------------------------------------------

class BlockMask:
    """Block-sparse tables of a mask_mod for one problem size (FlexAttention's BlockMask). Pass it
    to `attention(..., block_mask=mask)` with the same mask_mod; build it once and reuse it while
    the mask and sizes stay the same."""

    def __init__(self, variant, handle, mask_mod, sizes, device):
        self._variant = variant  # the handle's expressions live in the variant
        self._handle = handle
        self._destroy = _lib.lib().flexjit_block_mask_destroy
        self.mask_mod = mask_mod
        self.sizes = sizes  # (B, Hq, q_len, kv_len)
        self.device = device

    def __del__(self):
        if getattr(self, "_handle", None):
            self._destroy(self._handle)
            self._handle = None

    def info(self):
        """Table sizes and sparsity (synchronises with a GPU build)."""
        info = _lib.BlockMaskInfo.new()
        _lib.check(_lib.lib().flexjit_block_mask_get_info(self._handle, ctypes.byref(info)))
        return {f: getattr(info, f) for f, _ in _lib.BlockMaskInfo._fields_ if f != "struct_size"}

    @property
    def density(self):
        """Fraction of (query block, kv block) pairs visited."""
        return self.info()["density"]

    def __repr__(self):
        return f"BlockMask(mask_mod={self.mask_mod!r}, sizes={self.sizes}, device={self.device!r})"


def block_mask(mask_mod, batch, q_heads, q_len, kv_len, buffers=None, params=None, device=None, q_block=128,
               kv_block=128, stream=None):
    """Builds the block mask of `mask_mod` for [batch, q_heads, q_len, kv_len] problems. `device`
    "cuda" builds it with a JIT kernel on `stream` (default: PyTorch's / CuPy's current stream),
    "cpu" with the interpreter (buffers then are host arrays); default: "cuda" when any buffer is
    on a GPU or a GPU is present, else "cpu"."""
    if not mask_mod:
        raise UsageError("block_mask needs a mask_mod")
    buffers = buffers or {}
    if device is None:
        if buffers:
            device = "cuda" if any(_tensors.is_gpu(b) for b in buffers.values()) else "cpu"
        else:
            device = "cuda" if gpu_available()[0] else "cpu"
    if device not in ("cuda", "cpu"):
        raise UsageError(f"device={device!r}: use 'cuda' or 'cpu'")
    if stream is None and device == "cuda":
        stream = next((_tensors.current_stream(b) for b in buffers.values()), None)
        if stream is None:
            stream = _torch_current_stream()
    variant = _variant(None, mask_mod, [_buffer_decl(n, v) for n, v in buffers.items()],
                       [_param_decl(n, v) for n, v in (params or {}).items()])
    options = _Options(buffers, params, None, stream)
    desc = _lib.BlockMaskDesc.new(batch=batch, q_heads=q_heads, q_len=q_len, kv_len=kv_len, q_block=q_block,
                                  kv_block=kv_block, device=_lib.MASK_GPU if device == "cuda" else _lib.MASK_CPU)
    handle = ctypes.c_void_p()
    _lib.check(_lib.lib().flexjit_block_mask_create(variant.handle, ctypes.byref(desc), options.pointer,
                                                    ctypes.c_void_p(stream or 0), ctypes.byref(handle)))
    return BlockMask(variant, handle, mask_mod, (batch, q_heads, q_len, kv_len), device)


def _torch_current_stream():
    import sys
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_available() and torch.cuda.is_initialized():
        return torch.cuda.current_stream().cuda_stream
    return 0


# ---- attention ----------------------------------------------------------------------------------

def _check_qkv(q, k, v):
    kinds = {_tensors.framework(x) for x in (q, k, v)}
    if len(kinds) != 1:
        raise UsageError(f"q, k and v come from different frameworks ({', '.join(sorted(kinds))}): pass one kind")
    for name, x in (("q", q), ("k", k), ("v", v)):
        if len(x.shape) != 4:
            raise ShapeError(f"{name} has shape {_tensors.shape_of(x)}: expected 4 dimensions [B, H, S, D]")
    B, Hq, Sq, D = _tensors.shape_of(q)
    Bk, Hkv, Skv, Dk = _tensors.shape_of(k)
    Bv, Hv, Sv, Dv = _tensors.shape_of(v)
    if Bk != B or Bv != B or Hv != Hkv or Sv != Skv or Dk != D:
        raise ShapeError(f"q {_tensors.shape_of(q)}, k {_tensors.shape_of(k)} and v {_tensors.shape_of(v)} do not "
                         "fit together: q [B, Hq, Sq, D], k [B, Hkv, Skv, D], v [B, Hkv, Skv, Dv]")
    return B, Hq, Sq, D, Hkv, Skv, Dv


class _GpuCall:
    """Everything one GPU attention call needs, kept for its backward."""

    def __init__(self, q, k, v, score_mod, mask_mod, buffers, params, block_mask_, scale):
        self.sizes = _check_qkv(q, k, v)
        B, Hq, Sq, D, Hkv, Skv, Dv = self.sizes
        dtype = _tensors.dtype_name(q)
        if dtype not in ("bfloat16", "float16"):
            raise ShapeError(f"q has dtype {dtype}: attention on the GPU runs on bfloat16 or float16 tensors")
        self.dtype = dtype
        self.buffers = dict(buffers or {})
        self.params = dict(params or {})
        self.scale = scale
        self.variant = _variant(score_mod, mask_mod, [_buffer_decl(n, b) for n, b in self.buffers.items()],
                                [_param_decl(n, p) for n, p in self.params.items()], _DTYPES[dtype], D, Dv)
        if block_mask_ is not None:
            if (block_mask_.mask_mod or "").strip() != (mask_mod or "").strip():
                raise UsageError(f"block_mask was built for mask_mod {block_mask_.mask_mod!r} but attention got "
                                 f"mask_mod {mask_mod!r}: build the block mask from the same expression")
            if block_mask_.device != "cuda":
                raise UsageError("block_mask was built on the CPU: build it with device='cuda' for GPU attention")
        elif mask_mod:
            # Without tables every tile is visited (correct, slower): build them, as FlexAttention
            # users do with create_block_mask.
            block_mask_ = _auto_block_mask(mask_mod, self.buffers, self.params, (B, Hq, Sq, Skv),
                                           _tensors.current_stream(q))
        self.block_mask = block_mask_

    def _device(self, x):
        if _tensors.framework(x) == "torch":
            import torch
            return torch.cuda.device(x.device)
        import contextlib
        return contextlib.nullcontext()

    def forward(self, q, k, v):
        B, Hq, Sq, D, Hkv, Skv, Dv = self.sizes
        with self._device(q):
            stream = _tensors.current_stream(q)
            out = _tensors.empty_like(q, (B, Hq, Sq, Dv), self.dtype)
            lse = _tensors.empty_like(q, (B, Hq, Sq), "float32")
            ds = [_tensors.describe(x, n, stream) for x, n in ((q, "q"), (k, "k"), (v, "v"), (out, "out"), (lse, "lse"))]
            options = _Options(self.buffers, self.params, self.scale, stream)
            mask = self.block_mask._handle if self.block_mask is not None else None
            _lib.check(_lib.lib().flexjit_forward(self.variant.handle, *[d.pointer for d in ds], mask,
                                                  ctypes.c_void_p(stream), options.pointer))
        return out, lse

    def backward(self, q, k, v, out, lse, dout):
        with self._device(q):
            stream = _tensors.current_stream(q)
            dq = _tensors.empty_like(q, _tensors.shape_of(q), self.dtype)
            dk = _tensors.empty_like(q, _tensors.shape_of(k), self.dtype)
            dv = _tensors.empty_like(q, _tensors.shape_of(v), self.dtype)
            ds = [_tensors.describe(x, n, stream) for x, n in ((q, "q"), (k, "k"), (v, "v"), (out, "out"),
                                                               (lse, "lse"), (dout, "dout"), (dq, "dq"), (dk, "dk"),
                                                               (dv, "dv"))]
            options = _Options(self.buffers, self.params, self.scale, stream)
            mask = self.block_mask._handle if self.block_mask is not None else None
            _lib.check(_lib.lib().flexjit_backward(self.variant.handle, *[d.pointer for d in ds], mask,
                                                   ctypes.c_void_p(stream), options.pointer))
        return dq, dk, dv


_auto_masks = collections.OrderedDict()
_MAX_AUTO_MASKS = 32


def _auto_block_mask(mask_mod, buffers, params, sizes, stream):
    # Masks that read no buffer depend only on the expression, the sizes and the parameters: kept.
    # A mask reading buffers is rebuilt per call (the buffers' contents may change under the same
    # pointer) and lives as long as the call's outputs / autograd context.
    if buffers:
        return block_mask(mask_mod, *sizes, buffers=buffers, params=params, device="cuda", stream=stream)
    key = (mask_mod, sizes, tuple(sorted((n, float(p)) for n, p in params.items())), _current_device_key())
    with _variants_lock:
        found = _auto_masks.get(key)
        if found is not None:
            _auto_masks.move_to_end(key)
            return found
    mask = block_mask(mask_mod, *sizes, params=params, device="cuda", stream=stream)
    with _variants_lock:
        _auto_masks[key] = mask
        while len(_auto_masks) > _MAX_AUTO_MASKS:
            _auto_masks.popitem(last=False)
    return mask


def _current_device_key():
    import sys
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_available():
        return torch.cuda.current_device()
    return 0


def attention(q, k, v, score_mod=None, mask_mod=None, buffers=None, params=None, block_mask=None, return_lse=False,
              scale=None):
    """Attention with a score_mod and a mask_mod given as flexjit expressions.

    q [B, Hq, S, D], k [B, Hkv, Skv, D], v [B, Hkv, Skv, Dv] (Hkv divides Hq: GQA). On a CUDA
    device (PyTorch, CuPy, JAX; bfloat16 or float16) the JIT kernels run on the framework's
    current stream and, for PyTorch tensors that require grad, the result is differentiable. On
    the host (NumPy arrays, CPU tensors; float16/32/64) the float64 CPU reference runs and the
    result is float32 (float64 for float64 inputs).

    `buffers` maps names the expressions index to arrays on the same device; `params` maps names
    to int / float values (a new value never recompiles). `block_mask` (flexjit.block_mask with
    the same mask_mod) lists the blocks to visit; without one it is built for the call. `scale`
    multiplies q·kᵀ before score_mod (default 1/sqrt(D)). The CPU reference evaluates mask_mod
    everywhere and ignores `block_mask`. Returns out, or (out, lse) with
    `return_lse` (natural-log log-sum-exp, float32, -inf for fully masked rows).
    """
    if block_mask is not None and not isinstance(block_mask, BlockMask):
        raise UsageError(f"block_mask is a {type(block_mask).__name__}: pass a flexjit.BlockMask (flexjit.block_mask(...))")
    if _tensors.is_gpu(q):
        call = _GpuCall(q, k, v, score_mod, mask_mod, buffers, params, block_mask, scale)
        if _tensors.framework(q) == "torch":
            from . import _torch
            out, lse = _torch.apply(call, q, k, v)
        else:
            out, lse = call.forward(q, k, v)
            out, lse = _tensors.finish(q, out), _tensors.finish(q, lse)
        return (out, lse) if return_lse else out
    if _tensors.framework(q) == "torch":
        from . import _torch
        out, lse = _torch.apply_cpu(q, k, v, score_mod, mask_mod, buffers, params, scale)
    else:
        out, lse = _reference_forward(q, k, v, score_mod, mask_mod, buffers, params, scale)
    return (out, lse) if return_lse else out


def _host_variant(score_mod, mask_mod, buffers, params):
    return _variant(score_mod, mask_mod, [_buffer_decl(n, b) for n, b in (buffers or {}).items()],
                    [_param_decl(n, p) for n, p in (params or {}).items()])


def _host_out_dtype(q):
    return "float64" if _tensors.dtype_name(q) == "float64" else "float32"


def _reference_forward(q, k, v, score_mod, mask_mod, buffers, params, scale):
    B, Hq, Sq, D, Hkv, Skv, Dv = _check_qkv(q, k, v)
    variant = _host_variant(score_mod, mask_mod, buffers, params)
    out_dtype = _host_out_dtype(q)
    out = _tensors.empty_like(q, (B, Hq, Sq, Dv), out_dtype)
    lse = _tensors.empty_like(q, (B, Hq, Sq), out_dtype)
    ds = [_tensors.describe(x, n) for x, n in ((q, "q"), (k, "k"), (v, "v"), (out, "out"), (lse, "lse"))]
    options = _Options(buffers, params, scale)
    _lib.check(_lib.lib().flexjit_reference_forward(variant.handle, *[d.pointer for d in ds], options.pointer))
    return out, lse


def reference_backward(q, k, v, dout, score_mod=None, mask_mod=None, buffers=None, params=None, scale=None):
    """Gradients (dq, dk, dv) of sum(attention(q, k, v) * dout) from the float64 CPU reference, on
    host arrays (NumPy or CPU tensors); float32 results (float64 for float64 inputs)."""
    _check_qkv(q, k, v)
    variant = _host_variant(score_mod, mask_mod, buffers, params)
    out_dtype = _host_out_dtype(q)
    grads = [_tensors.empty_like(q, _tensors.shape_of(x), out_dtype) for x in (q, k, v)]
    ds = [_tensors.describe(x, n) for x, n in ((q, "q"), (k, "k"), (v, "v"), (dout, "dout"), (grads[0], "dq"),
                                               (grads[1], "dk"), (grads[2], "dv"))]
    options = _Options(buffers, params, scale)
    _lib.check(_lib.lib().flexjit_reference_backward(variant.handle, *[d.pointer for d in ds], options.pointer))
    return tuple(grads)


# ---- kernels and caches -------------------------------------------------------------------------

def emit(score_mod=None, mask_mod=None, family="fwd", format="cu", arch="sm_90a", dtype="bfloat16", head_dim=128,
         head_dim_v=None, buffers=None, params=None, config=None, gqa_group=1, divisible=False, block_mask=True,
         q_block=128, kv_block=128):
    """The kernel of one family ("fwd", "bwd_preprocess", "bwd_dq", "bwd_dkdv", "block_mask") for
    these expressions: "cu" (self-contained CUDA source), "ptx", "context" (the template context,
    JSON) as str, or "cubin" as bytes. Needs no GPU (NVRTC compiles for `arch`). `buffers` and
    `params` are declarations, as for `check`."""
    if dtype not in ("bfloat16", "bf16", "float16", "f16", "half"):
        raise UsageError(f"dtype={dtype!r}: kernels run on bfloat16 or float16")
    variant = _variant(score_mod, mask_mod, [_buffer_decl(n, b) for n, b in (buffers or {}).items()],
                       [_param_decl(n, p) for n, p in (params or {}).items()], _DTYPES[dtype], head_dim,
                       head_dim_v or 0)
    options = _lib.EmitOptions.new(family=family.encode(), format=format.encode(), arch=arch.encode() if arch else None,
                                   config=config.encode() if config else None, gqa_group=gqa_group,
                                   divisible=bool(divisible), no_block_mask=not block_mask, q_block=q_block,
                                   kv_block=kv_block)
    data, size = ctypes.c_void_p(), ctypes.c_size_t()
    lib = _lib.lib()
    _lib.check(lib.flexjit_emit(variant.handle, ctypes.byref(options), ctypes.byref(data), ctypes.byref(size)))
    try:
        raw = ctypes.string_at(data, size.value)
    finally:
        lib.flexjit_free(data)
    return raw if format == "cubin" else raw.decode("utf-8", "replace")


def warm_up(batch, q_heads, kv_heads, q_len, kv_len, score_mod=None, mask_mod=None, dtype="bfloat16", head_dim=128,
            head_dim_v=None, buffers=None, params=None, backward=True, arch=None, jobs=0):
    """Compiles every kernel a call of this size needs into the disk cache (no GPU needed when
    `arch` is given). Returns (kernels, already_cached)."""
    variant = _variant(score_mod, mask_mod, [_buffer_decl(n, b) for n, b in (buffers or {}).items()],
                       [_param_decl(n, p) for n, p in (params or {}).items()], _DTYPES[dtype], head_dim,
                       head_dim_v or 0)
    size = _lib.ProblemSize.new(batch=batch, q_heads=q_heads, kv_heads=kv_heads, q_len=q_len, kv_len=kv_len)
    kernels, cached = ctypes.c_size_t(), ctypes.c_size_t()
    _lib.check(_lib.lib().flexjit_warm_up(variant.handle, ctypes.byref(size), int(bool(backward)),
                                          arch.encode() if arch else None, jobs, ctypes.byref(kernels),
                                          ctypes.byref(cached)))
    return kernels.value, cached.value


def tune(batch, q_heads, kv_heads, q_len, kv_len, score_mod=None, mask_mod=None, dtype="bfloat16", head_dim=128,
         head_dim_v=None, buffers=None, params=None, backward=True, stream=None):
    """Autotunes the block configs of this problem size on the GPU (FLEXJIT_AUTOTUNE says how much) and
    keeps the result in the autotune cache, so that later calls of a matching size start tuned.
    Runs forward (and backward) once on random inputs it allocates; `buffers` are device arrays.
    Synchronises."""
    buffers = buffers or {}
    variant = _variant(score_mod, mask_mod, [_buffer_decl(n, b) for n, b in buffers.items()],
                       [_param_decl(n, p) for n, p in (params or {}).items()], _DTYPES[dtype], head_dim,
                       head_dim_v or 0)
    if stream is None:
        stream = next((_tensors.current_stream(b) for b in buffers.values()), None)
        if stream is None:
            stream = _torch_current_stream()
    options = _Options(buffers, params, None, stream)
    size = _lib.ProblemSize.new(batch=batch, q_heads=q_heads, kv_heads=kv_heads, q_len=q_len, kv_len=kv_len)
    _lib.check(_lib.lib().flexjit_tune(variant.handle, ctypes.byref(size), int(bool(backward)), options.pointer,
                                       ctypes.c_void_p(stream or 0)))
