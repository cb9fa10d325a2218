"""flexjit.attention on PyTorch CUDA tensors against torch.nn.attention.flex_attention and a float64
reference, forward and backward, for every mod of bench/suite.json, on a non-default stream.
Skipped without PyTorch or a CUDA device. The suite's shapes are scaled down (B <= 2, at most 2 kv
heads with the problem's GQA ratio, 1024 tokens; 1000 for the long problems, so the last tiles
are partial) so that the eager flex_attention and the float64 reference fit the test's time."""
import json
import math
import os
import pathlib

import pytest

torch = pytest.importorskip("torch", reason="PyTorch is not installed: the GPU tests compare with flex_attention")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device (torch.cuda.is_available() is False)", allow_module_level=True)
try:
    from torch.nn.attention.flex_attention import create_block_mask, flex_attention
except ImportError:  # pragma: no cover
    pytest.skip("this PyTorch has no torch.nn.attention.flex_attention", allow_module_level=True)

import flexjit  # noqa: E402

SUITE = pathlib.Path(os.environ.get("FLEXJIT_SUITE", pathlib.Path(__file__).resolve().parents[2] / "bench" / "suite.json"))
PROBLEMS = json.loads(SUITE.read_text())["problems"] if SUITE.exists() else []
if not PROBLEMS:
    pytest.skip(f"no problem suite at {SUITE} (set FLEXJIT_SUITE)", allow_module_level=True)


def suite_buffer(spec, device):
    """The buffer a suite entry describes (the schema of bench/suite.json's "about")."""
    if "segments" in spec:
        ids = [i for i, n in enumerate(spec["segments"]) for _ in range(n)]
        return torch.tensor(ids, dtype=torch.int32, device=device)
    if "alibi_heads" in spec:
        n = spec["alibi_heads"]
        return torch.tensor([2.0 ** (-8.0 * (h + 1) / n) for h in range(n)], dtype=torch.float32, device=device)
    if "const" in spec:
        return torch.tensor(spec["const"], dtype=getattr(torch, {"f32": "float32", "i32": "int32"}[spec["dtype"]]),
                            device=device)
    raise AssertionError(f"unknown buffer generator in {spec}")


def scaled(p):
    group = p["Hq"] // p["Hkv"]
    hkv = min(p["Hkv"], 2)
    s = 1000 if p["name"].startswith("long_") else min(p["Sq"], 1024)
    return dict(B=min(p["B"], 2), Hq=hkv * group, Hkv=hkv, S=s, D=p["D"], Dv=p.get("Dv", p["D"]))


def py_env(bufs):
    return {"torch": torch, **bufs}


def reference(q, k, v, dout, p, bufs, scale):
    """Forward and gradients in float64 with plain PyTorch ops, the mods evaluated on index grids."""
    qd, kd, vd = (x.detach().double().requires_grad_() for x in (q, k, v))
    group = q.shape[1] // k.shape[1]
    s = qd @ kd.repeat_interleave(group, 1).transpose(-1, -2) * scale
    B, H, Sq, Skv = s.shape
    dev = q.device
    grid = {"b": torch.arange(B, device=dev).view(B, 1, 1, 1), "h": torch.arange(H, device=dev).view(1, H, 1, 1),
            "q": torch.arange(Sq, device=dev).view(1, 1, Sq, 1), "k": torch.arange(Skv, device=dev).view(1, 1, 1, Skv)}
    if p.get("py_score_mod"):
        s = eval(p["py_score_mod"], {**py_env(bufs), **grid, "s": s})  # noqa: S307 (the suite's own text)
    if p.get("py_mask_mod"):
        keep = eval(p["py_mask_mod"], {**py_env(bufs), **grid})  # noqa: S307
        s = s.masked_fill(~keep.expand_as(s), -math.inf)
    out = torch.softmax(s, -1) @ vd.repeat_interleave(group, 1)
    out.backward(dout.double())
    return out.detach(), qd.grad, kd.grad, vd.grad


def suite_lambda(params, expression, bufs):
    """The suite's PyTorch expression as a real function (flex_attention traces its mods with
    dynamo, which cannot trace a call to eval but can trace a function eval created)."""
    return eval(f"lambda {params}: {expression}", py_env(bufs))  # noqa: S307 (the suite's own text)


def flex(q, k, v, dout, p, bufs, sizes):
    score_mod = block_mask = None
    if p.get("py_score_mod"):
        score_mod = suite_lambda("s, b, h, q, k", p["py_score_mod"], bufs)
    if p.get("py_mask_mod"):
        mask_mod = suite_lambda("b, h, q, k", p["py_mask_mod"], bufs)
        block_mask = create_block_mask(mask_mod, None, None, sizes["S"], sizes["S"], device=q.device)
    qf, kf, vf = (x.detach().requires_grad_() for x in (q, k, v))
    out = flex_attention(qf, kf, vf, score_mod=score_mod, block_mask=block_mask,
                         enable_gqa=sizes["Hq"] != sizes["Hkv"])
    out.backward(dout)
    return out.detach(), qf.grad, kf.grad, vf.grad


def rel(x, ref):
    x, ref = x.double(), ref.double()
    if not torch.isfinite(x).all():
        return math.inf
    return ((x - ref).norm() / ref.norm()).item()


def poison_allocator(shapes, dtype):
    """Leaves NaN-filled blocks of these sizes in PyTorch's caching allocator, so outputs that
    flexjit allocates and then fails to write show up as NaN."""
    blocks = [torch.full(s, math.nan, dtype=dtype, device="cuda") for s in shapes]
    del blocks


@pytest.mark.parametrize("problem", PROBLEMS, ids=[p["name"] for p in PROBLEMS])
def test_suite_problem_matches_flex_attention_forward_and_backward(problem):
    torch.manual_seed(0)
    sizes = scaled(problem)
    B, Hq, Hkv, S, D, Dv = (sizes[n] for n in ("B", "Hq", "Hkv", "S", "D", "Dv"))
    dev = torch.device("cuda")
    dtype = torch.bfloat16
    q = torch.randn(B, Hq, S, D, device=dev, dtype=dtype)
    k = torch.randn(B, Hkv, S, D, device=dev, dtype=dtype)
    v = torch.randn(B, Hkv, S, Dv, device=dev, dtype=dtype)
    dout = torch.randn(B, Hq, S, Dv, device=dev, dtype=dtype)
    bufs = {name: suite_buffer(spec, dev) for name, spec in problem.get("buffers", {}).items()}
    scale = 1.0 / math.sqrt(D)

    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        assert torch.cuda.current_stream().cuda_stream != 0
        qg, kg, vg = (x.detach().clone().requires_grad_() for x in (q, k, v))
        poison_allocator([(B, Hq, S, Dv), (B, Hq, S, D), (B, Hkv, S, D), (B, Hkv, S, Dv)], dtype)
        out, lse = flexjit.attention(qg, kg, vg, score_mod=problem.get("score_mod"), mask_mod=problem.get("mask_mod"),
                                     buffers=bufs, return_lse=True)
        out.backward(dout)
        # Only the side stream is waited for: work flexjit queued elsewhere would not be finished.
        side.synchronize()
        got = (out.detach(), qg.grad, kg.grad, vg.grad)
        got = tuple(x.clone() for x in got)
    torch.cuda.synchronize()
    assert out.dtype == dtype and lse.dtype == torch.float32 and lse.shape == (B, Hq, S)

    ref = reference(q, k, v, dout, problem, bufs, scale)
    names = ("out", "dq", "dk", "dv")
    ours = {n: rel(g, r) for n, g, r in zip(names, got, ref)}
    print(f"\n{problem['name']} {sizes}: flexjit vs fp64 " + " ".join(f"{n}={e:.2e}" for n, e in ours.items()))
    for n in names:
        assert ours[n] < 1e-2, f"{n}: flexjit's relative error against float64 is {ours[n]:.3e}"
    peer = flex(q, k, v, dout, problem, bufs, sizes)
    theirs = {n: rel(g, r) for n, g, r in zip(names, peer, ref)}
    vs_flex = {n: rel(g, f) for n, g, f in zip(names, got, peer)}
    print("  flex_attention vs fp64 " + " ".join(f"{n}={e:.2e}" for n, e in theirs.items()) +
          " | flexjit vs flex_attention " + " ".join(f"{n}={e:.2e}" for n, e in vs_flex.items()))
    for n in names:
        # flex_attention's own error bounds how close the two can be
        assert vs_flex[n] < 2e-2 + theirs[n], f"{n}: flexjit and flex_attention differ by {vs_flex[n]:.3e}"
    # the log-sum-exp too (natural log, fp32), where it is a plain logsumexp
    if not problem.get("score_mod") and not problem.get("mask_mod"):
        s = (q.double() @ k.double().repeat_interleave(Hq // Hkv, 1).transpose(-1, -2)) * scale
        torch.testing.assert_close(lse.double(), torch.logsumexp(s, -1), rtol=2e-3, atol=2e-2)


def test_errors_on_the_gpu_path_name_the_tensor():
    q = torch.randn(1, 1, 128, 64, device="cuda", dtype=torch.float32)
    with pytest.raises(flexjit.ShapeError) as e:
        flexjit.attention(q, q, q)
    assert str(e.value) == "q has dtype float32: attention on the GPU runs on bfloat16 or float16 tensors"
    qb = q.bfloat16()
    with pytest.raises(flexjit.ShapeError) as e:
        flexjit.attention(qb, qb, qb.cpu())
    assert "flexjit_forward: v is in kDLCPU memory (device_type 1): GPU calls need CUDA tensors (kDLCUDA)" in str(e.value)


def test_tune_then_block_mask_and_attention_reuse_it():
    # flexjit.tune runs the problem once on its own random inputs (tuning it); a later call of the
    # same size with an explicit block mask must then be right, on fp16.
    slope = torch.tensor([2.0 ** (-8.0 * (h + 1) / 4) for h in range(4)], device="cuda")
    mods = dict(score_mod="score + slope[h] * (kv_idx - q_idx)", mask_mod="q_idx >= kv_idx")
    flexjit.tune(1, 4, 2, 384, 384, dtype="float16", head_dim=64, buffers={"slope": slope}, **mods)
    mask = flexjit.block_mask("q_idx >= kv_idx", 1, 4, 384, 384)
    assert mask.density == pytest.approx(6 / 9)  # 3 x 3 blocks of 128: the lower triangle
    q = torch.randn(1, 4, 384, 64, device="cuda", dtype=torch.float16)
    k = torch.randn(1, 2, 384, 64, device="cuda", dtype=torch.float16)
    v = torch.randn(1, 2, 384, 64, device="cuda", dtype=torch.float16)
    out = flexjit.attention(q, k, v, buffers={"slope": slope}, block_mask=mask, **mods)
    p = {"py_score_mod": "s + slope[h] * (k - q)", "py_mask_mod": "q >= k"}
    ref = reference(q, k, v, torch.ones_like(q), p, {"slope": slope}, 1 / 8)[0]
    assert rel(out, ref) < 5e-3
    with pytest.raises(flexjit.UsageError) as e:
        flexjit.attention(q, k, v, buffers={"slope": slope}, block_mask=mask, score_mod=mods["score_mod"],
                          mask_mod="q_idx > kv_idx")
    assert str(e.value) == ("block_mask was built for mask_mod 'q_idx >= kv_idx' but attention got mask_mod "
                            "'q_idx > kv_idx': build the block mask from the same expression")
