#pragma once
/// \file
/// Block configurations: how a kernel tiles its work. Part of every kernel's specialisation and of
/// the autotuner's search space.

#include <string>

namespace flexjit {

/// Tile shape and parallelism of one attention kernel.
struct BlockConfig {
  int block_m = 0;    ///< query rows per CTA (a multiple of 16 * warps / m-tiles; divides 128, or 192 on the warp-specialised path without a block mask)
  int block_n = 0;    ///< key/value rows per pipeline step (multiple of 16; divides 128, or 176 on the warp-specialised path without a block mask)
  int num_warps = 0;  ///< warps per CTA that multiply: 1, 2, 4, 8, or 12 on the warp-specialised path (which adds a producer warpgroup)
  int stages = 0;     ///< shared-memory pipeline depth for K/V tiles (>= 2)
  bool wgmma = false; ///< Hopper path (sm_90a): warpgroup MMAs from shared memory instead of mma.sync
  /// Hopper warp-specialised path (sm_90a, forward only; implies wgmma): a producer warpgroup
  /// loads Q, K and V with TMA into an mbarrier pipeline, and the num_warps / 4 consumer
  /// warpgroups only multiply and do the softmax.
  bool warp_specialized = false;
  /// Hopper TMA loads (sm_90a, decode only; the "t" suffix): K/V tiles, or a paged cache's pages,
  /// are copied by the tensor memory accelerator into an mbarrier ring instead of by every thread
  /// with cp.async.
  bool tma = false;

  /// True when every field is set (non-zero).
  bool is_set() const noexcept { return block_m > 0 && block_n > 0 && num_warps > 0 && stages > 0; }
  /// "m128n64w4s2" ("m128n128w8s2g" for the wgmma path, "m128n128w8s2ws" for the
  /// warp-specialised one, "m16n128w8s3t" for decoding through TMA): compact text used in cache
  /// keys, tables and messages.
  std::string str() const;
  /// Parses the text form of str(); throws UsageError naming the bad part.
  static BlockConfig parse(const std::string& text);
  /// Field-wise equality.
  bool operator==(const BlockConfig& other) const noexcept {
    return block_m == other.block_m && block_n == other.block_n && num_warps == other.num_warps &&
           stages == other.stages && wgmma == other.wgmma &&
           warp_specialized == other.warp_specialized && tma == other.tma;
  }
  /// Field-wise inequality.
  bool operator!=(const BlockConfig& other) const noexcept { return !(*this == other); }
};

}  // namespace flexjit
