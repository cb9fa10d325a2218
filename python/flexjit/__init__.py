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
import struct
import threading

from . import _lib, _tensors
from .errors import (CacheError, CompileError, DriverError, ExprError, FlexjitError, InternalError, LibraryNotFound,
                     ShapeError, TemplateError, UsageError)

__all__ = ["attention", "decode", "reference_decode", "block_mask", "check", "emit", "reference_backward", "warm_up",
           "tune", "gpu_available",
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

def _buffer_decl(name, value, learnable=False):
    """(name, flexjit dtype, shape, flags) from an array, or from a (dtype, shape) pair."""
    if isinstance(value, tuple) and len(value) == 2 and isinstance(value[0], str):
        dtype, shape = value
    else:
        dtype, shape = _tensors.dtype_name(value), _tensors.shape_of(value)
    if dtype not in _DTYPES:
        raise ShapeError(f"buffer '{name}' has dtype {dtype}: buffers are float16, bfloat16, float32, int32 or uint8")
    return (str(name), _DTYPES[dtype], tuple(int(e) for e in shape), _lib.BUFFER_LEARNABLE if learnable else 0)


def _learnable_names(buffers, learnable, from_requires_grad=True):
    """The names of the learnable buffers: those listed in `learnable` (each must be in `buffers`)
    and, with `from_requires_grad`, the PyTorch tensors in `buffers` that require grad."""
    buffers = buffers or {}
    if isinstance(learnable, str):
        learnable = [learnable]
    names = set()
    for name in learnable or ():
        if name not in buffers:
            given = ", ".join(f"'{n}'" for n in buffers) or "none"
            raise UsageError(f"learnable names '{name}', which is not in buffers (given: {given}): pass its value in "
                             "buffers")
        names.add(str(name))
    if from_requires_grad:
        names.update(str(n) for n, b in buffers.items() if getattr(b, "requires_grad", False))
    return names


def _buffer_decls(buffers, learnable=()):
    return [_buffer_decl(n, b, str(n) in learnable) for n, b in (buffers or {}).items()]


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
          configs=(None, None, None), keep=None, decode_config=None):
    """A flexjit_variant_desc; `keep` collects the ctypes objects it points into."""
    buffers = (_lib.BufferDecl * max(len(buffer_decls), 1))()
    for i, (name, dt, shape, flags) in enumerate(buffer_decls):
        extents = _lib.int_array(ctypes.c_int64, shape, f"buffer '{name}' shape")
        keep.append(extents)
        buffers[i] = _lib.BufferDecl(name.encode(), dt, len(shape), extents, flags)
    params = (_lib.ParamDecl * max(len(param_decls), 1))()
    for i, (name, kind) in enumerate(param_decls):
        params[i] = _lib.ParamDecl(name.encode(), kind)
    keep.extend([buffers, params])
    encode = lambda s: s.encode() if s else None  # noqa: E731
    return _lib.VariantDesc.new(score_mod=encode(score_mod), mask_mod=encode(mask_mod), buffers=buffers,
                                num_buffers=len(buffer_decls), params=params, num_params=len(param_decls),
                                dtype=dtype, head_dim=head_dim, head_dim_v=head_dim_v, arch=encode(arch),
                                fwd_config=encode(configs[0]), bwd_dq_config=encode(configs[1]),
                                bwd_dkdv_config=encode(configs[2]), decode_config=encode(decode_config))


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
             configs=(None, None, None), decode_config=None):
    key = (score_mod or "", mask_mod or "", tuple(buffer_decls), tuple(param_decls), dtype, head_dim, head_dim_v,
           arch or "", tuple(configs), decode_config or "")
    with _variants_lock:
        found = _variants.get(key)
        if found is not None:
            _variants.move_to_end(key)
            return found
    keep = []
    variant = _Variant(key, _desc(score_mod, mask_mod, buffer_decls, param_decls, dtype, head_dim, head_dim_v, arch,
                                  configs, keep, decode_config))
    with _variants_lock:
        _variants[key] = variant
        while len(_variants) > _MAX_VARIANTS:
            _variants.popitem(last=False)
    return variant


class _Options:
    """flexjit_call_options for a call, with the DLTensors it points to kept alive."""

    def __init__(self, buffers, params, scale, stream=None, grads=None, backward_mode=None, lens=None):
        self.keep = []
        glist = list((grads or {}).items())
        gvalues = (_lib.BufferValue * max(len(glist), 1))()
        for i, (name, array) in enumerate(glist):
            described = _tensors.describe(array, f"the gradient of buffer '{name}'", stream)
            self.keep.append(described)
            gvalues[i] = _lib.BufferValue(str(name).encode(), described.pointer)
        self.keep.append(gvalues)
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
                                           scale=float(scale) if scale is not None else 0.0, buffer_grads=gvalues,
                                           num_buffer_grads=len(glist),
                                           backward_mode=_lib.BACKWARD_MODES[backward_mode])
        if lens is not None:
            lens.fill(self, stream)

    @property
    def pointer(self):
        return ctypes.byref(self.struct)

    @property
    def address(self):
        return ctypes.addressof(self.struct)


def _any_given(*values):
    return any(x is not None for x in values)


class _Lengths:
    """Per-sequence lengths of a padded batch (the C API's q_lens / kv_lens and host copies):
    [B] int32 arrays on the call's device (host arrays for the CPU reference), either may be None
    (every sequence has the padded length), and optional host copies checked by the library."""

    def __init__(self, q_lens, kv_lens, host_q_lens, host_kv_lens, batch, like):
        for name, x in (("q_lens", q_lens), ("kv_lens", kv_lens)):
            if x is None:
                continue
            if _tensors.framework(x) != _tensors.framework(like) or _tensors.is_gpu(x) != _tensors.is_gpu(like):
                where = "on the GPU" if _tensors.is_gpu(like) else "on the host"
                raise UsageError(f"{name} is a {type(x).__name__} and q a {type(like).__name__} {where}: pass the "
                                 f"lengths as a [B] int32 array of q's kind, on q's device")
            if _tensors.dtype_name(x) != "int32" or _tensors.shape_of(x) != (batch,):
                raise ShapeError(f"{name} has dtype {_tensors.dtype_name(x)} and shape {_tensors.shape_of(x)}: "
                                 f"it is [B] = [{batch}] int32")
        if not _tensors.is_gpu(like) and (host_q_lens is not None or host_kv_lens is not None):
            raise UsageError("host_q_lens and host_kv_lens are for GPU calls; the CPU reference reads q_lens and "
                             "kv_lens themselves")
        if host_q_lens is not None and q_lens is None:
            raise UsageError("host_q_lens is given but q_lens is not: pass both or neither")
        if host_kv_lens is not None and kv_lens is None:
            raise UsageError("host_kv_lens is given but kv_lens is not: pass both or neither")
        self.q_lens, self.kv_lens = q_lens, kv_lens
        self.host_q = _int32_array(host_q_lens, "host_q_lens", batch) if host_q_lens is not None else None
        self.host_kv = _int32_array(host_kv_lens, "host_kv_lens", batch) if host_kv_lens is not None else None

    def fill(self, options, stream):
        """Points `options.struct` (an _Options) at the lengths, kept alive by it."""
        for field, x in (("q_lens", self.q_lens), ("kv_lens", self.kv_lens)):
            if x is not None:
                described = _tensors.describe(x, field, stream)
                options.keep.append(described)
                setattr(options.struct, field, described.pointer)
        int_pointer = ctypes.POINTER(ctypes.c_int32)
        for field, host in (("host_q_lens", self.host_q), ("host_kv_lens", self.host_kv)):
            if host is not None:
                options.keep.append(host)
                setattr(options.struct, field, ctypes.cast(host, int_pointer))


_plain_options = {}  # (scale, backward_mode) -> _Options without buffers, params or gradients


def _call_options(buffers, params, scale, stream=None, grads=None, backward_mode=None, lens=None):
    """The call's options; those without buffers, params, gradients or lengths are built once and
    shared (the C API only reads them), which takes their construction off every call of a plain mod."""
    if buffers or params or grads or lens is not None:
        return _Options(buffers, params, scale, stream, grads, backward_mode, lens)
    key = (None if scale is None else float(scale), backward_mode)
    options = _plain_options.get(key)
    if options is None:
        options = _Options(None, None, scale, None, None, backward_mode)
        if len(_plain_options) < 256:
            _plain_options[key] = options
    return options


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
        self._storage = None  # a PyTorch tensor holding the tables, where block_mask() made one
        self._per_call = False  # built for one call: lives as long as that call's outputs

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
               kv_block=128, stream=None, q_lens=None, kv_lens=None, host_q_lens=None, host_kv_lens=None):
    """Builds the block mask of `mask_mod` for [batch, q_heads, q_len, kv_len] problems. `device`
    "cuda" builds it with a JIT kernel on `stream` (default: PyTorch's / CuPy's current stream),
    "cpu" with the interpreter (buffers then are host arrays); default: "cuda" when any buffer is
    on a GPU or a GPU is present, else "cpu". With PyTorch on the GPU and the build on its current
    stream, the tables live in PyTorch's caching allocator: the build captures into CUDA graphs and
    dropping the mask does not wait for the device. `q_lens` / `kv_lens` (GPU only: [B] int32 on
    the device, as `attention` takes them) build it for a padded batch with those per-sequence
    lengths: calls then pass the same length arrays."""
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
    lens = None
    if _any_given(q_lens, kv_lens, host_q_lens, host_kv_lens):
        if device != "cuda":
            raise UsageError("block masks with per-sequence lengths are built on the GPU: pass device='cuda' and "
                             "q_lens / kv_lens on it")
        like = q_lens if q_lens is not None else kv_lens
        if like is None:
            raise UsageError("host_q_lens / host_kv_lens are given without q_lens / kv_lens: pass the device arrays")
        lens = _Lengths(q_lens, kv_lens, host_q_lens, host_kv_lens, batch, like)
        if stream is None:
            stream = _tensors.current_stream(like)
    options = _call_options(buffers, params, None, stream, lens=lens)
    desc = _lib.BlockMaskDesc.new(batch=batch, q_heads=q_heads, q_len=q_len, kv_len=kv_len, q_block=q_block,
                                  kv_block=kv_block, device=_lib.MASK_GPU if device == "cuda" else _lib.MASK_CPU)
    storage = _torch_table_storage(variant, desc, options, buffers, stream) if device == "cuda" else None
    if storage is not None:
        desc.storage, desc.storage_bytes = storage.data_ptr(), storage.numel()
    handle = ctypes.c_void_p()
    _lib.check(_lib.lib().flexjit_block_mask_create(variant.handle, ctypes.byref(desc), options.pointer,
                                                    ctypes.c_void_p(stream or 0), ctypes.byref(handle)))
    mask = BlockMask(variant, handle, mask_mod, (batch, q_heads, q_len, kv_len), device)
    mask._storage = storage  # dropped after the handle (BlockMask.__del__ runs first)
    return mask


_storage_bytes = {}  # (variant key, sizes, blocks) -> bytes of a GPU mask's tables


def _torch_table_storage(variant, desc, options, buffers, stream):
    """A GPU mask's table memory from PyTorch's caching allocator when PyTorch drives the GPU and
    the mask is built on its current stream: the build then allocates nothing (it can be captured
    into a CUDA graph) and dropping the mask returns the memory to the allocator in stream order
    instead of waiting for the device in cuMemFree. None otherwise (the library allocates)."""
    import sys
    torch = sys.modules.get("torch")
    if torch is None or not torch.cuda.is_available() or not torch.cuda.is_initialized():
        return None
    device = next((b.device for b in buffers.values() if _tensors.framework(b) == "torch" and b.device.type == "cuda"),
                  None)
    if device is None:
        device = torch.device("cuda", torch.cuda.current_device())
    if (stream or 0) != _tensors.torch_stream(torch, device):
        return None  # the allocator orders its memory by the current stream; the build runs elsewhere
    key = (variant.key, desc.batch, desc.q_heads, desc.q_len, desc.kv_len, desc.q_block, desc.kv_block)
    nbytes = _storage_bytes.get(key)
    if nbytes is None:
        size = ctypes.c_size_t()
        _lib.check(_lib.lib().flexjit_block_mask_storage_bytes(variant.handle, ctypes.byref(desc), options.pointer,
                                                               ctypes.byref(size)))
        nbytes = size.value
        if len(_storage_bytes) < 4096:
            _storage_bytes[key] = nbytes
    return torch.empty(max(nbytes, 1), dtype=torch.uint8, device=device)


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

    def __init__(self, q, k, v, score_mod, mask_mod, buffers, params, block_mask_, scale, learnable=None,
                 backward_mode=None, lens=None):
        self.sizes = _check_qkv(q, k, v)
        self.lens = lens
        self.backward_mode = backward_mode
        B, Hq, Sq, D, Hkv, Skv, Dv = self.sizes
        dtype = _tensors.dtype_name(q)
        if dtype not in ("bfloat16", "float16"):
            raise ShapeError(f"q has dtype {dtype}: attention on the GPU runs on bfloat16 or float16 tensors")
        self.dtype = dtype
        self.buffers = dict(buffers or {})
        self.params = dict(params or {})
        self.scale = scale
        self.learnable = _learnable_names(self.buffers, learnable)
        self.variant = _variant(score_mod, mask_mod, _buffer_decls(self.buffers, self.learnable),
                                [_param_decl(n, p) for n, p in self.params.items()], _DTYPES[dtype], D, Dv)
        if block_mask_ is not None:
            if (block_mask_.mask_mod or "").strip() != (mask_mod or "").strip():
                raise UsageError(f"block_mask was built for mask_mod {block_mask_.mask_mod!r} but attention got "
                                 f"mask_mod {mask_mod!r}: build the block mask from the same expression")
            if block_mask_.device != "cuda":
                raise UsageError("block_mask was built on the CPU: build it with device='cuda' for GPU attention")
        elif mask_mod and lens is not None:
            # Tables built with this call's lengths (they serve calls with the same arrays only).
            block_mask_ = block_mask(mask_mod, B, Hq, Sq, Skv, buffers=self.buffers, params=self.params, device="cuda",
                                     stream=_tensors.current_stream(q), q_lens=lens.q_lens, kv_lens=lens.kv_lens)
            block_mask_._per_call = True
        elif mask_mod:
            # Without tables every tile is visited (correct, slower): build them, as FlexAttention
            # users do with create_block_mask.
            block_mask_ = _auto_block_mask(mask_mod, self.buffers, self.params, (B, Hq, Sq, Skv),
                                           _tensors.current_stream(q))
        self.block_mask = block_mask_

    def forward(self, q, k, v):
        B, Hq, Sq, D, Hkv, Skv, Dv = self.sizes
        with _tensors.device_scope(q):
            stream = _tensors.current_stream(q)
            out = _tensors.empty_like(q, (B, Hq, Sq, Dv), self.dtype)
            lse = _tensors.empty_like(q, (B, Hq, Sq), "float32")
            block = _tensors.Block([(q, "q"), (k, "k"), (v, "v"), (out, "out"), (lse, "lse")], stream)
            options = _call_options(self.buffers, self.params, self.scale, stream, lens=self.lens)
            mask = self.block_mask._handle if self.block_mask is not None else None
            _lib.check(_lib.raw("flexjit_forward")(self.variant.handle, *block.addresses, mask, stream,
                                                   options.address))
        return out, lse

    def backward(self, q, k, v, out, lse, dout):
        with _tensors.device_scope(q):
            stream = _tensors.current_stream(q)
            dq = _tensors.empty_like(q, _tensors.shape_of(q), self.dtype)
            dk = _tensors.empty_like(q, _tensors.shape_of(k), self.dtype)
            dv = _tensors.empty_like(q, _tensors.shape_of(v), self.dtype)
            block = _tensors.Block([(q, "q"), (k, "k"), (v, "v"), (out, "out"), (lse, "lse"), (dout, "dout"),
                                    (dq, "dq"), (dk, "dk"), (dv, "dv")], stream)
            grads = {n: _tensors.empty_like(q, _tensors.shape_of(self.buffers[n]), "float32")
                     for n in sorted(self.learnable)}
            options = _call_options(self.buffers, self.params, self.scale, stream, grads, self.backward_mode,
                                    self.lens)
            mask = self.block_mask._handle if self.block_mask is not None else None
            _lib.check(_lib.raw("flexjit_backward")(self.variant.handle, *block.addresses, mask, stream,
                                                    options.address))
        return dq, dk, dv, grads


_auto_masks = collections.OrderedDict()
_MAX_AUTO_MASKS = 32


def _capturing():
    """True while PyTorch captures the current stream into a CUDA graph."""
    import sys
    torch = sys.modules.get("torch")
    return torch is not None and torch.cuda.is_available() and torch.cuda.is_current_stream_capturing()


def _auto_block_mask(mask_mod, buffers, params, sizes, stream):
    # Masks that read no buffer depend only on the expression, the sizes and the parameters: kept.
    # A mask reading buffers is rebuilt per call (the buffers' contents may change under the same
    # pointer) and lives as long as the call's outputs / autograd context. So is one built while a
    # CUDA graph is captured (a kept one, built outside any capture, is used as it is): its tables
    # are written only when the graph replays, so keeping it would hand later calls tables never
    # written.
    def per_call():
        mask = block_mask(mask_mod, *sizes, buffers=buffers, params=params, device="cuda", stream=stream)
        mask._per_call = True
        return mask

    if buffers:
        return per_call()
    key = (mask_mod, sizes, tuple(sorted((n, float(p)) for n, p in params.items())), _current_device_key())
    with _variants_lock:
        found = _auto_masks.get(key)
        if found is not None:
            _auto_masks.move_to_end(key)
            return found
    if _capturing():
        return per_call()
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
              scale=None, learnable=None, backward_mode=None, q_lens=None, kv_lens=None, host_q_lens=None,
              host_kv_lens=None):
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

    Learnable buffers: the buffers named in `learnable`, and PyTorch tensors in `buffers` that
    require grad, get d(loss)/d(buffer) through autograd (`.grad` after `loss.backward()`), from
    the deterministic GPU backward or the CPU reference. They must be float buffers read by
    score_mod.

    `backward_mode` ("deterministic", "fast" or None: FLEXJIT_DETERMINISTIC decides, fast unless
    it is 1) picks how the GPU backward sums dQ: a separate dQ kernel, the same bits every
    run, or (sm_90a, head dims up to 128 and, on 256-column tiles, to 256; no learnable buffers) atomic adds
    in the dK/dV kernel.

    Padded batches: `q_lens` / `kv_lens` ([B] int32 arrays of q's kind, on its device; either may
    be None for the padded length) give sequence b q_lens[b] query rows and kv_lens[b] keys. In
    the mods `q_len` / `kv_len` are that sequence's; nothing in the padding reaches a result; on
    the GPU the output rows past a sequence's queries are not written (the CPU reference writes 0
    and lse -inf there); gradients past the lengths are zero. `host_q_lens` / `host_kv_lens` (GPU:
    host copies of the same values) get them checked with named errors. Not combined with
    learnable buffers. A `block_mask` for such calls is built with the same arrays.
    """
    if backward_mode not in _lib.BACKWARD_MODES:
        raise UsageError(f"backward_mode is {backward_mode!r}: pass 'deterministic', 'fast' or None")
    if block_mask is not None and not isinstance(block_mask, BlockMask):
        raise UsageError(f"block_mask is a {type(block_mask).__name__}: pass a flexjit.BlockMask (flexjit.block_mask(...))")
    if learnable and _tensors.framework(q) != "torch":
        raise UsageError(f"learnable buffers get their gradients through PyTorch autograd, and q is a "
                         f"{type(q).__name__}: pass torch tensors, or call flexjit.reference_backward(..., "
                         "learnable=...) on host arrays")
    lens = None
    if _any_given(q_lens, kv_lens, host_q_lens, host_kv_lens):
        lens = _Lengths(q_lens, kv_lens, host_q_lens, host_kv_lens, _check_qkv(q, k, v)[0], q)
    if _tensors.is_gpu(q):
        call = _GpuCall(q, k, v, score_mod, mask_mod, buffers, params, block_mask, scale, learnable, backward_mode,
                        lens)
        if _tensors.framework(q) == "torch":
            from . import _torch
            out, lse = _torch.apply(call, q, k, v)
        else:
            out, lse = call.forward(q, k, v)
            out, lse = _tensors.finish(q, out), _tensors.finish(q, lse)
        return (out, lse) if return_lse else out
    if _tensors.framework(q) == "torch":
        from . import _torch
        out, lse = _torch.apply_cpu(q, k, v, score_mod, mask_mod, buffers, params, scale,
                                    _learnable_names(buffers, learnable), lens)
    else:
        out, lse = _reference_forward(q, k, v, score_mod, mask_mod, buffers, params, scale, lens)
    return (out, lse) if return_lse else out


def _host_variant(score_mod, mask_mod, buffers, params):
    return _variant(score_mod, mask_mod, [_buffer_decl(n, b) for n, b in (buffers or {}).items()],
                    [_param_decl(n, p) for n, p in (params or {}).items()])


def _host_out_dtype(q):
    return "float64" if _tensors.dtype_name(q) == "float64" else "float32"


def _reference_forward(q, k, v, score_mod, mask_mod, buffers, params, scale, lens=None):
    B, Hq, Sq, D, Hkv, Skv, Dv = _check_qkv(q, k, v)
    variant = _host_variant(score_mod, mask_mod, buffers, params)
    out_dtype = _host_out_dtype(q)
    out = _tensors.empty_like(q, (B, Hq, Sq, Dv), out_dtype)
    lse = _tensors.empty_like(q, (B, Hq, Sq), out_dtype)
    ds = [_tensors.describe(x, n) for x, n in ((q, "q"), (k, "k"), (v, "v"), (out, "out"), (lse, "lse"))]
    options = _call_options(buffers, params, scale, lens=lens)
    _lib.check(_lib.lib().flexjit_reference_forward(variant.handle, *[d.pointer for d in ds], options.pointer))
    return out, lse


def reference_backward(q, k, v, dout, score_mod=None, mask_mod=None, buffers=None, params=None, scale=None,
                       learnable=None, q_lens=None, kv_lens=None):
    """Gradients (dq, dk, dv) of sum(attention(q, k, v) * dout) from the float64 CPU reference, on
    host arrays (NumPy or CPU tensors); float32 results (float64 for float64 inputs). With
    `learnable` (names of float buffers score_mod reads) it returns (dq, dk, dv, {name: d buffer}).
    `q_lens` / `kv_lens` ([B] int32 host arrays) as in `attention`."""
    B = _check_qkv(q, k, v)[0]
    lens = _Lengths(q_lens, kv_lens, None, None, B, q) if _any_given(q_lens, kv_lens) else None
    names = _learnable_names(buffers, learnable, from_requires_grad=False)
    variant = _variant(score_mod, mask_mod, _buffer_decls(buffers, names),
                       [_param_decl(n, p) for n, p in (params or {}).items()])
    out_dtype = _host_out_dtype(q)
    grads = [_tensors.empty_like(q, _tensors.shape_of(x), out_dtype) for x in (q, k, v)]
    ds = [_tensors.describe(x, n) for x, n in ((q, "q"), (k, "k"), (v, "v"), (dout, "dout"), (grads[0], "dq"),
                                               (grads[1], "dk"), (grads[2], "dv"))]
    buffer_grads = {n: _tensors.empty_like(q, _tensors.shape_of(buffers[n]), out_dtype) for n in sorted(names)}
    options = _call_options(buffers, params, scale, grads=buffer_grads, lens=lens)
    _lib.check(_lib.lib().flexjit_reference_backward(variant.handle, *[d.pointer for d in ds], options.pointer))
    return tuple(grads) + (buffer_grads,) if learnable else tuple(grads)


# ---- decoding -----------------------------------------------------------------------------------

def _int32_array(values, name, count):
    """`values` (a sequence, NumPy array or CPU tensor of integers) as a C int32 array, checked in
    one pass: a page table of thousands of entries costs microseconds, not one Python call each."""
    import numpy
    flat = numpy.asarray(values).reshape(-1)
    if flat.size != count:
        raise ShapeError(f"{name} holds {flat.size} values; expected {count}")
    if flat.dtype.kind not in "iu":
        raise ShapeError(f"{name} must hold integers, got dtype {flat.dtype}")
    if flat.size and flat.dtype != numpy.int32:
        outside = numpy.flatnonzero((flat < -2**31) | (flat > 2**31 - 1))
        if outside.size:
            i = int(outside[0])
            _lib.checked_int(int(flat[i]), ctypes.c_int32, f"{name}[{i}]")  # raises, naming the entry
    array = numpy.ascontiguousarray(flat, dtype=numpy.int32)
    return (ctypes.c_int32 * array.size).from_buffer_copy(array) if array.size else (ctypes.c_int32 * 1)()


class _DecodeArgsBlock:
    """flexjit_decode_args packed by hand (the DLTensors are a _tensors.Block's): struct_size, the
    seven tensor pointers (q, k, v, seq_lens, page_table, out, lse), the two host arrays and
    max_seq_len. `address` is valid while this object lives."""

    _layout = struct.Struct("=Q7Q2Qi4x")

    def __init__(self, tensor_addresses, host_lens, host_table, max_seq_len):
        self.keep = (host_lens, host_table)
        address = lambda a: ctypes.addressof(a) if a is not None else 0  # noqa: E731
        self.buffer = (ctypes.c_int64 * (self._layout.size // 8))()
        self._layout.pack_into(self.buffer, 0, self._layout.size, *tensor_addresses, address(host_lens),
                               address(host_table), max_seq_len)
        self.address = ctypes.addressof(self.buffer)


if _DecodeArgsBlock._layout.size != ctypes.sizeof(_lib.DecodeArgs):  # not an assert: python -O drops those
    raise ImportError("flexjit: the packed flexjit_decode_args layout no longer matches _lib.DecodeArgs")


def decode(q, k_cache, v_cache, seq_lens, page_table=None, score_mod=None, mask_mod=None, buffers=None, params=None,
           scale=None, return_lse=False, host_seq_lens=None, host_page_table=None, max_seq_len=0, config=None):
    """Decoding (and chunked prefill) against a KV cache with per-sequence lengths.

    q [B, Hq, Sq, D]: the last Sq positions of each sequence. The cache is contiguous,
    k_cache [B, Hkv, S, D] and v_cache [B, Hkv, S, Dv], or, with `page_table` [B, max_pages] int32,
    paged: [num_pages, page_size, Hkv, D(v)] pools. `seq_lens` [B] int32 holds each sequence's
    number of keys; in the mods `kv_len` is that length and `q_len` is Sq (write the causal mask as
    `q_idx + kv_len - q_len >= kv_idx` when Sq > 1). On a CUDA device (bfloat16 / float16) the
    decode kernel runs on the framework's current stream; `host_seq_lens` (and `host_page_table`),
    host copies of the same values, get the lengths checked with named errors and steer the split
    of the keys; `max_seq_len` bounds the lengths without them; `config` fixes the kernel's tiles.
    On the host (NumPy arrays, CPU tensors) the float64 reference runs. Returns out, or (out, lse).
    """
    arrays = [("q", q), ("k_cache", k_cache), ("v_cache", v_cache), ("seq_lens", seq_lens)]
    if page_table is not None:
        arrays.append(("page_table", page_table))
    kinds = {_tensors.framework(x) for _, x in arrays}
    if len(kinds) != 1:
        raise UsageError(f"q, k_cache, v_cache, seq_lens and page_table come from different frameworks "
                         f"({', '.join(sorted(kinds))}): pass one kind")
    for name, x in (("q", q), ("v_cache", v_cache)):
        if len(x.shape) != 4:
            layout = "[B, Hq, Sq, D]" if name == "q" else ("[num_pages, page_size, Hkv, Dv]" if page_table is not None
                                                           else "[B, Hkv, S, Dv]")
            raise ShapeError(f"{name} has shape {_tensors.shape_of(x)}: expected 4 dimensions {layout}")
    B, Hq, Sq, D = _tensors.shape_of(q)
    Dv = _tensors.shape_of(v_cache)[3]
    gpu = _tensors.is_gpu(q)
    decls = _buffer_decls(buffers)
    pdecls = [_param_decl(n, p) for n, p in (params or {}).items()]
    if gpu:
        dtype = _tensors.dtype_name(q)
        if dtype not in ("bfloat16", "float16"):
            raise ShapeError(f"q has dtype {dtype}: decoding on the GPU runs on bfloat16 or float16 tensors")
        variant = _variant(score_mod, mask_mod, decls, pdecls, _DTYPES[dtype], D, Dv, decode_config=config)
        out_dtype, lse_dtype = dtype, "float32"
    else:
        if host_seq_lens is not None or host_page_table is not None or max_seq_len:
            raise UsageError("host_seq_lens, host_page_table and max_seq_len are for GPU decoding; the CPU reference "
                             "reads seq_lens and page_table themselves")
        variant = _variant(score_mod, mask_mod, decls, pdecls)
        out_dtype = lse_dtype = _host_out_dtype(q)
    with _tensors.device_scope(q):
        stream = _tensors.current_stream(q) if gpu else None
        out = _tensors.empty_like(q, (B, Hq, Sq, Dv), out_dtype)
        lse = _tensors.empty_like(q, (B, Hq, Sq), lse_dtype)
        block = _tensors.Block([(q, "q"), (k_cache, "k_cache"), (v_cache, "v_cache"), (seq_lens, "seq_lens"),
                                (page_table, "page_table"), (out, "out"), (lse, "lse")], stream)
        host_lens = host_table = None
        if host_seq_lens is not None:
            host_lens = _int32_array(host_seq_lens, "host_seq_lens", B)
        if host_page_table is not None:
            if page_table is None:
                raise UsageError("host_page_table is given but page_table is not: pass both or neither")
            host_table = _int32_array(host_page_table, "host_page_table", B * int(page_table.shape[-1]))
        args = _DecodeArgsBlock(block.addresses, host_lens, host_table,
                                _lib.checked_int(int(max_seq_len), ctypes.c_int32, "DecodeArgs.max_seq_len"))
        options = _call_options(buffers, params, scale, stream)
        if gpu:
            _lib.check(_lib.raw("flexjit_decode")(variant.handle, args.address, stream, options.address))
        else:
            _lib.check(_lib.raw("flexjit_reference_decode")(variant.handle, args.address, options.address))
    if gpu:
        out, lse = _tensors.finish(q, out), _tensors.finish(q, lse)
    return (out, lse) if return_lse else out


def reference_decode(q, k_cache, v_cache, seq_lens, page_table=None, **kwargs):
    """`decode` on host arrays (the float64 CPU reference), named for symmetry with
    `reference_backward`; the arguments are those of `decode`."""
    for name, x in (("q", q), ("k_cache", k_cache), ("v_cache", v_cache)):
        if _tensors.is_gpu(x):
            raise UsageError(f"reference_decode runs on host arrays but {name} is on a GPU: use decode, or copy it "
                             "to the host")
    return decode(q, k_cache, v_cache, seq_lens, page_table, **kwargs)


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
    options = _call_options(buffers, params, None, stream)
    size = _lib.ProblemSize.new(batch=batch, q_heads=q_heads, kv_heads=kv_heads, q_len=q_len, kv_len=kv_len)
    _lib.check(_lib.lib().flexjit_tune(variant.handle, ctypes.byref(size), int(bool(backward)), options.pointer,
                                       ctypes.c_void_p(stream or 0)))
