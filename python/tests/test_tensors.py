"""_tensors.Block: a call's DLTensors packed by hand into one buffer. Each DLTensor is read back
through the ctypes struct of the C header and compared with values written out here."""
import ctypes
import math

import numpy as np
import pytest

import flexjit
from flexjit import _lib, _tensors


def read_back(address):
    t = _lib.DLTensor.from_address(address)
    shape = tuple(t.shape[i] for i in range(t.ndim))
    if t.strides:
        strides = tuple(t.strides[i] for i in range(t.ndim))
    else:  # DLPack's NULL strides: compact and row-major (what some NumPy versions export)
        strides = tuple(int(math.prod(shape[i + 1:])) for i in range(t.ndim))
    return {
        "data": t.data or 0,
        "device": (t.device.device_type, t.device.device_id),
        "ndim": t.ndim,
        "dtype": (t.dtype.code, t.dtype.bits, t.dtype.lanes),
        "shape": shape,
        "strides": strides,
        "byte_offset": t.byte_offset,
    }


def test_block_packs_ranks_dtypes_strides_and_gaps():
    a = np.arange(2 * 3 * 4 * 5, dtype=np.float32).reshape(2, 3, 4, 5)
    b = np.arange(7, dtype=np.int32)
    c = np.zeros((6, 8), np.float16)[::-2, 1::3]  # negative and non-unit strides: shape (3, 3)
    d = np.array(3.5, dtype=np.float64)  # rank 0
    block = _tensors.Block([(a, "a"), (None, "missing"), (b, "b"), (c, "c"), (d, "d")])
    assert len(block.addresses) == 5 and block.addresses[1] == 0
    assert read_back(block.addresses[0]) == {
        "data": a.ctypes.data, "device": (1, 0), "ndim": 4, "dtype": (2, 32, 1), "shape": (2, 3, 4, 5),
        "strides": (60, 20, 5, 1), "byte_offset": 0}
    assert read_back(block.addresses[2]) == {
        "data": b.ctypes.data, "device": (1, 0), "ndim": 1, "dtype": (0, 32, 1), "shape": (7,), "strides": (1,),
        "byte_offset": 0}
    assert read_back(block.addresses[3]) == {
        "data": c.ctypes.data, "device": (1, 0), "ndim": 2, "dtype": (2, 16, 1), "shape": (3, 3),
        "strides": (-16, 3), "byte_offset": 0}
    assert read_back(block.addresses[4]) == {
        "data": d.ctypes.data, "device": (1, 0), "ndim": 0, "dtype": (2, 64, 1), "shape": (), "strides": (),
        "byte_offset": 0}


def test_blocks_of_the_same_ranks_pack_their_own_values():
    x, y = np.ones((2, 2), np.float32), np.ones((4, 1), np.float32)
    first = _tensors.Block([(x, "x")])
    second = _tensors.Block([(y, "y")])
    assert read_back(first.addresses[0])["shape"] == (2, 2)
    assert read_back(second.addresses[0])["shape"] == (4, 1)
    assert read_back(second.addresses[0])["data"] == y.ctypes.data


def test_block_keeps_describe_errors():
    with pytest.raises(flexjit.ShapeError, match="^k has dtype complex64: use float16"):
        _tensors.Block([(np.zeros(2, np.float32), "q"), (np.zeros(2, np.complex64), "k")])
    swapped = np.zeros(3, dtype=">f4")
    with pytest.raises(flexjit.ShapeError, match="in the other byte order"):
        _tensors.Block([(swapped, "v")])


def test_block_reads_other_arrays_through_dlpack():
    class Capsuled:  # an array of another framework: only __dlpack__
        def __init__(self, array):
            self.array = array

        def __dlpack__(self, stream=None):
            return self.array.__dlpack__()

    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    block = _tensors.Block([(Capsuled(a), "q"), (a, "k")])
    assert read_back(block.addresses[0]) == read_back(block.addresses[1])


def test_raw_functions_take_addresses_for_pointers_and_keep_other_types():
    forward = _lib.raw("flexjit_forward")
    assert forward.argtypes == (ctypes.c_void_p,) * 9
    assert forward.restype is ctypes.c_int
    warm_up = _lib.raw("flexjit_warm_up")
    assert warm_up.argtypes[2] is ctypes.c_int and warm_up.argtypes[3] is ctypes.c_char_p


def test_decode_args_block_matches_the_c_struct():
    addresses = [0x1000 * (i + 1) for i in range(7)]
    lens = (ctypes.c_int32 * 2)(5, 6)
    args = flexjit._DecodeArgsBlock(addresses, lens, None, 77)
    s = _lib.DecodeArgs.from_address(args.address)
    assert s.struct_size == ctypes.sizeof(_lib.DecodeArgs)
    got = [ctypes.cast(getattr(s, f), ctypes.c_void_p).value or 0
           for f in ("q", "k", "v", "seq_lens", "page_table", "out", "lse")]
    assert got == addresses
    assert ctypes.addressof(s.host_seq_lens.contents) == ctypes.addressof(lens)
    assert not s.host_page_table
    assert s.max_seq_len == 77


def test_torch_stream_reads_the_raw_handle_or_falls_back_to_the_stream_object():
    import types

    device = types.SimpleNamespace(type="cuda", index=3)
    with_raw = types.SimpleNamespace(_C=types.SimpleNamespace(_cuda_getCurrentRawStream=lambda i: 1000 + i))
    assert _tensors.torch_stream(with_raw, device) == 1003
    stream = types.SimpleNamespace(cuda_stream=77)
    without = types.SimpleNamespace(_C=types.SimpleNamespace(),
                                    cuda=types.SimpleNamespace(current_stream=lambda d: stream if d is device else None))
    assert _tensors.torch_stream(without, device) == 77
