"""flexjit.attention with per-sequence lengths (q_lens / kv_lens) on PyTorch CUDA tensors against the
float64 CPU reference with the same lengths, forward and backward through autograd: ragged lengths
with 0 and odd ones, GQA, the causal mask written with the lengths, NaN in the inputs' padding.
Skipped without PyTorch or a CUDA device."""
import pytest

torch = pytest.importorskip("torch", reason="PyTorch is not installed")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device (torch.cuda.is_available() is False)", allow_module_level=True)

import flexjit  # noqa: E402

CAUSAL = "q_idx + kv_len - q_len >= kv_idx"


def _pad_with_nan(x, lens):
    for b, n in enumerate(lens):
        x[b, :, n:] = float("nan")


@pytest.mark.parametrize("d", [64, 128, 256])
@pytest.mark.parametrize("mask_mod", [None, CAUSAL])
def test_ragged_forward_and_backward_match_the_reference(d, mask_mod):
    gen = torch.Generator().manual_seed(1000 + d)
    B, Hq, Hkv, S = 4, 4, 2, 300
    q_lens, kv_lens = [300, 0, 129, 77], [300, 5, 200, 1]
    q = torch.randn(B, Hq, S, d, generator=gen)
    k = torch.randn(B, Hkv, S, d, generator=gen)
    v = torch.randn(B, Hkv, S, d, generator=gen)
    dout = torch.randn(B, Hq, S, d, generator=gen)
    for x, lens in ((q, q_lens), (k, kv_lens), (v, kv_lens), (dout, q_lens)):
        _pad_with_nan(x, lens)
    ql = torch.tensor(q_lens, dtype=torch.int32)
    kl = torch.tensor(kv_lens, dtype=torch.int32)
    ref_out, ref_lse = flexjit.attention(q.double(), k.double(), v.double(), mask_mod=mask_mod, return_lse=True,
                                         q_lens=ql, kv_lens=kl)
    ref_dq, ref_dk, ref_dv = flexjit.reference_backward(q.double(), k.double(), v.double(), dout.double(),
                                                       mask_mod=mask_mod, q_lens=ql, kv_lens=kl)
    dev = [t.to("cuda", torch.bfloat16).requires_grad_() for t in (q, k, v)]
    out, lse = flexjit.attention(*dev, mask_mod=mask_mod, return_lse=True, q_lens=ql.cuda(), kv_lens=kl.cuda(),
                                 host_q_lens=q_lens, host_kv_lens=kv_lens)
    out.backward(dout.to("cuda", torch.bfloat16))  # its rows past q_len are NaN: never used
    for b, n in enumerate(q_lens):
        if n == 0:
            continue  # no rows: nothing written
        got, want = out[b, :, :n].float().cpu(), ref_out[b, :, :n].float()
        assert torch.isfinite(got).all(), f"sequence {b}: out"
        assert (got - want).abs().max() <= 2e-2 * max(1.0, want.abs().max().item()), f"sequence {b}: out"
        assert torch.allclose(lse[b, :, :n].cpu(), ref_lse[b, :, :n].float(), atol=2e-2), f"sequence {b}: lse"
    for name, got, want, lens in (("dq", dev[0].grad, ref_dq, q_lens), ("dk", dev[1].grad, ref_dk, kv_lens),
                                  ("dv", dev[2].grad, ref_dv, kv_lens)):
        got = got.float().cpu()
        assert torch.isfinite(got).all(), f"{name}: NaN or inf (the padding reached it)"
        for b, n in enumerate(lens):
            assert (got[b, :, n:] == 0).all(), f"{name} past sequence {b}'s length"
        scale = max(1.0, want.abs().max().item())
        assert (got - want.float()).abs().max() <= 3e-2 * scale, name
