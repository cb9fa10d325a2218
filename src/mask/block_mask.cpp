#include "flexjit/block_mask.hpp"

#include <algorithm>
#include <mutex>
#include <optional>

#include "flexjit/error.hpp"
#include "mask/tables.hpp"

namespace flexjit {

struct BlockMask::State {
  BlockMaskShape shape;
  std::mutex mutex;  // guards the lazily filled members below
  std::optional<BlockMaskTables> host;
  DeviceBuffer device;
  std::optional<DeviceTables> device_tables;
  BuiltLengths built_lengths;  // set by build_on_gpu with lengths
  std::string built_from;      // the mask_mod's canonical text (build_on_cpu, build_on_gpu)
};

BlockMask::BlockMask(std::shared_ptr<State> state) : state_(std::move(state)) {}

namespace mask {

void check_block_mask_shape(const BlockMaskShape& s) {
  // Lengths and blocks count in int (a length rounded up to whole blocks must not wrap), as the
  // attention calls do: at most 2^30 each.
  auto check = [](int value, const char* name, bool bounded) {
    if (value < 1)
      throw ShapeError(std::string("block mask ") + name + " must be at least 1, got " + std::to_string(value));
    if (bounded && value > (1 << 30))
      throw ShapeError(std::string("block mask ") + name + " must be at most 2^30 = 1073741824, got " +
                       std::to_string(value));
  };
  check(s.batch, "batch", false);
  check(s.heads, "heads", false);
  check(s.q_len, "q_len", true);
  check(s.kv_len, "kv_len", true);
  check(s.q_block, "q_block", true);
  check(s.kv_block, "kv_block", true);
}

}  // namespace mask

namespace {

std::shared_ptr<BlockMask::State> host_state(const BlockMaskShape& shape, BlockMaskTables tables) {
  auto state = std::make_shared<BlockMask::State>();
  state->shape = shape;
  state->host = std::move(tables);
  return state;
}

}  // namespace

BlockMask BlockMask::build_on_cpu(const Expr& mask, int batch, int heads, int q_len, int kv_len,
                                  const EvalInputs& inputs, int q_block, int kv_block) {
  if (mask.kind() != ModKind::mask)
    throw UsageError("BlockMask::build_on_cpu needs a mask_mod, got a score_mod");
  if (batch < 1 || heads < 1)
    throw ShapeError("block mask sizes must be positive: batch " + std::to_string(batch) + ", heads " +
                     std::to_string(heads) + ", q_len " + std::to_string(q_len) + ", kv_len " + std::to_string(kv_len));
  BlockMaskShape shape{mask.uses("b") ? batch : 1, mask.uses("h") ? heads : 1, q_len, kv_len,
                       q_block, kv_block};
  mask::check_block_mask_shape(shape);
  const int nq = shape.num_q_blocks(), nk = shape.num_kv_blocks();
  std::vector<unsigned char> classes(static_cast<size_t>(shape.batch) * shape.heads * nq * nk);
  const expr::BoundEvaluator eval = mask.bind(inputs);
  EvalPoint point;
  point.q_len = q_len;
  point.kv_len = kv_len;
  for (int z = 0; z < shape.batch * shape.heads; ++z) {
    point.b = z / shape.heads;
    point.h = z % shape.heads;
    for (int i = 0; i < nq; ++i)
      for (int j = 0; j < nk; ++j) {
        bool kept = false, dropped = false;
        const int q_end = std::min(q_len, (i + 1) * q_block);
        const int kv_end = std::min(kv_len, (j + 1) * kv_block);
        for (point.q_idx = i * q_block; point.q_idx < q_end && !(kept && dropped); ++point.q_idx)
          for (point.kv_idx = j * kv_block; point.kv_idx < kv_end; ++point.kv_idx) {
            const bool keep = eval(point) != 0.0;
            kept |= keep;
            dropped |= !keep;
            if (kept && dropped) break;
          }
        classes[(static_cast<size_t>(z) * nq + i) * nk + j] =
            !kept ? mask::kEmpty : (dropped ? mask::kPartial : mask::kFull);
      }
  }
  BlockMask built(host_state(shape, mask::tables_from_classes(shape, classes)));
  built.state_->built_from = mask.canonical();
  return built;
}

BlockMask BlockMask::from_tables(const BlockMaskShape& shape, BlockMaskTables tables) {
  mask::check_block_mask_shape(shape);
  const std::vector<unsigned char> classes = mask::classes_from_kv_tables(shape, tables);
  BlockMaskTables derived = mask::tables_from_classes(shape, classes);
  const bool has_q = !tables.q_num_blocks.empty() || !tables.q_indices.empty();
  if (has_q) {
    auto same_lists = [&](const std::vector<int32_t>& num, const std::vector<int32_t>& idx,
                          const std::vector<int32_t>& want_num, const std::vector<int32_t>& want_idx,
                          const char* name) {
      const int nq = shape.num_q_blocks();
      if (num.size() != want_num.size() || idx.size() != want_idx.size())
        throw ShapeError(std::string("block mask table ") + name +
                         " has the wrong size for this shape; leave the q_* tables empty to "
                         "derive them from the kv_* tables");
      for (size_t row = 0; row < want_num.size(); ++row) {
        bool same = num[row] == want_num[row];
        for (int e = 0; same && e < want_num[row]; ++e)
          same = idx[row * nq + e] == want_idx[row * nq + e];
        if (!same)
          throw ShapeError(std::string("block mask table ") + name + " row " +
                           std::to_string(row) +
                           " is not the transpose of the kv_* tables; leave the q_* tables "
                           "empty to derive them");
      }
    };
    same_lists(tables.q_num_blocks, tables.q_indices, derived.q_num_blocks, derived.q_indices,
               "q_indices");
    if (!tables.full_q_num_blocks.empty() || !tables.full_q_indices.empty())
      same_lists(tables.full_q_num_blocks, tables.full_q_indices, derived.full_q_num_blocks,
                 derived.full_q_indices, "full_q_indices");
  }
  return BlockMask(host_state(shape, std::move(derived)));
}

BlockMask BlockMask::all_full(const BlockMaskShape& shape) {
  mask::check_block_mask_shape(shape);
  std::vector<unsigned char> classes(
      static_cast<size_t>(shape.batch) * shape.heads * shape.num_q_blocks() * shape.num_kv_blocks(),
      mask::kFull);
  return BlockMask(host_state(shape, mask::tables_from_classes(shape, classes)));
}

BlockMask BlockMask::from_device(const BlockMaskShape& shape, DeviceBuffer storage) {
  return from_device(shape, std::move(storage), BuiltLengths{});
}

BlockMask BlockMask::from_device(const BlockMaskShape& shape, DeviceBuffer storage, BuiltLengths built,
                                 std::string built_from) {
  mask::check_block_mask_shape(shape);
  const mask::TableLayout layout = mask::table_layout(shape);
  if (storage.bytes() < layout.total_bytes)
    throw ShapeError("block mask device storage holds " + std::to_string(storage.bytes()) +
                     " bytes; this shape needs " + std::to_string(layout.total_bytes));
  auto state = std::make_shared<State>();
  state->shape = shape;
  state->built_lengths = built;
  state->built_from = std::move(built_from);
  auto* base = static_cast<const unsigned char*>(storage.data());
  const int32_t* p[8];
  for (int i = 0; i < 8; ++i) p[i] = reinterpret_cast<const int32_t*>(base + layout.offset[i]);
  state->device_tables = DeviceTables{p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7]};
  state->device = std::move(storage);
  return BlockMask(std::move(state));
}

const BlockMaskShape& BlockMask::shape() const noexcept { return state_->shape; }

const BlockMask::BuiltLengths& BlockMask::built_lengths() const noexcept { return state_->built_lengths; }

const std::string& BlockMask::built_from() const noexcept { return state_->built_from; }

bool BlockMask::on_device() const noexcept {
  std::lock_guard<std::mutex> lock(state_->mutex);
  return state_->device_tables.has_value();
}

const BlockMaskTables& BlockMask::host_tables() const {
  std::lock_guard<std::mutex> lock(state_->mutex);
  if (!state_->host) {
    const mask::TableLayout layout = mask::table_layout(state_->shape);
    size_t counts[8];
    mask::table_sizes(state_->shape, counts);
    std::vector<unsigned char> bytes(layout.total_bytes);
    synchronize(nullptr);
    state_->device.download(bytes.data(), layout.total_bytes);
    BlockMaskTables t;
    std::vector<int32_t>* tables[8] = {&t.kv_num_blocks, &t.kv_indices, &t.full_kv_num_blocks,
                                       &t.full_kv_indices, &t.q_num_blocks, &t.q_indices,
                                       &t.full_q_num_blocks, &t.full_q_indices};
    for (int i = 0; i < 8; ++i) {
      tables[i]->resize(counts[i]);
      std::copy_n(reinterpret_cast<const int32_t*>(bytes.data() + layout.offset[i]), counts[i],
                  tables[i]->data());
    }
    state_->host = std::move(t);
  }
  return *state_->host;
}

const BlockMask::DeviceTables& BlockMask::device_tables() const {
  std::lock_guard<std::mutex> lock(state_->mutex);
  if (!state_->device_tables) {
    const mask::TableLayout layout = mask::table_layout(state_->shape);
    std::vector<unsigned char> bytes(layout.total_bytes, 0);
    const BlockMaskTables& t = *state_->host;
    const std::vector<int32_t>* tables[8] = {&t.kv_num_blocks, &t.kv_indices, &t.full_kv_num_blocks,
                                             &t.full_kv_indices, &t.q_num_blocks, &t.q_indices,
                                             &t.full_q_num_blocks, &t.full_q_indices};
    for (int i = 0; i < 8; ++i)
      std::copy(tables[i]->begin(), tables[i]->end(),
                reinterpret_cast<int32_t*>(bytes.data() + layout.offset[i]));
    DeviceBuffer storage = DeviceBuffer::allocate(layout.total_bytes);
    storage.upload(bytes.data(), bytes.size());
    auto* base = static_cast<const unsigned char*>(storage.data());
    const int32_t* p[8];
    for (int i = 0; i < 8; ++i) p[i] = reinterpret_cast<const int32_t*>(base + layout.offset[i]);
    state_->device_tables = DeviceTables{p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7]};
    state_->device = std::move(storage);
  }
  return *state_->device_tables;
}

double BlockMask::density() const {
  const BlockMaskTables& t = host_tables();
  long long kept = 0;
  for (size_t i = 0; i < t.kv_num_blocks.size(); ++i) kept += t.kv_num_blocks[i] + t.full_kv_num_blocks[i];
  const double total = static_cast<double>(t.kv_num_blocks.size()) * shape().num_kv_blocks();
  return total > 0 ? static_cast<double>(kept) / total : 0.0;
}

double BlockMask::partial_fraction() const {
  const BlockMaskTables& t = host_tables();
  long long partial = 0;
  for (int32_t n : t.kv_num_blocks) partial += n;
  const double total = static_cast<double>(t.kv_num_blocks.size()) * shape().num_kv_blocks();
  return total > 0 ? static_cast<double>(partial) / total : 0.0;
}

}  // namespace flexjit
