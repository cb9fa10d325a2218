# Inputs for the sanitizer run: B=2, 96 heads, 651 keys and queries, d128, 5 documents.
import numpy as np, sys
d = sys.argv[1]; rng = np.random.default_rng()
B, H, S, D = 2, 96, 651, 128
for n in ("q", "k", "v", "do"):
    np.save(f"{d}/{n}.npy", rng.standard_normal((B, H, S, D), dtype=np.float32))
doc = np.repeat(np.arange(5, dtype=np.int32), [100, 251, 37, 200, 63])
np.save(f"{d}/doc.npy", doc)
