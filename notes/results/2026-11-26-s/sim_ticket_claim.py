# Persistent forward's ticket scheduler: makespan when a CTA claims its next work tile at the
# start of its current one (today) or near its end (claim after the tile's loads).
import heapq
def order(heads, per_head, section):
    out = []
    for s0 in range(0, heads, section):
        n = min(section, heads - s0)
        for r in range(n * per_head):
            out.append((s0 + r % n, per_head - 1 - r // n))
    return out
def makespan(costs, ctas, lead):
    # lead: how long before the end of its current tile a CTA claims the next (None: at the start).
    # Events: (claim time, cta). Each CTA owns a queue of at most one claimed tile.
    t_free = [0.0] * ctas; q = []
    it = iter(costs)
    # initial: CTA i takes ticket i (blockIdx), and claims its next one per the policy
    busy_until = [0.0] * ctas; pending = [None] * ctas
    for c in range(ctas):
        x = next(it, None)
        if x is None: break
        busy_until[c] = x
        heapq.heappush(q, ((0.0 if lead is None else max(0.0, x - lead)), c))
    end = max(busy_until)
    while q:
        t, c = heapq.heappop(q)
        x = next(it, None)
        if x is None: continue
        start = busy_until[c]; busy_until[c] = start + x
        heapq.heappush(q, ((start if lead is None else max(start, start + x - lead)), c))
    return max(busy_until)
for name, cost in [("causal", lambda h, m: m + 1), ("prefix LM 1/4", lambda h, m: max(m + 1, 8))]:
    heads, per_head, ctas, over = 64, 32, 132, 1.9
    for section in (17, 64):
        tiles = [cost(h, m) + over for h, m in order(heads, per_head, section)]
        ideal = sum(tiles) / ctas
        a = makespan(tiles, ctas, None); b = makespan(tiles, ctas, 2.0)
        print(f"{name:14} section {section:2}: ideal {ideal:7.1f}  claim at start {a:7.1f} ({ideal / a:.3f})  claim 2 tiles before the end {b:7.1f} ({ideal / b:.3f})  gain {a / b:.3f}")
