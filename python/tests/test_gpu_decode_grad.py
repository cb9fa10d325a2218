"""C API 1001 on the GPU through the Python package: flexjit.decode on contiguous and paged
PyTorch caches against a float64 reference computed here on the gathered pages, and the gradient
of a learnable bias against torch autograd of an eager float64 reference. Fresh random inputs,
relative errors below 1e-2 (bfloat16). Skipped without PyTorch or a CUDA device."""
import math
import os

import pytest

torch = pytest.importorskip("torch", reason="PyTorch is not installed: the GPU tests need torch CUDA tensors")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device (torch.cuda.is_available() is False)", allow_module_level=True)

import flexjit  # noqa: E402

DEV = "cuda"
SEED = int(os.environ.get("FLEXJIT_TEST_SEED", torch.seed() % (2 ** 31)))
print(f"test_gpu_decode_grad: FLEXJIT_TEST_SEED={SEED}")


def rel_error(got, want):
    got, want = got.double(), want.double()
    assert torch.isfinite(got).all(), "non-finite values in the flexjit result"
    return ((got - want).norm() / want.norm()).item()


def reference_decode(q, k, v, lens, slopes, scale, causal):
    """float64 attention of each sequence over its own keys k[b, :, :len], v[b, :, :len] (contiguous
    [B, Hkv, S, D]), score - slope[h] * (kv_len - 1 - kv_idx), rows at the last Sq positions."""
    B, Hq, Sq, _ = q.shape
    group = Hq // k.shape[1]
    out = torch.zeros(B, Hq, Sq, v.shape[3], dtype=torch.float64)
    lse = torch.full((B, Hq, Sq), -math.inf, dtype=torch.float64)
    for b in range(B):
        n = int(lens[b])
        if n == 0:
            continue
        kb = k[b, :, :n].double().repeat_interleave(group, 0)  # [Hq, n, D]
        vb = v[b, :, :n].double().repeat_interleave(group, 0)
        s = scale * q[b].double() @ kb.transpose(1, 2)  # [Hq, Sq, n]
        j = torch.arange(n, dtype=torch.float64)
        s = s - slopes.double().view(Hq, 1, 1) * (n - 1 - j).view(1, 1, n)
        if causal:
            i = torch.arange(Sq).view(Sq, 1)
            s = s.masked_fill(~(i + n - Sq >= torch.arange(n).view(1, n)), -math.inf)
        lse[b] = torch.logsumexp(s, -1)
        out[b] = torch.softmax(s, -1) @ vb
    return out, lse


def paged_copy(k, v, lens, page_size, gen):
    """The contiguous cache [B, Hkv, S, D] as a shuffled pool of pages and a page table."""
    B, Hkv, S, D = k.shape
    max_pages = (S + page_size - 1) // page_size
    num_pages = B * max_pages + 3  # spare pages nobody uses hold noise
    order = torch.randperm(num_pages, generator=gen)
    k_pool = torch.randn(num_pages, page_size, Hkv, D, generator=gen).to(k.dtype)
    v_pool = torch.randn(num_pages, page_size, Hkv, v.shape[3], generator=gen).to(v.dtype)
    table = torch.zeros(B, max_pages, dtype=torch.int32)
    for b in range(B):
        for p in range(max_pages):
            page = int(order[b * max_pages + p])
            table[b, p] = page
            lo, hi = p * page_size, min(S, (p + 1) * page_size)
            k_pool[page, : hi - lo] = k[b, :, lo:hi].transpose(0, 1)
            v_pool[page, : hi - lo] = v[b, :, lo:hi].transpose(0, 1)
    return k_pool, v_pool, table


@pytest.mark.parametrize("case", [(1, False, 0), (1, True, 16), (3, False, 64), (3, True, 0)],
                         ids=["sq1-contiguous", "sq1-paged16", "sq3-contiguous-host-lens", "sq3-causal-paged"])
def test_decode_matches_the_float64_reference(case):
    Sq, paged, page_size = case[0], case[1], case[2] or 32
    causal = Sq > 1
    gen = torch.Generator().manual_seed(SEED + Sq * 10 + paged)
    B, Hq, Hkv, S, D = 3, 8, 2, 300, 128
    dtype = torch.bfloat16
    q = torch.randn(B, Hq, Sq, D, generator=gen).to(dtype)
    k = torch.randn(B, Hkv, S, D, generator=gen).to(dtype)
    v = torch.randn(B, Hkv, S, D, generator=gen).to(dtype)
    lens = torch.tensor([Sq, 137, S], dtype=torch.int32)
    slopes = torch.rand(Hq, generator=gen) * 0.1
    scale = 1 / math.sqrt(D)
    want_out, want_lse = reference_decode(q, k, v, lens, slopes, scale, causal)
    kwargs = dict(score_mod="score - slope[h] * (kv_len - 1 - kv_idx)", buffers={"slope": slopes.to(DEV)},
                  mask_mod="q_idx + kv_len - q_len >= kv_idx" if causal else None, return_lse=True)
    if case[2] == 64 and not paged:
        kwargs["host_seq_lens"] = lens.tolist()
    if paged:
        k_pool, v_pool, table = paged_copy(k, v, lens, page_size, gen)
        out, lse = flexjit.decode(q.to(DEV), k_pool.to(DEV), v_pool.to(DEV), lens.to(DEV), table.to(DEV), **kwargs)
    else:
        out, lse = flexjit.decode(q.to(DEV), k.to(DEV), v.to(DEV), lens.to(DEV), **kwargs)
    torch.cuda.synchronize()
    assert out.dtype == dtype and out.shape == (B, Hq, Sq, D)
    err = rel_error(out.cpu(), want_out)
    lse_err = rel_error(lse.cpu(), want_lse)
    print(f"decode {case}: out rel err {err:.2e}, lse rel err {lse_err:.2e}")
    assert err < 1e-2 and lse_err < 1e-2


def test_decode_errors_on_the_gpu():
    q = torch.randn(2, 4, 1, 64, device=DEV, dtype=torch.bfloat16)
    k = torch.randn(2, 2, 64, 64, device=DEV, dtype=torch.bfloat16)
    with pytest.raises(flexjit.ShapeError) as e:
        flexjit.decode(q, k, k, torch.tensor([1, 64], device=DEV))
    assert str(e.value) == "flexjit_decode: args->seq_lens has dtype int64: it is [B] int32"
    with pytest.raises(flexjit.ShapeError) as e:
        flexjit.decode(q, k, k, torch.tensor([1, 65], device=DEV, dtype=torch.int32), host_seq_lens=[1, 65])
    assert "seq_lens[1] = 65 is beyond the cache's 64" in str(e.value)


def test_learnable_bias_gradient_matches_torch_autograd():
    gen = torch.Generator().manual_seed(SEED + 7)
    B, H, S, D = 2, 4, 256, 64
    dtype = torch.bfloat16
    q, k, v, dout = (torch.randn(B, H, S, D, generator=gen).to(dtype) for _ in range(4))
    bias0 = torch.randn(H, 2 * S - 1, generator=gen) * 0.5
    score_mod = f"score + bias[h][q_idx - kv_idx + {S - 1}]"
    mask_mod = "q_idx >= kv_idx"
    # Eager float64 reference on the same (bf16-rounded) inputs.
    bias_ref = bias0.double().requires_grad_()
    qr, kr, vr = (x.double().requires_grad_() for x in (q, k, v))
    i, j = torch.arange(S).view(S, 1), torch.arange(S).view(1, S)
    s = (qr @ kr.transpose(-1, -2)) / math.sqrt(D) + bias_ref[:, i - j + S - 1].unsqueeze(0)
    s = s.masked_fill(~(i >= j), -math.inf)
    out_ref = torch.softmax(s, -1) @ vr
    (out_ref * dout.double()).sum().backward()
    # flexjit: the bias is a float32 CUDA tensor that requires grad, so it is learnable.
    bias = bias0.to(DEV).requires_grad_()
    qg, kg, vg = (x.to(DEV).requires_grad_() for x in (q, k, v))
    out = flexjit.attention(qg, kg, vg, score_mod=score_mod, mask_mod=mask_mod, buffers={"bias": bias})
    (out * dout.to(DEV)).sum().backward()
    torch.cuda.synchronize()
    assert bias.grad is not None and bias.grad.dtype == torch.float32 and bias.grad.shape == (H, 2 * S - 1)
    errors = {"out": rel_error(out.detach().cpu(), out_ref.detach()), "bias": rel_error(bias.grad.cpu(), bias_ref.grad),
              "dq": rel_error(qg.grad.cpu(), qr.grad), "dk": rel_error(kg.grad.cpu(), kr.grad),
              "dv": rel_error(vg.grad.cpu(), vr.grad)}
    print("learnable bias rel errors:", {n: f"{e:.2e}" for n, e in errors.items()})
    assert all(e < 1e-2 for e in errors.values()), errors
    # learnable= on a bias that does not require grad: no gradient, and still a correct forward.
    out2 = flexjit.attention(qg.detach(), kg.detach(), vg.detach(), score_mod=score_mod, mask_mod=mask_mod,
                             buffers={"bias": bias.detach()}, learnable=["bias"])
    assert rel_error(out2.cpu(), out_ref.detach()) < 1e-2
