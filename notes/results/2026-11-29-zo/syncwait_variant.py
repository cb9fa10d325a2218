import sys
p=sys.argv[1]
s=open(p).read()
a_old="""        if (lane == 0) {
          // Only the lane that hands the buffer back waits for it (see the slices' writers).
          mbarrier_wait(dq_full + 8 * buffer, static_cast<u32>((t / DQ_RING) & 1));
"""
a_new="""        // Every lane sees the phase before lane 0 hands the buffer back (see the slices' writers).
        mbarrier_wait(dq_full + 8 * buffer, static_cast<u32>((t / DQ_RING) & 1));
        __syncwarp();
        if (lane == 0) {
"""
assert s.count(a_old)==1
s=s.replace(a_old,a_new)
b_start=s.index("            // Only lane 0, which hands the buffer back, waits for the piece.")
b_end=s.index("            if (piece == 0) {", b_start)
b_new="""            // The whole warp waits for the piece and meets at a __syncwarp before lane 0 hands the
            // buffer back: lanes 1-31 run apart from lane 0 (which took its own path to the turn),
            // and without the meeting they could still be polling this phase when lane 0 had added
            // the piece, handed the buffer back and the consumers had staged the next piece: the
            // barrier a phase on, at the parity they wait for, and they would wait for ever
            // (notes/perf.md, "(zo)"). (Variant of main's lane-0-only wait, for an A/B.)
            if (in_stage)
              mbarrier_wait(dq_full_stage + 8 * w, static_cast<u32>(t) & 1u);
            else
              mbarrier_wait(dq_full + 8 * w, (DQ_PIECE_IN_STAGE ? static_cast<u32>(t) : k) & 1u);
            __syncwarp();
"""
s=s[:b_start]+b_new+s[b_end:]
open(p,'w').write(s)
