#!/usr/bin/env python3
"""zzj: a property check of zzj7's trim rule, transcribed from TileWalk::init_sparse_rows (the
patch): over random masks and lengths, the trimmed walk keeps every listed tile that starts
before q_len at the index it had, drops only tiles that start at or past q_len, and drops all of
them where the end's block comes last in the walk (the full list's last block, or the partial
list's when there are no full blocks). Prints how many past-end tiles the rule leaves in the
other walks (a partial end block beside full ones), which it walks whole by design."""
import random

TILE, SPARSE = 64, 128
TPB = SPARSE // TILE


def walk(partial, full):
    return [(b * SPARSE + s * TILE, True) for b in partial for s in range(TPB)] + \
           [(b * SPARSE + s * TILE, False) for b in full for s in range(TPB)]


def trimmed(partial, full, rows):
    num_partial = len(partial) * TPB
    num = num_partial + len(full) * TPB
    end_rows = rows % SPARSE
    if not (end_rows == 0 or end_rows > SPARSE - TILE):
        full_last = len(full) > 0
        last = full[-1] if full_last else (partial[-1] if partial else -1)
        if last == rows // SPARSE:
            past = TPB - (end_rows + TILE - 1) // TILE
            num -= past
            if not full_last:
                num_partial -= past
    w = walk(partial, full)
    return [(w[t][0], t < num_partial) for t in range(num)]


rng = random.Random(1)
checked = left_out = kept_past = 0
for it in range(1500):
    q_len, kv_len = rng.randint(1, 520), rng.randint(1, 520)
    nq, nk = (q_len + SPARSE - 1) // SPARSE, (kv_len + SPARSE - 1) // SPARSE
    kind = rng.choice(["causal", "documents", "pattern"])
    docs = sorted(rng.sample(range(1, max(q_len, kv_len) + 1), min(3, max(q_len, kv_len))))
    doc = lambda i: sum(1 for d in docs if i >= d)

    def keep(q, k):
        if kind == "causal":
            return k <= q + (kv_len - q_len)
        if kind == "documents":
            return doc(q) == doc(k) and q >= k
        return (q * 7 + k * 13) % 5 != 0

    for kb in range(nk):
        partial, full = [], []
        for qb in range(nq):
            cells = [keep(q, k) for q in range(qb * SPARSE, min((qb + 1) * SPARSE, q_len))
                     for k in range(kb * SPARSE, min((kb + 1) * SPARSE, kv_len))]
            if all(cells):
                full.append(qb)
            elif any(cells):
                partial.append(qb)
        whole = walk(partial, full)
        t = trimmed(partial, full, q_len)
        assert t == whole[:len(t)], "a kept tile moved or changed class"
        assert all(start >= q_len for start, _ in whole[len(t):]), "a tile with rows was dropped"
        end_block_last = (full and full[-1] == q_len // SPARSE) or (not full and partial and partial[-1] == q_len // SPARSE)
        past = sum(1 for start, _ in t if start >= q_len)
        assert past == 0 or not end_block_last, (q_len, partial, full)
        checked += 1
        left_out += len(whole) - len(t)
        kept_past += past
print(f"walks checked {checked}, tiles left out {left_out}, past-end tiles walked by design {kept_past}")
