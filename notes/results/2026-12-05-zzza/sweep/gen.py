# (zzza) Random score_mod / mask_mod pairs for run.sh: typed expressions over every operator and
# builtin, buffers doc / start (i32, one indexed by the other's values), flags (u8), bias (f32, 2-D),
# table (bf16), slope (f32) and the parameters cap (float) and window (int).
# Usage: gen.py SEED N, one "score_mod<TAB>mask_mod" line per pair.
import random, sys
R = random.Random(int(sys.argv[1]) if len(sys.argv) > 1 else 1)
INT_LEAVES = ["q_idx", "kv_idx", "h", "b", "q_len", "kv_len", "window"]
def int_expr(d):
    if d <= 0 or R.random() < 0.25:
        c = R.random()
        if c < 0.7: return R.choice(INT_LEAVES)
        return str(R.randint(-3, 700))
    k = R.randint(0, 9)
    if k == 0: return f"({int_expr(d-1)} {R.choice(['+','-','*'])} {int_expr(d-1)})"
    if k == 1: return f"({int_expr(d-1)} {R.choice(['/','%'])} {R.choice(['64','7','3',int_expr(d-1)])})"
    if k == 2: return f"doc[{int_expr(d-1)}]"
    if k == 3: return f"start[doc[{int_expr(d-1)}]]"
    if k == 4: return f"{R.choice(['min','max'])}({int_expr(d-1)}, {int_expr(d-1)})"
    if k == 5: return f"abs({int_expr(d-1)})"
    if k == 6: return f"where({bool_expr(d-1)}, {int_expr(d-1)}, {int_expr(d-1)})"
    if k == 7: return f"int(flags[{int_expr(d-1)}])"
    if k == 8: return f"int({float_expr(d-1)})"
    return f"clamp({int_expr(d-1)}, 0, {int_expr(d-1)})"
def bool_expr(d):
    if d <= 0 or R.random() < 0.15:
        return R.choice(["q_idx >= kv_idx", "true", "kv_idx < kv_len", "doc[q_idx] == doc[kv_idx]"])
    k = R.randint(0, 5)
    if k <= 1: return f"({int_expr(d-1)} {R.choice(['<','<=','>','>=','==','!='])} {int_expr(d-1)})"
    if k == 2: return f"({bool_expr(d-1)} {R.choice(['&&','||'])} {bool_expr(d-1)})"
    if k == 3: return f"!({bool_expr(d-1)})"
    if k == 4: return f"({float_expr(d-1)} < {float_expr(d-1)})"
    return f"(flags[{int_expr(d-1)}] != 0)"
def float_expr(d, score=False):
    if d <= 0 or R.random() < 0.2:
        c = R.random()
        if score and c < 0.5: return "score"
        if c < 0.7: return R.choice(["cap", "0.5", "1.25", "float(q_idx)", "slope[h]"])
        return f"{R.uniform(-3, 3):.3f}"
    k = R.randint(0, 11)
    f = lambda: float_expr(d-1, score)
    if k <= 1: return f"({f()} {R.choice(['+','-','*'])} {f()})"
    if k == 2: return f"({f()} / {R.choice(['30.0','7.5', 'cap'])})"
    if k == 3: return f"{R.choice(['tanh','sigmoid','sin','cos','abs','exp2'])}({f()})"
    if k == 4: return f"bias[{int_expr(d-1)}][{int_expr(d-1)}]"
    if k == 5: return f"float(table[{int_expr(d-1)}])"
    if k == 6: return f"where({bool_expr(d-1)}, {f()}, {f()})"
    if k == 7: return f"({f()} * float({int_expr(d-1)}))"
    if k == 8: return f"{R.choice(['min','max'])}({f()}, {f()})"
    if k == 9: return f"clamp({f()}, -5.0, 5.0)"
    if k == 10: return f"float({int_expr(d-1)})"
    return f"(slope[h] * float(kv_idx - q_idx))"
n = int(sys.argv[2]) if len(sys.argv) > 2 else 50
for i in range(n):
    s = float_expr(3, True)
    if "score" not in s: s = f"score + {s}"
    m = bool_expr(3)
    print(s + "\t" + m)
