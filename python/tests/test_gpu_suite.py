"""flexjit.attention on PyTorch CUDA tensors against torch.nn.attention.flex_attention and a float64
reference, forward and backward, for every mod of bench/suite.json, on a non-default stream.
Skipped without PyTorch or a CUDA device. The suite's shapes are scaled down (B <= 2, at most 2 kv
heads with the problem's GQA ratio, 1024 tokens; 1000 for the long problems, so the last tiles
are partial) so that the eager flex_attention and the float64 reference fit the test's time.
Learnable buffers ("grad_buffers") are checked against the float64 reference's gradient too.
Decode problems ("kind": "decode") keep their KV length (their PyTorch mods spell it out) and run
forward through flexjit.decode, with each sequence's length ("seq_lens", drawn as peers.py draws
it) and, for "page_size", a shuffled page pool."""
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
    if "randn" in spec:  # as bench/peers.py: float32 normal values, generator seeded 0
        g = torch.Generator().manual_seed(0)
        return torch.randn(*spec["randn"], generator=g, dtype=torch.float32).to(device)
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


def seq_lens(p):
    """bench/peers.py's seq_lens(): explicit values, or lo + ((i + 1) * 2654435761 mod 2^32) mod (hi - lo + 1)."""
    spec = p["seq_lens"]
    if "values" in spec:
        return list(spec["values"])
    lo, hi = spec["uniform"]
    return [lo + ((i + 1) * 2654435761 % 2**32) % (hi - lo + 1) for i in range(p["B"])]


def reference(q, k, v, dout, p, bufs, scale, learnable=(), kv_lens=None):
    """Forward and gradients in float64 with plain PyTorch ops, the mods evaluated on index grids.
    Returns out, dq, dk, dv and the gradients of the `learnable` buffers (None without dout)."""
    qd, kd, vd = (x.detach().double().requires_grad_() for x in (q, k, v))
    bufs = {n: (b.detach().double().requires_grad_() if n in learnable else b) for n, b in bufs.items()}
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
    if kv_lens is not None:  # each sequence reads only its own keys
        lens = torch.tensor(kv_lens, device=dev).view(B, 1, 1, 1)
        s = s.masked_fill(~(grid["k"] < lens).expand_as(s), -math.inf)
    out = torch.softmax(s, -1) @ vd.repeat_interleave(group, 1)
    if dout is None:
        return out.detach(), None, None, None, {}
    out.backward(dout.double())
    return out.detach(), qd.grad, kd.grad, vd.grad, {n: bufs[n].grad for n in learnable}


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


TRAINING = [p for p in PROBLEMS if p.get("kind") != "decode"]
DECODE = [p for p in PROBLEMS if p.get("kind") == "decode"]


@pytest.mark.parametrize("problem", TRAINING, ids=[p["name"] for p in TRAINING])
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
    learnable = problem.get("grad_buffers", [])
    scale = 1.0 / math.sqrt(D)

    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        assert torch.cuda.current_stream().cuda_stream != 0
        qg, kg, vg = (x.detach().clone().requires_grad_() for x in (q, k, v))
        poison_allocator([(B, Hq, S, Dv), (B, Hq, S, D), (B, Hkv, S, D), (B, Hkv, S, Dv)], dtype)
        bufs_g = {n: (b.detach().clone().requires_grad_() if n in learnable else b) for n, b in bufs.items()}
        out, lse = flexjit.attention(qg, kg, vg, score_mod=problem.get("score_mod"), mask_mod=problem.get("mask_mod"),
                                     buffers=bufs_g, return_lse=True)
        out.backward(dout)
        # Only the side stream is waited for: work flexjit queued elsewhere would not be finished.
        side.synchronize()
        got = (out.detach(), qg.grad, kg.grad, vg.grad)
        got = tuple(x.clone() for x in got)
        got_buffer_grads = {n: bufs_g[n].grad.clone() for n in learnable}
    torch.cuda.synchronize()
    assert out.dtype == dtype and lse.dtype == torch.float32 and lse.shape == (B, Hq, S)

    *ref, ref_buffer_grads = reference(q, k, v, dout, problem, bufs, scale, learnable)
    names = ("out", "dq", "dk", "dv")
    ours = {n: rel(g, r) for n, g, r in zip(names, got, ref)}
    for n in learnable:
        ours["d" + n] = rel(got_buffer_grads[n], ref_buffer_grads[n])
    print(f"\n{problem['name']} {sizes}: flexjit vs fp64 " + " ".join(f"{n}={e:.2e}" for n, e in ours.items()))
    for n in ours:
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


def test_a_mask_reading_buffers_is_built_per_call_inside_a_cuda_graph():
    # A mask that reads a buffer is rebuilt on every call; its tables come from PyTorch's
    # allocator, so the whole call (mask build included) captures into a graph, and a replay
    # after the document ids changed in place uses the new ids. Checked against float64.
    S, mods = 700, dict(mask_mod="doc[q_idx] == doc[kv_idx] && q_idx >= kv_idx")
    p = {"py_mask_mod": "(doc[q] == doc[k]) & (q >= k)"}
    q, k, v = (torch.randn(1, 2, S, 64, device="cuda", dtype=torch.bfloat16) for _ in range(3))
    doc = (torch.arange(S, device="cuda", dtype=torch.int32) // 150).contiguous()
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        flexjit.attention(q, k, v, buffers={"doc": doc}, **mods)  # compiles and warms up outside the capture
    torch.cuda.current_stream().wait_stream(stream)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = flexjit.attention(q, k, v, buffers={"doc": doc}, **mods)
    for ids in (torch.arange(S, device="cuda", dtype=torch.int32) // 150,
                (torch.arange(S, device="cuda", dtype=torch.int32) * 7) // (S + 1)):
        doc.copy_(ids)
        out.fill_(math.nan)
        graph.replay()
        torch.cuda.synchronize()
        ref = reference(q, k, v, None, p, {"doc": doc}, 1 / 8)[0]
        assert rel(out, ref) < 1e-2


@pytest.mark.parametrize("problem", DECODE, ids=[p["name"] for p in DECODE])
def test_decode_problem_matches_float64_and_flex_attention_forward(problem):
    """The suite's decode problems at their own KV length (their PyTorch mods spell it out), B <= 2
    and at most 2 kv heads with the problem's GQA ratio; paged when the problem pages."""
    torch.manual_seed(0)
    group = problem["Hq"] // problem["Hkv"]
    B, Hkv = min(problem["B"], 2), min(problem["Hkv"], 2)
    Hq, Sq, Skv, D = Hkv * group, problem["Sq"], problem["Skv"], problem["D"]
    dev = torch.device("cuda")
    dtype = torch.bfloat16
    q = torch.randn(B, Hq, Sq, D, device=dev, dtype=dtype)
    k = torch.randn(B, Hkv, Skv, D, device=dev, dtype=dtype)
    v = torch.randn(B, Hkv, Skv, D, device=dev, dtype=dtype)
    bufs = {name: suite_buffer(spec, dev) for name, spec in problem.get("buffers", {}).items()}
    lens = seq_lens(dict(problem, B=B)) if problem.get("seq_lens") else [Skv] * B
    lens_dev = torch.tensor(lens, dtype=torch.int32, device=dev)
    k_cache, v_cache, page_table = k, v, None
    page = problem.get("page_size")
    if page:  # a shuffled pool: sequence b's logical page j lives at slot perm[b * pages + j]
        pages = (Skv + page - 1) // page
        perm = torch.randperm(B * pages, device=dev)
        page_table = perm.view(B, pages).to(torch.int32)
        pool_k = torch.empty(B * pages, page, Hkv, D, device=dev, dtype=dtype)
        pool_v = torch.empty_like(pool_k)
        pad = pages * page - Skv
        kp = torch.nn.functional.pad(k, (0, 0, 0, pad)).view(B, Hkv, pages, page, D).permute(0, 2, 3, 1, 4)
        vp = torch.nn.functional.pad(v, (0, 0, 0, pad)).view(B, Hkv, pages, page, D).permute(0, 2, 3, 1, 4)
        pool_k[perm] = kp.reshape(B * pages, page, Hkv, D)
        pool_v[perm] = vp.reshape(B * pages, page, Hkv, D)
        k_cache, v_cache = pool_k, pool_v
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        poison_allocator([(B, Hq, Sq, D)], dtype)
        out = flexjit.decode(q, k_cache, v_cache, lens_dev, page_table=page_table, score_mod=problem.get("score_mod"),
                             mask_mod=problem.get("mask_mod"), buffers=bufs, host_seq_lens=lens)
        side.synchronize()
        got = out.clone()
    torch.cuda.synchronize()
    ref = reference(q, k, v, None, problem, bufs, 1.0 / math.sqrt(D), kv_lens=lens)[0]
    err = rel(got, ref)
    print(f"\n{problem['name']} B={B} Hq={Hq} Hkv={Hkv} Sq={Sq} Skv={Skv} lens={lens}: flexjit decode vs fp64 {err:.2e}")
    assert err < 1e-2, f"out: flexjit's relative error against float64 is {err:.3e}"
    # flex_attention on the same problem, each sequence's keys masked past its length
    user_mask = suite_lambda("b, h, q, k", problem["py_mask_mod"], bufs) if problem.get("py_mask_mod") else None
    def mask_mod(b, h, q_, k_):
        keep = k_ < lens_dev[b]
        return keep & user_mask(b, h, q_, k_) if user_mask else keep
    block_mask = create_block_mask(mask_mod, B, None, Sq, Skv, device=dev)
    score_mod = suite_lambda("s, b, h, q, k", problem["py_score_mod"], bufs) if problem.get("py_score_mod") else None
    peer = flex_attention(q, k, v, score_mod=score_mod, block_mask=block_mask, enable_gqa=Hq != Hkv)
    theirs, vs_flex = rel(peer, ref), rel(got, peer)
    print(f"  flex_attention vs fp64 {theirs:.2e} | flexjit vs flex_attention {vs_flex:.2e}")
    assert vs_flex < 2e-2 + theirs, f"flexjit and flex_attention differ by {vs_flex:.3e}"
