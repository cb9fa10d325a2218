#!/usr/bin/env python3
"""Writes wgmma_rate.cu (zzo): the wgmma wrappers below are generated (their operand lists are long)."""
def wrapper(n, rs):
    regs = n // 2
    d = ", ".join(f"%{i}" for i in range(regs))
    outs = ", ".join(f'"+f"(d[{i}])' for i in range(regs))
    if rs:
        a = ", ".join(f"%{regs + i}" for i in range(4))
        ins = ", ".join(f'"r"(a[{i}])' for i in range(4)) + f', "l"(b)'
        body = f"{{{d}}}, {{{a}}}, %{regs + 4}, p, 1, 1, 0;"
        sig = f"__device__ __forceinline__ void wgmma_rs_n{n}(float (&d)[{regs}], const u32 (&a)[4], u64 b)"
    else:
        ins = '"l"(a), "l"(b)'
        body = f"{{{d}}}, %{regs}, %{regs + 1}, p, 1, 1, 0, 0;"
        sig = f"__device__ __forceinline__ void wgmma_ss_n{n}(float (&d)[{regs}], u64 a, u64 b)"
    return (f"{sig} {{\n  asm volatile(\"{{\\n.reg .pred p;\\nsetp.ne.b32 p, 1, 0;\\n\"\n"
            f"               \"wgmma.mma_async.sync.aligned.m64n{n}k16.f32.bf16.bf16 {body}\\n}}\\n\"\n"
            f"               : {outs}\n               : {ins});\n}}\n")
src = open("wgmma_rate.cu.in").read().replace("@WRAPPERS@", "".join(wrapper(n, rs) for n in (64, 128) for rs in (False, True)))
open("wgmma_rate.cu", "w").write(src)
