"""Arrays of any framework as DLPack DLTensors, and outputs allocated in the input's framework.

PyTorch tensors and NumPy arrays are described directly (pointer, shape, strides); anything else
that speaks DLPack (CuPy, JAX) goes through its `__dlpack__` capsule, which is kept alive for the
call. Frameworks are imported lazily: none is required.
"""
import ctypes
import struct
import sys

from . import _lib
from .errors import ShapeError, UsageError


_FRAMEWORK_BY_TYPE = {}  # a call classifies q, k, v, outputs and buffers: per type, once


def framework(x):
    """'torch', 'numpy', 'cupy', 'jax' or 'dlpack' (anything else with __dlpack__)."""
    kind = _FRAMEWORK_BY_TYPE.get(type(x))
    if kind is None:
        kind = _classify(x)
        _FRAMEWORK_BY_TYPE[type(x)] = kind
    return kind


def _classify(x):
    module = type(x).__module__.split(".")[0]
    if module == "torch":
        return "torch"
    if module == "numpy":
        return "numpy"
    if module == "cupy":
        return "cupy"
    if module in ("jax", "jaxlib"):
        return "jax"
    if hasattr(x, "__dlpack__"):
        return "dlpack"
    raise UsageError(f"a {type(x).__name__} is not an array flexjit can read: pass a PyTorch tensor, a NumPy, CuPy or "
                     "JAX array, or any object with __dlpack__")


_TORCH_DTYPES = None


def _torch_dtype(dtype):
    global _TORCH_DTYPES
    if _TORCH_DTYPES is None:
        import torch
        _TORCH_DTYPES = {
            torch.float16: (_lib.kDLFloat, 16), torch.bfloat16: (_lib.kDLBfloat, 16),
            torch.float32: (_lib.kDLFloat, 32), torch.float64: (_lib.kDLFloat, 64),
            torch.int32: (_lib.kDLInt, 32), torch.uint8: (_lib.kDLUInt, 8), torch.int64: (_lib.kDLInt, 64),
        }
    if dtype not in _TORCH_DTYPES:
        raise ShapeError(f"tensors of dtype {dtype} are not supported: use float16, bfloat16, float32 (float64 on "
                         "the CPU), int32 or uint8")
    return _TORCH_DTYPES[dtype]


_NUMPY_KINDS = {("f", 2): (_lib.kDLFloat, 16), ("f", 4): (_lib.kDLFloat, 32), ("f", 8): (_lib.kDLFloat, 64),
                ("i", 4): (_lib.kDLInt, 32), ("u", 1): (_lib.kDLUInt, 8), ("i", 8): (_lib.kDLInt, 64)}


class Described:
    """A DLTensor and whatever keeps its memory and arrays alive."""

    def __init__(self, tensor, keep):
        self.tensor = tensor
        self.keep = keep

    @property
    def pointer(self):
        return ctypes.pointer(self.tensor)


_DEVICES = {}  # (type, id) -> DLDevice, and (code, bits) -> DLDataType: copied into each DLTensor
_DATA_TYPES = {}


def _make(data, device_type, device_id, code, bits, shape, strides):
    ndim = len(shape)
    shape_array = (ctypes.c_int64 * max(ndim, 1))(*shape)
    strides_array = (ctypes.c_int64 * max(ndim, 1))(*strides)
    device = _DEVICES.get((device_type, device_id))
    if device is None:
        device = _DEVICES[(device_type, device_id)] = _lib.DLDevice(device_type, device_id)
    dtype = _DATA_TYPES.get((code, bits))
    if dtype is None:
        dtype = _DATA_TYPES[(code, bits)] = _lib.DLDataType(code, bits, 1)
    t = _lib.DLTensor(data, device, ndim, dtype, shape_array, strides_array, 0)
    return t, (shape_array, strides_array)


def _direct_fields(x, name):
    """(data, device type, device id, dtype code, bits, shape, strides) of a PyTorch tensor or NumPy
    array, read directly; None for arrays of other frameworks (they go through DLPack)."""
    kind = framework(x)
    if kind == "torch":
        code, bits = _torch_dtype(x.dtype)
        device = x.device
        if device.type == "cuda":
            device_type, device_id = _lib.kDLCUDA, device.index if device.index is not None else 0
        elif device.type == "cpu":
            device_type, device_id = _lib.kDLCPU, 0
        else:
            raise ShapeError(f"{name} is on {device}: flexjit runs on CUDA devices (or the CPU reference)")
        return x.data_ptr(), device_type, device_id, code, bits, tuple(x.shape), x.stride()
    if kind == "numpy":
        key = (x.dtype.kind, x.dtype.itemsize)
        if key not in _NUMPY_KINDS:
            raise ShapeError(f"{name} has dtype {x.dtype}: use float16, float32, float64, int32 or uint8")
        code, bits = _NUMPY_KINDS[key]
        # DLPack tensors are in the machine's byte order: a swapped array would be read as other
        # numbers (a single byte has no order).
        if x.dtype.itemsize > 1 and not x.dtype.isnative:
            raise ShapeError(f"{name} has dtype {x.dtype.str}, in the other byte order than this machine's: "
                             f"convert it with {name}.astype({name}.dtype.newbyteorder('='))")
        if any(s % x.itemsize for s in x.strides):
            raise ShapeError(f"{name} has strides {x.strides} bytes, not a multiple of its {x.itemsize}-byte elements")
        return x.ctypes.data, _lib.kDLCPU, 0, code, bits, x.shape, tuple(s // x.itemsize for s in x.strides)
    return None


def _from_dlpack(x, stream):
    """A Described from the object's DLPack capsule: its DLManagedTensor starts with the DLTensor."""
    try:
        capsule = x.__dlpack__(stream=stream) if stream is not None else x.__dlpack__()
    except TypeError:
        capsule = x.__dlpack__()
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype = ctypes.c_void_p
    get.argtypes = [ctypes.py_object, ctypes.c_char_p]
    address = get(capsule, b"dltensor")
    t = _lib.DLTensor.from_address(address)
    return Described(t, (capsule, x))


def describe(x, name="tensor", stream=None):
    """A DLTensor for `x` (a Described; keep it until the call returns)."""
    fields = _direct_fields(x, name)
    if fields is None:
        return _from_dlpack(x, stream)
    data, device_type, device_id, code, bits, shape, strides = fields
    t, keep = _make(data or None, device_type, device_id, code, bits, shape, strides)
    return Described(t, (keep, x))


# A DLTensor as C lays it out: data, device (type, id), ndim, dtype (code, bits, lanes), shape,
# strides, byte_offset; 48 bytes, every field at its natural alignment.
_DLTENSOR_FORMAT = "QiiiBBHQQQ"
_DLTENSOR_BYTES = struct.calcsize("=" + _DLTENSOR_FORMAT)
_BLOCK_STRUCTS = {}  # the ranks of a call's tensors -> the struct.Struct that packs them all


class Block:
    """The DLTensors of one call, packed into one buffer with their shapes and strides by a single
    struct.pack_into: a call's six tensors cost microseconds, where a ctypes struct each (six
    fields, two int64 arrays) cost about forty. `addresses[i]` is the address of the i-th
    DLTensor, 0 for a None item; pass them to the C API as pointers and keep the Block (and
    its arrays) alive until the call returns. Arrays that are neither PyTorch nor NumPy are
    described through their DLPack capsules."""

    def __init__(self, items, stream=None):
        fields, ranks = [], []
        for x, name in items:
            f = None if x is None else _direct_fields(x, name)
            fields.append(f)
            ranks.append(len(f[5]) if f is not None else -1)
        key = tuple(ranks)
        packer = _BLOCK_STRUCTS.get(key)
        if packer is None:
            described = [n for n in ranks if n >= 0]
            packer = struct.Struct("=" + _DLTENSOR_FORMAT * len(described) + "".join(f"{n}q{n}q" for n in described))
            if len(_BLOCK_STRUCTS) < 1024:
                _BLOCK_STRUCTS[key] = packer
        self.buffer = (ctypes.c_int64 * max(1, packer.size // 8))()  # 8-byte aligned
        base = ctypes.addressof(self.buffer)
        self.keep = [x for x, _ in items]
        self.addresses = []
        heads, arrays = [], []
        head = base
        array = base + _DLTENSOR_BYTES * sum(1 for n in ranks if n >= 0)
        for (x, _name), f, n in zip(items, fields, ranks):
            if f is None:
                if x is None:
                    self.addresses.append(0)
                else:
                    d = _from_dlpack(x, stream)
                    self.keep.append(d)
                    self.addresses.append(ctypes.addressof(d.tensor))
                continue
            data, device_type, device_id, code, bits, shape, strides = f
            heads += (data, device_type, device_id, n, code, bits, 1, array, array + 8 * n, 0)
            arrays += shape
            arrays += strides
            self.addresses.append(head)
            head += _DLTENSOR_BYTES
            array += 16 * n
        packer.pack_into(self.buffer, 0, *heads, *arrays)


def is_gpu(x):
    kind = framework(x)
    if kind == "torch":
        return x.device.type == "cuda"
    if kind == "numpy":
        return False
    if kind == "cupy":
        return True
    device = x.__dlpack_device__()[0] if hasattr(x, "__dlpack_device__") else _lib.kDLCPU
    return device in (_lib.kDLCUDA, _lib.kDLCUDAManaged)


_DTYPE_NAMES = {}


def dtype_name(x):
    """'bfloat16', 'float16', 'float32', ... of any supported array."""
    kind = framework(x)
    if kind in ("torch", "numpy", "cupy"):
        key = (kind, x.dtype)  # the kind first: dtypes of two frameworks are never compared
        name = _DTYPE_NAMES.get(key)
        if name is None:
            name = str(x.dtype).replace("torch.", "")
            _DTYPE_NAMES[key] = name
        return name
    d = describe(x).tensor.dtype
    names = {(_lib.kDLFloat, 16): "float16", (_lib.kDLBfloat, 16): "bfloat16", (_lib.kDLFloat, 32): "float32",
             (_lib.kDLFloat, 64): "float64", (_lib.kDLInt, 32): "int32", (_lib.kDLUInt, 8): "uint8"}
    return names.get((d.code, d.bits), f"code {d.code} bits {d.bits}")


def shape_of(x):
    return tuple(int(s) for s in x.shape)


def current_stream(x):
    """The stream the framework of `x` is working on (an int handle; 0 = the legacy default)."""
    kind = framework(x)
    if kind == "torch" and x.device.type == "cuda":
        import torch
        return torch_stream(torch, x.device)
    if kind == "cupy":
        import cupy
        return cupy.cuda.get_current_stream().ptr
    return 0


def torch_stream(torch, device):
    """PyTorch's current stream on `device` (a CUDA torch.device) as an int handle."""
    raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
    if raw is not None:  # the handle alone, without a torch.cuda.Stream object (30x cheaper)
        return raw(device.index)
    return torch.cuda.current_stream(device).cuda_stream


def device_scope(x):
    """A context that makes the CUDA device of the PyTorch tensor `x` current for a call (the
    library launches in the current context); a no-op where it is current already, as it
    nearly always is, since entering torch.cuda.device costs microseconds."""
    import contextlib
    if framework(x) != "torch" or x.device.type != "cuda":
        return contextlib.nullcontext()
    import torch
    current = getattr(torch._C, "_cuda_getDevice", None)
    if current is not None and current() == x.device.index:
        return contextlib.nullcontext()
    return torch.cuda.device(x.device)


def empty_like(x, shape, dtype_name_):
    """An uninitialised array of `shape` and dtype in the framework and on the device of `x`.
    JAX arrays are immutable: their outputs are allocated with PyTorch or CuPy and converted by
    the caller with `finish`."""
    kind = framework(x)
    if kind == "torch":
        import torch
        return x.new_empty(shape, dtype=getattr(torch, dtype_name_))  # x's device, without parsing it
    if kind == "numpy":
        import numpy
        return numpy.empty(shape, dtype=dtype_name_)
    if kind == "cupy":
        import cupy
        return cupy.empty(shape, dtype=dtype_name_)
    if "torch" in sys.modules or _importable("torch"):
        import torch
        device = x.__dlpack_device__()[1] if hasattr(x, "__dlpack_device__") else 0
        return torch.empty(shape, dtype=getattr(torch, dtype_name_), device=f"cuda:{device}")
    if _importable("cupy"):
        import cupy
        return cupy.empty(shape, dtype=dtype_name_)
    raise UsageError(f"cannot allocate outputs for a {type(x).__name__}: install PyTorch or CuPy")


def finish(x, out):
    """`out` converted to the framework of `x` (a no-op unless `x` is a JAX or other array)."""
    kind = framework(x)
    if kind in ("torch", "numpy", "cupy"):
        return out
    if kind == "jax":
        import jax.dlpack
        return jax.dlpack.from_dlpack(out)
    module = sys.modules.get(type(x).__module__.split(".")[0])
    convert = getattr(module, "from_dlpack", None)
    return convert(out) if convert else out


def _importable(name):
    import importlib.util
    return importlib.util.find_spec(name) is not None
