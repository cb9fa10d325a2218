"""The package without a GPU: check, emit, the float64 CPU reference on NumPy arrays (expected
values computed by hand in the comments), and the errors' types and texts."""
import math

import numpy as np
import pytest

import flexjit

E = math.e


def test_library_version_matches_the_package():
    assert flexjit.library_version() == flexjit.__version__


def test_check_returns_canonical_forms_gradient_and_cuda():
    r = flexjit.check(score_mod="score*w+slope[h]*(kv_idx-q_idx)", mask_mod="(q_idx>=kv_idx)",
                      buffers={"slope": ("float32", (16,))}, params={"w": "float"})
    assert r.score_canonical == "score * w + slope[h] * (kv_idx - q_idx)"
    assert r.mask_canonical == "q_idx >= kv_idx"
    assert r.score_gradient == "w"
    assert "float p_w;" in r.cuda
    assert '#line 1 "score_mod"' in r.cuda and '#line 1 "mask_mod"' in r.cuda
    assert "score * w + slope[h] * (kv_idx - q_idx)" in r.report


def test_check_infers_declarations_from_values():
    r = flexjit.check(score_mod="score * scale_by + doc[q_idx]", params={"scale_by": 2},
                      buffers={"doc": np.zeros(8, np.int32)})
    assert "int p_scale_by;" in r.cuda
    assert r.score_gradient == "float(scale_by)"


def test_expression_errors_carry_the_caret_message():
    with pytest.raises(flexjit.ExprError) as e:
        flexjit.check(mask_mod="q_idx >= kv_id")
    assert str(e.value) == ("mask_mod:1:10: unknown variable 'kv_id' (did you mean 'kv_idx'?)\n"
                            "  q_idx >= kv_id\n"
                            "           ^~~~~")
    assert e.value.kind == "ExprError" and e.value.status == 1
    assert isinstance(e.value, flexjit.FlexjitError) and isinstance(e.value, ValueError)

    with pytest.raises(flexjit.ExprError) as e:
        flexjit.check(mask_mod="q_idx + 1")
    assert str(e.value) == ("mask_mod:1:1: mask_mod must return a bool, but this expression is an int\n"
                            "  q_idx + 1\n"
                            "  ^~~~~~~~~\n"
                            "  hint: compare values to get a bool, e.g. `q_idx >= kv_idx`; `q_idx + 1 != 0` tests "
                            "for nonzero")

    with pytest.raises(flexjit.ExprError) as e:
        flexjit.check(score_mod="score + bias[q_idx]", buffers={"bias": ("float32", (4, 4))})
    assert str(e.value) == ("score_mod:1:13: buffer 'bias' has rank 2 but is indexed with 1 index\n"
                            "  score + bias[q_idx]\n"
                            "              ^\n"
                            "  hint: write `bias[i][j]`")


def test_reference_forward_hand_computed_causal():
    # q = k = identity rows, v = [[1, 2], [3, 4]], causal, scale 1. Row 0 sees kv 0 (score 1):
    # out = [1, 2], lse = 1. Row 1 sees kv 0 (score 0) and kv 1 (score 1): weights 1/(1+e),
    # e/(1+e): out = [(1+3e)/(1+e), (2+4e)/(1+e)], lse = log(1+e).
    q = np.array([[[[1, 0], [0, 1]]]], np.float32)
    v = np.array([[[[1, 2], [3, 4]]]], np.float32)
    out, lse = flexjit.attention(q, q.copy(), v, mask_mod="q_idx >= kv_idx", scale=1.0, return_lse=True)
    assert out.dtype == np.float32 and lse.dtype == np.float32
    np.testing.assert_allclose(out[0, 0], [[1, 2], [(1 + 3 * E) / (1 + E), (2 + 4 * E) / (1 + E)]], rtol=1e-6)
    np.testing.assert_allclose(lse[0, 0], [1.0, math.log(1 + E)], rtol=1e-6)


def test_reference_forward_buffers_params_and_float64():
    # One query, two keys, D = 1: q = 1, k = [1, 1] so both raw scores are 1 (scale 1). score_mod
    # adds bias[kv_idx] * w = [0, ln 3]: weights [1/4, 3/4], out = 2/4 + 3*6/4... with v = [2, 6]:
    # 0.25 * 2 + 0.75 * 6 = 5; lse = log(e + 3e) = 1 + ln 4.
    q = np.ones((1, 1, 1, 1))
    k = np.ones((1, 1, 2, 1))
    v = np.array([2.0, 6.0]).reshape(1, 1, 2, 1)
    out, lse = flexjit.attention(q, k, v, score_mod="score + bias[kv_idx] * w",
                                 buffers={"bias": np.array([0, 1], np.float32)}, params={"w": math.log(3)},
                                 scale=1.0, return_lse=True)
    assert out.dtype == np.float64
    assert out[0, 0, 0, 0] == pytest.approx(5.0, rel=1e-12)
    assert lse[0, 0, 0] == pytest.approx(1 + math.log(4), rel=1e-12)


def test_reference_forward_reads_strided_views_and_gqa():
    # A [B, S, H, D] array seen as [B, H, S, D]: strided, non-contiguous input. Two query heads
    # share the one kv head (GQA), so both heads' rows equal the single-head result.
    rng = np.random.default_rng(1)
    bshd = rng.standard_normal((1, 3, 2, 4)).astype(np.float32)
    q = bshd.transpose(0, 2, 1, 3)
    assert not q.flags.c_contiguous
    k = rng.standard_normal((1, 1, 3, 4)).astype(np.float32)
    v = rng.standard_normal((1, 1, 3, 4)).astype(np.float32)
    out = flexjit.attention(q, k, v)
    for h in range(2):
        single = flexjit.attention(np.ascontiguousarray(q[:, h:h + 1]), k, v)
        np.testing.assert_array_equal(out[:, h:h + 1], single)
    # and head 0, row 0 by hand: softmax(q k^T / 2) v
    s = k[0, 0] @ q[0, 0, 0] / 2.0
    p = np.exp(s - s.max())
    np.testing.assert_allclose(out[0, 0, 0], (p / p.sum()) @ v[0, 0], rtol=1e-5)


def test_reference_backward_hand_computed():
    # q = 1, k = [0, 1], v = [1, 3], D = 1, scale 1, dout = 1: scores [0, 1], P = [1/(1+e), e/(1+e)],
    # out = P . v; dv = P; dS = P * (v - out) = [-2 P0 P1, 2 P0 P1] (v - out = [1 - out, 3 - out]
    # and out = 1 + 2 P1); dq = dS . k = 2 P0 P1; dk = dS * q.
    q = np.ones((1, 1, 1, 1))
    k = np.array([0.0, 1.0]).reshape(1, 1, 2, 1)
    v = np.array([1.0, 3.0]).reshape(1, 1, 2, 1)
    dout = np.ones((1, 1, 1, 1))
    dq, dk, dv = flexjit.reference_backward(q, k, v, dout, scale=1.0)
    p0, p1 = 1 / (1 + E), E / (1 + E)
    assert dq[0, 0, 0, 0] == pytest.approx(2 * p0 * p1, rel=1e-12)
    np.testing.assert_allclose(dk[0, 0, :, 0], [-2 * p0 * p1, 2 * p0 * p1], rtol=1e-12)
    np.testing.assert_allclose(dv[0, 0, :, 0], [p0, p1], rtol=1e-12)


def test_nan_in_gives_nan_out():
    q = np.ones((1, 1, 2, 2), np.float32)
    v = np.ones((1, 1, 2, 2), np.float32)
    v[0, 0, 1, 0] = np.nan
    out = flexjit.attention(q, q, v, mask_mod="q_idx >= kv_idx")
    assert out[0, 0, 0, 0] == pytest.approx(1.0)  # row 0 never sees the NaN
    assert np.isnan(out[0, 0, 1, 0])


def test_block_mask_on_the_cpu():
    # causal, 512 x 512 in 128-blocks: 4 diagonal partial blocks and 6 full ones of 16.
    m = flexjit.block_mask("q_idx >= kv_idx", 2, 4, 512, 512, device="cpu")
    info = m.info()
    assert (info["batch"], info["heads"]) == (1, 1)  # the mask reads neither b nor h
    assert info["density"] == pytest.approx(10 / 16)
    assert info["partial_fraction"] == pytest.approx(4 / 16)


def test_emit_source_and_ptx():
    src = flexjit.emit(score_mod="score * w", mask_mod="q_idx >= kv_idx", params={"w": "float"})
    assert 'extern "C" __global__' in src
    assert "score * args.p_w" in src
    ptx = flexjit.emit(mask_mod="q_idx >= kv_idx", family="block_mask", format="ptx", arch="sm_80")
    assert ".target sm_80" in ptx and ".entry" in ptx


def test_head_dims_that_are_no_multiple_of_64():
    # d96 runs on 128-column tiles that load and store 96 columns; the backward of d192 on sm_90a on
    # 256-column ones (the fast dK/dV kernel's); a head dim that is no multiple of 8 is refused.
    src = flexjit.emit(mask_mod="q_idx >= kv_idx", head_dim=96, head_dim_v=40)
    assert "d128/64" in src and "io_dims=96/40" in src
    src = flexjit.emit(family="bwd_dkdv", head_dim=192, arch="sm_90a")
    assert "d256/256" in src and "io_dims=192/192" in src
    with pytest.raises(flexjit.UsageError) as e:
        flexjit.emit(head_dim=100)
    assert str(e.value) == "head_dim 100 is not supported: head dims are multiples of 8 from 8 to 256"


def test_warm_up_fills_the_disk_cache():
    first = flexjit.warm_up(1, 2, 2, 256, 256, mask_mod="q_idx >= kv_idx - 7", backward=False, arch="sm_80",
                            head_dim=64)
    assert first[0] >= 2  # the forward kernel and the block-mask kernel
    assert flexjit.warm_up(1, 2, 2, 256, 256, mask_mod="q_idx >= kv_idx - 7", backward=False, arch="sm_80",
                           head_dim=64) == (first[0], first[0])


def test_usage_and_shape_errors_name_what_is_wrong():
    q = np.ones((1, 1, 2, 2), np.float32)
    with pytest.raises(flexjit.ShapeError) as e:
        flexjit.attention(q.astype(np.int32), q, q)
    assert str(e.value) == ("flexjit_reference_forward: q has dtype int32: the CPU reference reads float16, "
                            "bfloat16, float32 or float64")
    with pytest.raises(flexjit.ShapeError) as e:
        flexjit.attention(q, q[:, :, :1], q)
    assert str(e.value) == ("q (1, 1, 2, 2), k (1, 1, 1, 2) and v (1, 1, 2, 2) do not fit together: "
                            "q [B, Hq, Sq, D], k [B, Hkv, Skv, D], v [B, Hkv, Skv, Dv]")
    with pytest.raises(flexjit.ShapeError) as e:
        flexjit.attention(q[0], q, q)
    assert str(e.value) == "q has shape (1, 2, 2): expected 4 dimensions [B, H, S, D]"
    with pytest.raises(flexjit.UsageError) as e:
        flexjit.attention(q, q, q, score_mod="score * w", params={"w": True})
    assert str(e.value) == "parameter 'w' = True: parameters are int or float numbers"
    with pytest.raises(flexjit.ShapeError) as e:
        flexjit.attention(q, q, q, score_mod="score + bias[q_idx]", buffers={"bias": np.ones(2)})
    assert str(e.value) == "buffer 'bias' has dtype float64: buffers are float16, bfloat16, float32, int32 or uint8"
    with pytest.raises(flexjit.UsageError) as e:
        flexjit.emit(family="fwdd")
    assert str(e.value) == ("unknown kernel family 'fwdd' (known: fwd, bwd_preprocess, bwd_dq, bwd_dkdv, "
                            "bwd_buffer_grad, decode, decode_combine, block_mask, diagonal_table, builtin)")
    with pytest.raises(flexjit.UsageError) as e:
        flexjit.attention(q, q, q, backward_mode="quick")
    assert str(e.value) == "backward_mode is 'quick': pass 'deterministic', 'fast' or None"
    with pytest.raises(flexjit.UsageError) as e:
        flexjit.attention(q, q, q, mask_mod="q_idx >= kv_idx", block_mask="causal")
    assert str(e.value) == "block_mask is a str: pass a flexjit.BlockMask (flexjit.block_mask(...))"
    with pytest.raises(flexjit.UsageError) as e:
        flexjit.attention("q", q, q)
    assert str(e.value).startswith("a str is not an array flexjit can read")


def test_hostile_arrays_and_values_are_refused_not_misread():
    q = np.ones((1, 1, 2, 2), np.float32)
    # The other byte order would be read as other numbers.
    with pytest.raises(flexjit.ShapeError) as e:
        flexjit.attention(q.astype(">f4"), q, q)
    assert str(e.value) == ("q has dtype >f4, in the other byte order than this machine's: convert it with "
                            "q.astype(q.dtype.newbyteorder('='))")
    # ctypes would keep the low 64 bits: 2**64 + 3 would run as 3.
    with pytest.raises(ValueError) as e:
        flexjit.attention(q, q, q, score_mod="score * w", params={"w": 2**64 + 3})
    assert str(e.value) == ("ParamValue.int_value = 18446744073709551619 does not fit in a signed 64-bit integer "
                            "(-9223372036854775808 to 9223372036854775807)")
    # A C string ends at a NUL: the rest of the mask would be dropped.
    with pytest.raises(ValueError) as e:
        flexjit.attention(q, q, q, mask_mod="true\x00 && q_idx >= kv_idx")
    assert str(e.value) == "VariantDesc.mask_mod contains a NUL character at index 4: a C string ends there"
    # A cache with no kv heads: a named error (it divided by zero).
    with pytest.raises(flexjit.ShapeError) as e:
        flexjit.decode(q, np.zeros((1, 0, 2, 2), np.float32), np.zeros((1, 0, 2, 2), np.float32),
                       np.array([1], np.int32))
    assert str(e.value) == ("flexjit_reference_decode: args->k has extent 0 in dimension 1 (shape [1, 0, 2, 2]); "
                            "every extent must be between 1 and 2^31-1")
    with pytest.raises(flexjit.UsageError) as e:
        flexjit.attention(q, q, q, scale=float("nan"))
    assert str(e.value) == "reference attention: scale must be a finite non-zero number (negative is allowed), got nan"


def test_out_of_bounds_buffer_read_on_the_cpu_is_an_error():
    q = np.ones((1, 1, 3, 2), np.float32)
    with pytest.raises(flexjit.ExprError) as e:
        flexjit.attention(q, q, q, score_mod="score + bias[q_idx]", buffers={"bias": np.ones(2, np.float32)})
    assert "bias" in str(e.value) and "out of bounds" in str(e.value)


def test_cpu_tensors_in_torch_are_differentiable():
    torch = pytest.importorskip("torch", reason="PyTorch is not installed")
    # the hand-computed backward case above, through autograd
    q = torch.ones(1, 1, 1, 1, dtype=torch.float64, requires_grad=True)
    k = torch.tensor([0.0, 1.0], dtype=torch.float64).reshape(1, 1, 2, 1).requires_grad_()
    v = torch.tensor([1.0, 3.0], dtype=torch.float64).reshape(1, 1, 2, 1).requires_grad_()
    out = flexjit.attention(q, k, v, scale=1.0)
    out.sum().backward()
    p0, p1 = 1 / (1 + E), E / (1 + E)
    assert q.grad.item() == pytest.approx(2 * p0 * p1)
    assert v.grad.flatten().tolist() == pytest.approx([p0, p1])


def test_gpu_calls_without_a_gpu_raise_driver_error():
    available, reason = flexjit.gpu_available()
    if available:
        pytest.skip("a GPU is present")
    assert reason  # why there is none, e.g. "no CUDA driver found (libcuda.so.1): ..."
    with pytest.raises(flexjit.DriverError) as e:
        flexjit.tune(1, 1, 1, 128, 128, mask_mod="q_idx >= kv_idx", head_dim=64)
    if reason.startswith("no CUDA driver found"):
        assert str(e.value).startswith("no CUDA driver found (libcuda.so.1)")


def test_call_options_struct_matches_the_c_header():
    # flexjit_call_options of C API 1003: the fields the package fills, in the header's order,
    # ending with backward_mode (FLEXJIT_BACKWARD_DEFAULT / DETERMINISTIC / FAST = 0 / 1 / 2).
    from flexjit import _lib
    names = [name for name, _ in _lib.CallOptions._fields_]
    assert names == ["struct_size", "buffers", "num_buffers", "params", "num_params", "has_scale", "scale",
                     "buffer_grads", "num_buffer_grads", "q_lens", "kv_lens", "host_q_lens", "host_kv_lens",
                     "backward_mode"]
    assert _lib.BACKWARD_MODES == {None: 0, "deterministic": 1, "fast": 2}
    options = _lib.CallOptions.new(backward_mode=2)
    assert options.struct_size == _lib.ctypes.sizeof(_lib.CallOptions)
    assert options.backward_mode == 2


def test_automatic_masks_built_during_a_graph_capture_are_not_kept(monkeypatch):
    # Which automatic block masks are kept for later calls, decided without a GPU: PyTorch is a
    # stand-in module that says whether the current stream is being captured, and the builder a
    # stub that counts builds.
    import sys
    import types

    capturing = [False]
    fake_torch = types.ModuleType("torch")
    fake_torch.cuda = types.SimpleNamespace(is_available=lambda: True, is_current_stream_capturing=lambda: capturing[0],
                                            current_device=lambda: 0)
    monkeypatch.setitem(sys.modules, "torch", fake_torch)
    built = []

    def fake_block_mask(mask_mod, *sizes, **kwargs):
        built.append((mask_mod, sizes, bool(kwargs.get("buffers"))))
        return types.SimpleNamespace(_per_call=False)

    monkeypatch.setattr(flexjit, "block_mask", fake_block_mask)
    monkeypatch.setattr(flexjit, "_auto_masks", type(flexjit._auto_masks)())
    sizes = (1, 2, 300, 300)
    first = flexjit._auto_block_mask("q_idx >= kv_idx", {}, {}, sizes, 0)
    again = flexjit._auto_block_mask("q_idx >= kv_idx", {}, {}, sizes, 0)
    assert again is first and len(built) == 1 and not first._per_call  # kept and reused
    capturing[0] = True
    assert flexjit._auto_block_mask("q_idx >= kv_idx", {}, {}, sizes, 0) is first  # built before: used
    during = flexjit._auto_block_mask("q_idx >= kv_idx && kv_idx > 3", {}, {}, sizes, 0)
    assert during._per_call and len(built) == 2  # built for the call only
    capturing[0] = False
    after = flexjit._auto_block_mask("q_idx >= kv_idx && kv_idx > 3", {}, {}, sizes, 0)
    assert after is not during and not after._per_call and len(built) == 3  # never handed the captured one
    with_buffer = flexjit._auto_block_mask("doc[q_idx] == doc[kv_idx]", {"doc": np.zeros(300, np.int32)}, {}, sizes, 0)
    assert with_buffer._per_call and built[-1][2]  # masks reading buffers: always per call


def test_reference_with_per_sequence_lengths_hand_computed():
    # B = 2 padded to Sq = Skv = 3, D = 1, scale 1, q = k = 1 (every score 1: equal weights over the
    # keys a row sees), v = [1, 3, 5] in both sequences, under the causal mask written with the
    # lengths (q_idx + kv_len - q_len >= kv_idx). Sequence 0 has 3 rows and 2 keys (below);
    # sequence 1 has 1 row and 3 keys: the row sees all 3, out 3 and lse 1 + ln 3, and its rows 1
    # and 2 lie past its queries: out 0, lse -inf. The padding holds NaN, which must reach nothing.
    q = np.ones((2, 1, 3, 1))
    k = np.ones((2, 1, 3, 1))
    v = np.array([1.0, 3.0, 5.0] * 2).reshape(2, 1, 3, 1)
    k[0, 0, 2, 0] = v[0, 0, 2, 0] = np.nan  # sequence 0's third key is padding
    q[1, 0, 1:, 0] = np.nan                 # sequence 1's rows past its first
    q_lens = np.array([3, 1], np.int32)
    kv_lens = np.array([2, 3], np.int32)
    out, lse = flexjit.attention(q, k, v, mask_mod="q_idx + kv_len - q_len >= kv_idx", scale=1.0, return_lse=True,
                                 q_lens=q_lens, kv_lens=kv_lens)
    # Sequence 0 under the same mask: row i sees keys up to i + 2 - 3 = i - 1, so row 0 sees none
    # (out 0, lse -inf), row 1 key 0 (out 1, lse 1), row 2 keys 0 and 1 (out 2, lse 1 + ln 2).
    np.testing.assert_allclose(out[0, 0, :, 0], [0.0, 1.0, 2.0], rtol=1e-12)
    np.testing.assert_allclose(lse[0, 0, 1:], [1.0, 1 + math.log(2)], rtol=1e-12)
    assert lse[0, 0, 0] == -np.inf
    assert out[1, 0, 0, 0] == pytest.approx(3.0, rel=1e-12)
    assert lse[1, 0, 0] == pytest.approx(1 + math.log(3), rel=1e-12)
    np.testing.assert_array_equal(out[1, 0, 1:, 0], [0.0, 0.0])
    np.testing.assert_array_equal(lse[1, 0, 1:], [-np.inf, -np.inf])
    # Backward, dout = 1 on every row: sequence 1's row averages v equally, so dv = 1/3 per key and
    # dq = dk = 0 (v - out sums to zero over equal weights: dS = P (v - out) = [-2, 0, 2] / 3, and
    # dq = dS . k = 0, dk = dS * q = [-2/3, 0, 2/3]). Gradients past the lengths are zero.
    dout = np.ones((2, 1, 3, 1))
    dq, dk, dv = flexjit.reference_backward(q, k, v, dout, mask_mod="q_idx + kv_len - q_len >= kv_idx", scale=1.0,
                                            q_lens=q_lens, kv_lens=kv_lens)
    np.testing.assert_allclose(dv[1, 0, :, 0], [1 / 3, 1 / 3, 1 / 3], rtol=1e-12)
    np.testing.assert_allclose(dk[1, 0, :, 0], [-2 / 3, 0.0, 2 / 3], rtol=1e-12, atol=1e-15)
    assert dq[1, 0, 0, 0] == pytest.approx(0.0, abs=1e-15)
    np.testing.assert_array_equal(dq[1, 0, 1:, 0], [0.0, 0.0])  # rows past sequence 1's queries
    assert dk[0, 0, 2, 0] == 0.0 and dv[0, 0, 2, 0] == 0.0   # sequence 0's padding key
    assert not np.isnan(dq).any() and not np.isnan(dk).any() and not np.isnan(dv).any()


def test_per_sequence_lengths_are_checked():
    q = np.ones((2, 1, 3, 1))
    with pytest.raises(flexjit.ShapeError) as e:
        flexjit.attention(q, q, q, q_lens=np.array([3, 1], np.int64))
    assert str(e.value) == "q_lens has dtype int64 and shape (2,): it is [B] = [2] int32"
    with pytest.raises(flexjit.ShapeError) as e:
        flexjit.attention(q, q, q, kv_lens=np.array([3], np.int32))
    assert str(e.value) == "kv_lens has dtype int32 and shape (1,): it is [B] = [2] int32"
    with pytest.raises(flexjit.UsageError) as e:
        flexjit.attention(q, q, q, q_lens=np.array([3, 1], np.int32), host_q_lens=[3, 1])
    assert str(e.value) == ("host_q_lens and host_kv_lens are for GPU calls; the CPU reference reads q_lens and "
                            "kv_lens themselves")
