// Parameter blocks of the learnable-buffer gradient (the dQ kernel's extra argument and the reduce
// kernels'), shared by the host (C++17) and the device (NVRTC) so the layouts cannot drift.
#pragma once

// Reads of learnable buffers one dQ kernel accumulates; Attention's constructor rejects a
// score_mod with more (distinct reads of learnable buffers), naming this limit.
#define FLEXJIT_MAX_BUFFER_GRAD_READS 8

struct FlexjitBufferGradRead {
  float* grad;     // fp32 gradient of the buffer, contiguous in its shape (per_score: written here)
  float* scratch;  // per-CTA (per_head, diagonal) or per-warp (arbitrary) partial sums
};

// Extra argument of a dQ kernel built with buffer gradients.
struct FlexjitBufferGradParams {
  FlexjitBufferGradRead read[FLEXJIT_MAX_BUFFER_GRAD_READS];
  long long numel[FLEXJIT_MAX_BUFFER_GRAD_READS];  // elements of each read's buffer (arbitrary)
  int band_len;  // diagonal: slots per CTA = kv_len + BLOCK_M - 1
  int reserved;
};

// One reduce kernel launch: the partial sums of one read into its gradient, in a fixed order.
struct FlexjitBufferGradReduceParams {
  float* grad;
  float* scratch;        // what the dQ kernel wrote
  float* partial;        // diagonal: [B * Hq][q_len + kv_len - 1] sums over query tiles
  long long numel;       // elements of the buffer
  long long total_warps; // arbitrary: per-warp copies in `scratch`
  int read;              // which read (flexjit_bg_offset)
  int batch;
  int num_q_heads;
  int q_len;
  int kv_len;
  int num_q_tiles;
  int block_m;
  int band_len;
};
