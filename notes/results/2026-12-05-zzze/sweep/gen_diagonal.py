# (zzze) Random score_mods whose buffer reads go through kv_idx - q_idx (the diagonal values'
# candidates) beside other reads, masks and forms, for run_diagonal.sh.
# Usage: gen_diagonal.py SEED N, one "score_mod<TAB>mask_mod" line per pair.
import random, sys
R = random.Random(int(sys.argv[1]) if len(sys.argv) > 1 else 1)
DIFFS = ["kv_idx - q_idx", "q_idx - kv_idx", "2 * (kv_idx - q_idx)", "-(q_idx - kv_idx) + window",
         "abs(kv_idx - q_idx)", "min(abs(kv_idx - q_idx), 31)", "clamp(kv_idx - q_idx + 64, 0, 127)",
         "(kv_idx - q_idx) / 8 + 40", "(q_idx - kv_idx) % 7",
         "where(kv_idx - q_idx > 0, 16, 0) + min(abs(kv_idx - q_idx), 15)",
         "min(15, 8 + int(log(float(abs(kv_idx - q_idx) + 1)) * 2.0))"]
def diff(): return R.choice(DIFFS)
def read():
    k = R.randint(0, 4)
    if k == 0: return f"tab[h][{diff()} + 4096]"
    if k == 1: return f"float(ftab[{diff()} + 4096])"
    if k == 2: return f"float(itab[{diff()} + 4096])"
    if k == 3: return f"tab[h % 2][{diff()} + 4096] * slope[h]"
    return f"where(flags[{diff()} + 4096] != 0, 0.5, -0.25)"
def score():
    k = R.randint(0, 8)
    if k == 0: return f"score + {read()}"
    if k == 1: return f"score * 0.5 + {read()} * {read()}"
    if k == 2: return f"where(itab[{diff()} + 4096] > 2, score + {read()}, score - 1.0)"
    if k == 3: return f"tanh(score / cap) * cap + {read()}"
    if k == 4: return f"score * {read()}"
    if k == 5: return f"score + {read()} + bias[h][kv_idx]"
    if k == 6: return f"score + {read()} + slope[h] * float(kv_idx - q_idx)"
    if k == 7: return f"score + {read()} + float(q_idx) * 0.001"
    return f"score - {read()} / 4.0"
MASKS = ["", "q_idx >= kv_idx", "doc[q_idx] == doc[kv_idx]", "kv_idx - q_idx < window && q_idx >= kv_idx",
         "q_idx >= kv_idx || kv_idx < 64"]
n = int(sys.argv[2]) if len(sys.argv) > 2 else 10
for _ in range(n):
    print(f"{score()}\t{R.choice(MASKS)}")
