# (zzza) Arm M's addressing, checked on the CPU against the code it replaces (python3, no GPU).
# 1. The XOR form: for WgmmaTile::offset(row, chunk) = row * 128 + (chunk / 8) * slab +
#    ((chunk % 8) ^ (row % 8)) * 16 (one box), (base + (c / 8) * slab) ^ ((c % 8) * 16) with
#    base = offset(row, hi) equals offset(row, c + hi) for every even c, both halves and any
#    1024-aligned tile start.
# 2. stmatrix.x4's lanes: lane l names row l % 8 of matrix l / 8, and thread t's register i holds
#    matrix i's row t / 4, columns 2 (t % 4) and + 1; so the element the old code stored from
#    thread t's a[kk][i] (row g8 + 8 (i & 1), chunk 2 kk + (i >> 1), + 4 t4) lands where it did.
ok = True
for rows in (64, 128):
    slab = rows * 128
    def offset(row, chunk):
        return row * 128 + (chunk // 8) * slab + ((chunk % 8) ^ (row & 7)) * 16
    for start in (0, 1024 * 37):
        for row0 in range(0, rows, 16):
            for step0 in range(8):
                for kk in range(4):
                    for lane in range(32):
                        row, hi = row0 + (lane & 7) + ((lane >> 3) & 1) * 8, lane >> 4
                        c = 2 * (step0 + kk)
                        new = (start + offset(row, hi) + (c // 8) * slab) ^ ((c % 8) << 4)
                        ok &= new == start + offset(row, c + hi)
for t in range(32):
    g8, t4 = t // 4, t % 4
    for i in range(4):
        lane = 8 * i + g8
        ok &= (g8 + 8 * (i & 1), i >> 1) == ((lane & 7) + ((lane >> 3) & 1) * 8, lane >> 4)
print("arm M's addresses match the 4-byte stores'" if ok else "MISMATCH")
raise SystemExit(0 if ok else 1)
