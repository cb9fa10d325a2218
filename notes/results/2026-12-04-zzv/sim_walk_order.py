#!/usr/bin/env python3
"""Greedy list-scheduling model of the persistent forward's walk and of the backward's launch order
on long documents (B=1 H=16 S=16384, the suite's segments): each CTA slot takes the next work item
when it frees; an item costs a fixed part plus its key tiles (forward: 128-row query tile over
128-key tiles) or query tiles (backward dK/dV: 128-row kv tile over 64-row query tiles).
Prints the model's end time and the slots' mean busy fraction (ncu's SM active avg / elapsed)."""
import heapq

SEGMENTS = [678, 336, 18, 176, 264, 78, 542, 1489, 426, 2908, 104, 149, 1209, 715, 236, 284, 3999, 1357, 619, 797]
HEADS = 16
S = sum(SEGMENTS)
doc, start, end = [], {}, {}
pos = 0
for i, n in enumerate(SEGMENTS):
    doc += [i] * n
    start[i], end[i] = pos, pos + n
    pos += n


def simulate(costs, slots):
    free = [0.0] * slots
    finish_all, busy = 0.0, 0.0
    for c in costs:
        t = heapq.heappop(free)
        finish_all = max(finish_all, t + c)
        busy += c
        heapq.heappush(free, t + c)
    return round(finish_all, 1), round(busy / slots / finish_all, 3)


# Forward: query tile m (128 rows) visits key tiles from its first row's document start to itself.
fwd_tiles = S // 128
fwd_w = [(m * 128 + 127) // 128 - start[doc[m * 128]] // 128 + 1 for m in range(fwd_tiles)]


def forward_walk(section, key):
    order = []
    for s0 in range(0, HEADS, section):
        for m in sorted(range(fwd_tiles), key=key):
            order += [1.5 + fwd_w[m]] * min(section, HEADS - s0)
    return order


print("forward, 132 CTAs (sections of heads; query tiles last-first / by key count):")
for section in (5, 4, 8, 16):
    print(f"  sections of {section:2d}: last-first {simulate(forward_walk(section, lambda m: -m), 132)}"
          f"  heaviest-first {simulate(forward_walk(section, lambda m: -fwd_w[m]), 132)}")

# Backward dK/dV: kv tile j (128 rows) visits the 64-row query tiles from its diagonal to its last
# row's document end.
bwd_tiles = (S + 127) // 128
bwd_w = [(end[doc[min(S, j * 128 + 128) - 1]] - 1) // 64 - (j * 128) // 64 + 1 for j in range(bwd_tiles)]
ascending = [2 + bwd_w[j] for _ in range(HEADS) for j in range(bwd_tiles)]
heaviest = sorted(ascending, reverse=True)
print("backward dK/dV (kv tiles ascending per head, as causal's model orders them / all heaviest first):")
for slots in (132, 264):
    print(f"  {slots} slots: ascending {simulate(ascending, slots)}  heaviest-first {simulate(heaviest, slots)}")
