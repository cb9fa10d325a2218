"""C API 1001 from Python without a GPU: learnable buffers' gradients and decoding through the
float64 CPU reference on NumPy arrays (expected values computed by hand in the comments), and the
errors' texts."""
import math

import numpy as np
import pytest

import flexjit


def relative_bias_case():
    # score + bias[q_idx - kv_idx + 1], Sq = Skv = 2, D = Dv = 1, q = 0, bias = 0: each row is a
    # uniform softmax over v = (1, 3), out = 2, and for dout = 1 dS = p (v - out) = (-1/2, +1/2).
    # Row 0 reads bias[1], bias[0]; row 1 reads bias[2], bias[1]: d bias = (1/2, 0, -1/2);
    # dv = (1, 1) (both rows put weight 1/2 on each key).
    q = np.zeros((1, 1, 2, 1), np.float32)
    k = np.ones((1, 1, 2, 1), np.float32)
    v = np.array([1, 3], np.float32).reshape(1, 1, 2, 1)
    dout = np.ones((1, 1, 2, 1), np.float32)
    return q, k, v, dout, {"bias": np.zeros(3, np.float32)}


def test_reference_backward_returns_learnable_buffer_gradients():
    q, k, v, dout, buffers = relative_bias_case()
    dq, dk, dv, grads = flexjit.reference_backward(q, k, v, dout, score_mod="score + bias[q_idx - kv_idx + 1]",
                                                   buffers=buffers, learnable=["bias"])
    assert list(grads) == ["bias"]
    assert grads["bias"].dtype == np.float32 and grads["bias"].shape == (3,)
    assert grads["bias"].tolist() == pytest.approx([0.5, 0.0, -0.5], abs=1e-7)
    assert dv.reshape(-1).tolist() == pytest.approx([1.0, 1.0])
    # Without `learnable` the result is (dq, dk, dv), as before.
    assert len(flexjit.reference_backward(q, k, v, dout, score_mod="score + bias[q_idx - kv_idx + 1]",
                                          buffers=buffers)) == 3


def test_learnable_errors_name_the_buffer():
    q, k, v, dout, buffers = relative_bias_case()
    with pytest.raises(flexjit.UsageError) as e:
        flexjit.reference_backward(q, k, v, dout, score_mod="score + bias[q_idx - kv_idx + 1]", buffers=buffers,
                                   learnable=["slope"])
    assert str(e.value) == "learnable names 'slope', which is not in buffers (given: 'bias'): pass its value in buffers"
    with pytest.raises(flexjit.UsageError) as e:
        flexjit.attention(q, k, v, score_mod="score + bias[q_idx - kv_idx + 1]", buffers=buffers, learnable="bias")
    assert str(e.value) == ("learnable buffers get their gradients through PyTorch autograd, and q is a ndarray: pass "
                            "torch tensors, or call flexjit.reference_backward(..., learnable=...) on host arrays")
    with pytest.raises(flexjit.UsageError) as e:
        flexjit.reference_backward(q, k, v, dout, score_mod="score * 2", buffers=buffers, learnable="bias")
    assert str(e.value).startswith("buffer 'bias' is learnable but score_mod does not read it, so it has no gradient")
    with pytest.raises(flexjit.FlexjitError) as e:
        flexjit.reference_backward(q, k, v, dout, score_mod="score + ids[q_idx]", buffers={"ids": np.zeros(2, np.int32)},
                                   learnable=["ids"])
    assert str(e.value).startswith("buffer 'ids' has dtype i32 and cannot be learnable; only f32, f16 and bf16 "
                                   "buffers have gradients")


def decode_case():
    # Two sequences of lengths 2 and 3 in a cache of S = 3, q = 0 (uniform weights over the keys a
    # sequence holds), D = Dv = 1: out = (1 + 2) / 2 and (10 + 20 + 40) / 3, lse = log 2, log 3.
    q = np.zeros((2, 1, 1, 1), np.float32)
    k = np.ones((2, 1, 3, 1), np.float32)
    v = np.array([1, 2, 4, 10, 20, 40], np.float32).reshape(2, 1, 3, 1)
    return q, k, v, np.array([2, 3], np.int32)


def paged_case():
    # The same cache in pages of 2 tokens, out of order: sequence 0 in page 3, sequence 1 in pages 0
    # and 2; what no sequence reaches is 999.
    k_pages = np.ones((4, 2, 1, 1), np.float32)
    v_pages = np.array([10, 20, 999, 999, 40, 999, 1, 2], np.float32).reshape(4, 2, 1, 1)
    return k_pages, v_pages, np.array([[3, 1], [0, 2]], np.int32)


def test_decode_reference_contiguous_and_paged():
    q, k, v, lens = decode_case()
    out, lse = flexjit.decode(q, k, v, lens, return_lse=True)
    assert out.reshape(-1).tolist() == pytest.approx([1.5, 70 / 3])
    assert lse.reshape(-1).tolist() == pytest.approx([math.log(2), math.log(3)])
    k_pages, v_pages, table = paged_case()
    out = flexjit.reference_decode(q, k_pages, v_pages, lens, table)
    assert out.shape == (2, 1, 1, 1) and out.dtype == np.float32
    assert out.reshape(-1).tolist() == pytest.approx([1.5, 70 / 3])


def test_decode_mods_see_each_sequences_length():
    # kv_len is the sequence's own length: keep its last key only (v = 2 and 40).
    q, _, _, lens = decode_case()
    k_pages, v_pages, table = paged_case()
    out = flexjit.decode(q, k_pages, v_pages, lens, table, mask_mod="kv_idx == kv_len - 1")
    assert out.reshape(-1).tolist() == pytest.approx([2.0, 40.0])
    # A buffer and a parameter: score + w * bonus[kv_idx] with q = 0 weighs the keys by
    # exp(w * bonus): sequence 0 over v = (1, 2) with bonus (0, log 3), w = 1: (1 + 3 * 2) / 4.
    q, k, v, lens = decode_case()
    bonus = np.array([0, math.log(3), 0], np.float32)
    out = flexjit.decode(q, k, v, lens, score_mod="score + w * bonus[kv_idx]", buffers={"bonus": bonus},
                         params={"w": 1.0})
    assert out.reshape(-1)[0] == pytest.approx(7 / 4, rel=1e-6)


def test_decode_errors_name_what_is_wrong():
    q, k, v, lens = decode_case()
    k_pages, v_pages, table = paged_case()
    with pytest.raises(flexjit.ShapeError) as e:
        flexjit.decode(q, k, v, lens.astype(np.int64))
    assert str(e.value) == "flexjit_reference_decode: args->seq_lens has dtype int64: it is [B] int32"
    with pytest.raises(flexjit.ShapeError) as e:
        flexjit.decode(q, k_pages[0], v_pages, lens, table)
    assert str(e.value) == ("flexjit_reference_decode: args->k has ndim 3: a paged cache (args->page_table set) is "
                            "[num_pages, page_size, Hkv, D]")
    with pytest.raises(flexjit.ShapeError) as e:
        flexjit.decode(q, k_pages, v_pages, lens, np.array([[3, 1], [4, 2]], np.int32))
    assert "page_table[1][0] = 4" in str(e.value)
    with pytest.raises(flexjit.ShapeError) as e:
        flexjit.decode(q, k, v, np.array([2, 4], np.int32))
    assert "seq_lens[1] = 4 is beyond the cache's 3" in str(e.value)
    with pytest.raises(flexjit.ShapeError) as e:
        flexjit.decode(q, k, v[0], lens)
    assert str(e.value) == "v_cache has shape (1, 3, 1): expected 4 dimensions [B, Hkv, S, Dv]"
    with pytest.raises(flexjit.UsageError) as e:
        flexjit.decode(q, k, v, lens, host_seq_lens=[2, 3])
    assert str(e.value) == ("host_seq_lens, host_page_table and max_seq_len are for GPU decoding; the CPU reference "
                            "reads seq_lens and page_table themselves")


def test_cpu_tensors_get_learnable_buffer_gradients_through_autograd():
    torch = pytest.importorskip("torch", reason="PyTorch is not installed")
    q, k, v, dout = (torch.from_numpy(x) for x in relative_bias_case()[:4])
    bias = torch.zeros(3, dtype=torch.float32, requires_grad=True)
    out = flexjit.attention(q, k, v, score_mod="score + bias[q_idx - kv_idx + 1]", buffers={"bias": bias})
    (out * dout).sum().backward()
    assert bias.grad.tolist() == pytest.approx([0.5, 0.0, -0.5], abs=1e-7)


def test_host_lengths_and_page_tables_are_converted_and_checked_in_one_pass():
    # The host copies a GPU decode takes (host_seq_lens, host_page_table) become C int32 arrays;
    # lists, NumPy arrays of any integer type and nested tables are flattened in order.
    from flexjit import _int32_array
    assert list(_int32_array([3, 0, 7], "host_seq_lens", 3)) == [3, 0, 7]
    table = np.arange(12, dtype=np.int64).reshape(3, 4)[:, ::-1]  # a strided view
    assert list(_int32_array(table, "host_page_table", 12)) == [3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8]
    assert list(_int32_array(np.array([5, 6], np.uint8), "host_seq_lens", 2)) == [5, 6]
    # The first entry that does not fit is named, as a scalar field's would be.
    with pytest.raises(ValueError) as e:
        _int32_array([1, 2, -2**31 - 1, 2**40], "host_page_table", 4)
    assert str(e.value) == ("host_page_table[2] = -2147483649 does not fit in a signed 32-bit integer "
                            "(-2147483648 to 2147483647)")
    with pytest.raises(flexjit.ShapeError) as e:
        _int32_array(np.array([1.0, 2.0]), "host_seq_lens", 2)
    assert str(e.value) == "host_seq_lens must hold integers, got dtype float64"
    with pytest.raises(flexjit.ShapeError) as e:
        _int32_array([1, 2], "host_page_table", 3)
    assert str(e.value) == "host_page_table holds 2 values; expected 3"
