"""ctypes declarations of include/flexjit/flexjit.h and the loaded library.

The structs mirror the header field for field (ctypes lays them out as the C compiler does). Each
versioned struct gets its `struct_size` from `new()`, so the library can tell which version of
the header the caller was written against.
"""
import ctypes
import ctypes.util
import os

from . import errors

C_API_VERSION = 1004  # FLEXJIT_C_API_VERSION this module was written against

# flexjit_dtype
BF16, F16, F32, I32, U8 = 0, 1, 2, 3, 4
# flexjit_scalar_type
SCALAR_INT, SCALAR_FLOAT = 0, 1
BUFFER_LEARNABLE = 1
# flexjit_mask_device
MASK_GPU, MASK_CPU = 0, 1
# DLDeviceType / DLDataTypeCode
kDLCPU, kDLCUDA, kDLCUDAHost, kDLCUDAManaged = 1, 2, 3, 13
kDLInt, kDLUInt, kDLFloat, kDLBfloat = 0, 1, 2, 4


_INT_TYPES = (ctypes.c_int8, ctypes.c_int16, ctypes.c_int32, ctypes.c_int64, ctypes.c_uint8, ctypes.c_uint16,
              ctypes.c_uint32, ctypes.c_uint64, ctypes.c_int, ctypes.c_uint, ctypes.c_long, ctypes.c_ulong,
              ctypes.c_longlong, ctypes.c_ulonglong, ctypes.c_size_t)


_INT_BOUNDS = {}  # ctype -> (lo, hi, signed, bits), computed once per type


def _int_bounds(ctype):
    bounds = _INT_BOUNDS.get(ctype)
    if bounds is None:
        bits = 8 * ctypes.sizeof(ctype)
        signed = ctype(-1).value < 0
        lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
        bounds = _INT_BOUNDS[ctype] = (lo, hi, signed, bits)
    return bounds


def checked_int(value, ctype, what):
    """`value` as an int that `ctype` holds exactly; ValueError naming `what` otherwise (ctypes
    itself would keep the low bits and pass another number to C)."""
    import operator
    try:
        number = operator.index(value)
    except TypeError:
        raise TypeError(f"{what} must be an integer, got {type(value).__name__} {value!r}") from None
    lo, hi, signed, bits = _int_bounds(ctype)
    if not lo <= number <= hi:
        raise ValueError(f"{what} = {number} does not fit in a {'signed' if signed else 'unsigned'} {bits}-bit integer "
                         f"({lo} to {hi})")
    return number


def checked_text(value, what):
    """`value` (str or bytes) as bytes for a C string; a NUL inside would silently cut it short."""
    data = value.encode() if isinstance(value, str) else value
    if not isinstance(data, bytes):
        raise TypeError(f"{what} must be a str, got {type(value).__name__}")
    nul = data.find(b"\0")
    if nul >= 0:
        raise ValueError(f"{what} contains a NUL character at index {nul}: a C string ends there")
    return data


def int_array(ctype, values, what):
    """A ctypes array of `values`, each checked to fit `ctype` (see checked_int)."""
    items = [checked_int(v, ctype, f"{what}[{i}]") for i, v in enumerate(values)]
    return (ctype * max(len(items), 1))(*items)


class _CheckedStructure(ctypes.Structure):
    """A ctypes struct whose integer fields refuse values they cannot hold and whose string fields
    refuse embedded NULs (plain ctypes truncates both silently)."""

    def __init__(self, *args, **fields):
        kinds = type(self).__dict__.get("_field_kinds")
        if kinds is None:  # per class, once: what each field is checked as
            kinds = {name: (ctype if ctype in _INT_TYPES else "text" if ctype is ctypes.c_char_p else None)
                     for name, ctype in ((f[0], f[1]) for f in self._fields_)}
            type(self)._field_kinds = kinds
            type(self)._field_names = [f[0] for f in self._fields_]
        checked = dict(zip(self._field_names, args)) if args else {}
        checked.update(fields)
        for name, value in checked.items():
            kind = kinds.get(name)
            if kind is None or value is None:
                continue
            if kind == "text":
                checked[name] = checked_text(value, f"{type(self).__name__}.{name}")
            else:
                lo, hi = _int_bounds(kind)[:2]
                if type(value) is not int or not lo <= value <= hi:  # plain in-range ints pass as they are
                    checked[name] = checked_int(value, kind, f"{type(self).__name__}.{name}")
        super().__init__(**checked)


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int), ("device_id", ctypes.c_int)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", DLDevice),
        ("ndim", ctypes.c_int),
        ("dtype", DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


class _Versioned(_CheckedStructure):
    @classmethod
    def new(cls, **fields):
        value = cls(**fields)
        value.struct_size = ctypes.sizeof(cls)
        return value


class BufferDecl(_CheckedStructure):
    _fields_ = [
        ("name", ctypes.c_char_p),
        ("dtype", ctypes.c_int),
        ("ndim", ctypes.c_int32),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("flags", ctypes.c_uint32),
    ]


class ParamDecl(_CheckedStructure):
    _fields_ = [("name", ctypes.c_char_p), ("type", ctypes.c_int)]


class VariantDesc(_Versioned):
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("score_mod", ctypes.c_char_p),
        ("mask_mod", ctypes.c_char_p),
        ("buffers", ctypes.POINTER(BufferDecl)),
        ("num_buffers", ctypes.c_size_t),
        ("params", ctypes.POINTER(ParamDecl)),
        ("num_params", ctypes.c_size_t),
        ("dtype", ctypes.c_int),
        ("head_dim", ctypes.c_int32),
        ("head_dim_v", ctypes.c_int32),
        ("arch", ctypes.c_char_p),
        ("fwd_config", ctypes.c_char_p),
        ("bwd_dq_config", ctypes.c_char_p),
        ("bwd_dkdv_config", ctypes.c_char_p),
        ("rows_guaranteed_safe", ctypes.c_int32),
        ("decode_config", ctypes.c_char_p),
    ]


class BufferValue(_CheckedStructure):
    _fields_ = [("name", ctypes.c_char_p), ("tensor", ctypes.POINTER(DLTensor))]


class ParamValue(_CheckedStructure):
    _fields_ = [
        ("name", ctypes.c_char_p),
        ("type", ctypes.c_int),
        ("int_value", ctypes.c_int64),
        ("float_value", ctypes.c_double),
    ]


class CallOptions(_Versioned):
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("buffers", ctypes.POINTER(BufferValue)),
        ("num_buffers", ctypes.c_size_t),
        ("params", ctypes.POINTER(ParamValue)),
        ("num_params", ctypes.c_size_t),
        ("has_scale", ctypes.c_int32),
        ("scale", ctypes.c_float),
        ("buffer_grads", ctypes.POINTER(BufferValue)),
        ("num_buffer_grads", ctypes.c_size_t),
        # since 1002 (set by _Lengths.fill for calls with per-sequence lengths)
        ("q_lens", ctypes.POINTER(DLTensor)),
        ("kv_lens", ctypes.POINTER(DLTensor)),
        ("host_q_lens", ctypes.POINTER(ctypes.c_int32)),
        ("host_kv_lens", ctypes.POINTER(ctypes.c_int32)),
        # since 1003
        ("backward_mode", ctypes.c_int32),
    ]


# flexjit_call_options.backward_mode
BACKWARD_MODES = {None: 0, "deterministic": 1, "fast": 2}


class DecodeArgs(_Versioned):
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("q", ctypes.POINTER(DLTensor)),
        ("k", ctypes.POINTER(DLTensor)),
        ("v", ctypes.POINTER(DLTensor)),
        ("seq_lens", ctypes.POINTER(DLTensor)),
        ("page_table", ctypes.POINTER(DLTensor)),
        ("out", ctypes.POINTER(DLTensor)),
        ("lse", ctypes.POINTER(DLTensor)),
        ("host_seq_lens", ctypes.POINTER(ctypes.c_int32)),
        ("host_page_table", ctypes.POINTER(ctypes.c_int32)),
        ("max_seq_len", ctypes.c_int32),
    ]


class CheckResult(_Versioned):
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("report", ctypes.c_void_p),
        ("score_canonical", ctypes.c_void_p),
        ("mask_canonical", ctypes.c_void_p),
        ("score_gradient", ctypes.c_void_p),
        ("cuda", ctypes.c_void_p),
    ]


class BlockMaskDesc(_Versioned):
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("batch", ctypes.c_int32),
        ("q_heads", ctypes.c_int32),
        ("q_len", ctypes.c_int32),
        ("kv_len", ctypes.c_int32),
        ("q_block", ctypes.c_int32),
        ("kv_block", ctypes.c_int32),
        ("device", ctypes.c_int),
        # since 1004: caller-owned device memory for a GPU mask's tables
        ("storage", ctypes.c_void_p),
        ("storage_bytes", ctypes.c_size_t),
    ]


class BlockMaskInfo(_Versioned):
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("batch", ctypes.c_int32),
        ("heads", ctypes.c_int32),
        ("q_len", ctypes.c_int32),
        ("kv_len", ctypes.c_int32),
        ("q_block", ctypes.c_int32),
        ("kv_block", ctypes.c_int32),
        ("density", ctypes.c_double),
        ("partial_fraction", ctypes.c_double),
    ]


class ProblemSize(_Versioned):
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("batch", ctypes.c_int32),
        ("q_heads", ctypes.c_int32),
        ("kv_heads", ctypes.c_int32),
        ("q_len", ctypes.c_int32),
        ("kv_len", ctypes.c_int32),
    ]


class EmitOptions(_Versioned):
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("family", ctypes.c_char_p),
        ("format", ctypes.c_char_p),
        ("arch", ctypes.c_char_p),
        ("config", ctypes.c_char_p),
        ("gqa_group", ctypes.c_int32),
        ("divisible", ctypes.c_int32),
        ("no_block_mask", ctypes.c_int32),
        ("q_block", ctypes.c_int32),
        ("kv_block", ctypes.c_int32),
    ]


_P = ctypes.POINTER
_T = _P(DLTensor)
_SIGNATURES = {
    "flexjit_c_api_version": (ctypes.c_int, []),
    "flexjit_version_string": (ctypes.c_char_p, []),
    "flexjit_last_error": (ctypes.c_char_p, []),
    "flexjit_last_status": (ctypes.c_int, []),
    "flexjit_status_name": (ctypes.c_char_p, [ctypes.c_int]),
    "flexjit_free": (None, [ctypes.c_void_p]),
    "flexjit_gpu_available": (ctypes.c_int, []),
    "flexjit_check": (ctypes.c_int, [_P(VariantDesc), _P(CheckResult)]),
    "flexjit_check_result_free": (None, [_P(CheckResult)]),
    "flexjit_variant_create": (ctypes.c_int, [_P(VariantDesc), _P(ctypes.c_void_p)]),
    "flexjit_variant_destroy": (None, [ctypes.c_void_p]),
    "flexjit_block_mask_create": (ctypes.c_int, [ctypes.c_void_p, _P(BlockMaskDesc), _P(CallOptions), ctypes.c_void_p,
                                                 _P(ctypes.c_void_p)]),
    "flexjit_block_mask_storage_bytes": (ctypes.c_int, [ctypes.c_void_p, _P(BlockMaskDesc), _P(CallOptions),
                                                        _P(ctypes.c_size_t)]),
    "flexjit_block_mask_destroy": (None, [ctypes.c_void_p]),
    "flexjit_block_mask_get_info": (ctypes.c_int, [ctypes.c_void_p, _P(BlockMaskInfo)]),
    "flexjit_forward": (ctypes.c_int, [ctypes.c_void_p, _T, _T, _T, _T, _T, ctypes.c_void_p, ctypes.c_void_p,
                                       _P(CallOptions)]),
    "flexjit_backward": (ctypes.c_int, [ctypes.c_void_p, _T, _T, _T, _T, _T, _T, _T, _T, _T, ctypes.c_void_p,
                                        ctypes.c_void_p, _P(CallOptions)]),
    "flexjit_check_buffer_errors": (ctypes.c_int, []),
    "flexjit_warm_up": (ctypes.c_int, [ctypes.c_void_p, _P(ProblemSize), ctypes.c_int, ctypes.c_char_p, ctypes.c_int,
                                       _P(ctypes.c_size_t), _P(ctypes.c_size_t)]),
    "flexjit_tune": (ctypes.c_int, [ctypes.c_void_p, _P(ProblemSize), ctypes.c_int, _P(CallOptions), ctypes.c_void_p]),
    "flexjit_emit": (ctypes.c_int, [ctypes.c_void_p, _P(EmitOptions), _P(ctypes.c_void_p), _P(ctypes.c_size_t)]),
    "flexjit_reference_forward": (ctypes.c_int, [ctypes.c_void_p, _T, _T, _T, _T, _T, _P(CallOptions)]),
    "flexjit_reference_backward": (ctypes.c_int, [ctypes.c_void_p, _T, _T, _T, _T, _T, _T, _T, _P(CallOptions)]),
    "flexjit_decode": (ctypes.c_int, [ctypes.c_void_p, _P(DecodeArgs), ctypes.c_void_p, _P(CallOptions)]),
    "flexjit_reference_decode": (ctypes.c_int, [ctypes.c_void_p, _P(DecodeArgs), _P(CallOptions)]),
}


def _candidates():
    """Where libflexjit.so may be, in order: $FLEXJIT_LIBRARY, the copy bundled in the package,
    the system library path."""
    env = os.environ.get("FLEXJIT_LIBRARY")
    if env:
        yield env, "FLEXJIT_LIBRARY"
        return
    here = os.path.dirname(os.path.abspath(__file__))
    bundled = os.path.join(here, "libflexjit.so")
    if os.path.exists(bundled):
        yield bundled, "the package"
    found = ctypes.util.find_library("flexjit")
    yield (found or "libflexjit.so.0"), "the system library path"


def _load():
    tried = []
    for path, origin in _candidates():
        try:
            lib = ctypes.CDLL(path)
            break
        except OSError as e:
            tried.append(f"{path} (from {origin}): {e}")
    else:
        raise errors.LibraryNotFound(
            "cannot load libflexjit.so; tried " + "; ".join(tried) +
            ". Build it (ninja -C build flexjit_shared) and set FLEXJIT_LIBRARY=/path/to/build/libflexjit.so, or "
            "reinstall with FLEXJIT_LIBRARY set so that the package bundles it")
    for name, (restype, argtypes) in _SIGNATURES.items():
        try:
            function = getattr(lib, name)
        except AttributeError:
            raise errors.LibraryNotFound(f"{lib._name} does not export {name}: it is older than this Python package "
                                         "(rebuild libflexjit.so)") from None
        function.restype = restype
        function.argtypes = argtypes
    version = lib.flexjit_c_api_version()
    if version // 1000 != C_API_VERSION // 1000 or version < C_API_VERSION:
        raise errors.LibraryNotFound(f"{lib._name} has C API version {version}; this package needs "
                                     f"{C_API_VERSION // 1000}.x >= {C_API_VERSION}: rebuild or reinstall")
    return lib


_library = None
_RAW = {}


def raw(name):
    """The C function `name` with its pointer arguments taken as plain addresses (ints): for calls
    whose DLTensors and argument structs are packed by hand (_tensors.Block), which skips ctypes'
    per-argument conversions."""
    function = _RAW.get(name)
    if function is None:
        restype, argtypes = _SIGNATURES[name]
        plain = [ctypes.c_void_p if t is ctypes.c_void_p or issubclass(t, ctypes._Pointer) else t for t in argtypes]
        function = _RAW[name] = ctypes.CFUNCTYPE(restype, *plain)((name, lib()))
    return function


def lib():
    """The loaded library (loaded on first use, so importing flexjit never fails)."""
    global _library
    if _library is None:
        _library = _load()
    return _library


def check(status):
    """Raises the exception of a non-zero status, with the library's message for this thread."""
    if status != 0:
        message = lib().flexjit_last_error().decode("utf-8", "replace")
        raise errors.error_for_status(status, message)


def take_string(pointer):
    """A str from a char* the library allocated (freed here)."""
    if not pointer:
        return ""
    try:
        return ctypes.string_at(pointer).decode("utf-8", "replace")
    finally:
        lib().flexjit_free(pointer)
