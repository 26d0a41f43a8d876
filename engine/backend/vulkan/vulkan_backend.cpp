#include "hearth/engine/backend/vulkan/vulkan_backend.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>
#include <memory>
#include <numeric>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "hearth/engine/backend/activation_plan.h"
#include "hearth/engine/backend/graph_fusion.h"
#include "hearth/engine/backend/weight_layout.h"
#include "hearth/engine/backend/vulkan/kernels.h"
#include "arena.h"
#include "backend_buffer.h"
#include "kernel_scratch.h"
#include "hearth/engine/backend/vulkan/transfer.h"
#include "hearth/core/checked_math.h"

namespace hearth::vulkan {
namespace {

using backend::Graph;
using backend::Node;
using backend::Op;
using backend::Tensor;
using backend::TensorKind;

class VulkanBackendImpl final : public VulkanBackend {
 public:
  Status init(const VulkanConfig& config, Logger logger) {
    HEARTH_TRY(ctx_, VulkanContext::create(config, logger));
    allocator_ = std::make_unique<DeviceAllocator>(*ctx_);
    HEARTH_TRY(transfer_, Transfer::create(*ctx_, *allocator_));
    if (!config.pipeline_cache_path.empty()) {
      HEARTH_TRY(cache_, PipelineCache::open(*ctx_, config.pipeline_cache_path));
    }
    pipelines_ = std::make_unique<PipelineSet>(*ctx_, cache_.get());
    KernelTuning tuning = default_tuning(*ctx_);
    if (config.attention_split_positions) tuning.attention_split_positions = *config.attention_split_positions;
    kernels_ = std::make_unique<Kernels>(*ctx_, *pipelines_, tuning);
    HEARTH_TRY(seq_, CommandSequence::create(*ctx_, kMaxDispatches, config.profiling));
    HEARTH_TRY(const MatvecPath path, resolve_matvec_path(config.matvec_path, ctx_->description()));
    int_dot_ = path == MatvecPath::IntegerDot;
    logger.info("Vulkan: products (matrix-vector and prefill tiles): {}", int_dot_ ? "int-dot" : "plain");
    return {};
  }

  ~VulkanBackendImpl() override {
    if (cache_) (void)cache_->save();
    seq_.reset();
    weights_.clear();
    activations_.buffer.reset();
    scratch_.release();
    inputs_.buffer.reset();
    output_.reset();
    kernels_.reset();
    pipelines_.reset();
    cache_.reset();
    transfer_.reset();
    allocator_.reset();
  }

  const char* name() const override { return "vulkan"; }

  backend::DeviceInfo device() const override {
    const auto& d = ctx_->description();
    backend::DeviceInfo info;
    info.name = d.name;
    info.kind = d.kind == DeviceKind::Discrete     ? backend::DeviceKind::DiscreteGpu
                : d.kind == DeviceKind::Integrated ? backend::DeviceKind::IntegratedGpu
                                                   : backend::DeviceKind::Other;
    const auto budget = allocator_->budget();
    info.memory_total = budget.device_local_total;
    info.memory_free = budget.free_bytes();
    return info;
  }

  bool supports(Op op, DType type) const override {
    switch (op) {
      case Op::GetRows:
      case Op::MatMul: return Kernels::supports_weights(type);
      case Op::KvStore:
      case Op::Attention: return type == DType::F16 || type == DType::Q8_0;
      case Op::MatMulId: return Kernels::supports_weights(type);
      default: return type == DType::F32;
    }
  }

  Result<std::unique_ptr<backend::Buffer>> allocate(size_t bytes, backend::BufferUsage usage) override {
    HEARTH_TRY(auto b, Buffer::create(*ctx_, *allocator_, bytes, MemoryUsage::DeviceLocal));
    return std::unique_ptr<backend::Buffer>(new VulkanBuffer(std::move(b), usage, counters_));
  }

  Status compute(Graph& graph) override;

  // The KV-store and attention shaders take a table per token (TokenTables),
  // so the scheduler's passes over several sequences run here.
  bool supports_sequence_batches() const override { return true; }

  // Only the activation arena is device memory: the conversion buffers and
  // prefill tiles of the reservation belong to the CPU kernels (the Vulkan
  // kernels read F32 activations directly), so they are not allocated here.
  Status reserve_scratch(const backend::ScratchReservation& reservation) override {
    if (reservation.activation_bytes > activations_.buffer.size()) {
      HEARTH_CHECK(set_activation_arena(reservation.activation_bytes));
    }
    note_scratch();
    return {};
  }

  // scratch_bytes counts the device-local activation arena plus buffers
  // allocated with BufferUsage::Scratch. The host-visible staging buffers
  // (per-step inputs, the output read back) are not device memory and not
  // part of kv::scratch_sizes; stats() reports them as staging_bytes.
  backend::MemoryUse memory_use() const override {
    backend::MemoryUse use;
    use.weights_bytes = stats_.weight_bytes + counters_->of(backend::BufferUsage::Weights);
    use.kv_bytes = counters_->of(backend::BufferUsage::KvCache);
    use.scratch_bytes =
        counters_->of(backend::BufferUsage::Scratch) + activations_.buffer.size() + scratch_.buffer_bytes();
    use.scratch_high_water_bytes = std::max(scratch_high_water_, use.scratch_bytes);
    use.scratch_growths = scratch_growths_;
    return use;
  }

  VulkanBackendStats stats() const override {
    VulkanBackendStats s = stats_;
    s.device_bytes = allocator_->stats().device_bytes;
    s.used_bytes = allocator_->stats().used_bytes;
    s.activation_bytes = activations_.buffer.size();
    s.kernel_scratch_bytes = scratch_.buffer_bytes();
    s.matvec_path = int_dot_ ? MatvecPath::IntegerDot : MatvecPath::Plain;
    s.staging_bytes = inputs_.buffer.size() + output_.size();
    return s;
  }

  void release_weights() override {
    weights_.clear();
    stats_.weight_bytes = 0;
    signature_.clear();  // the recording referenced them
  }

  std::vector<std::pair<std::string, double>> op_timings() const override {
    std::vector<std::pair<std::string, double>> out;
    for (const auto& t : seq_->timings()) out.emplace_back(t.label, t.ms);
    return out;
  }

 private:
  static constexpr uint32_t kMaxDispatches = 4096;

  Result<BufferView> weight_view(const Tensor& t);
  Status place(Graph& graph, std::vector<uint64_t>& signature);
  Status record(const Graph& graph);
  Status record_node(const Node& n);
  Result<KvBuffers> kv_buffers(const backend::KvView& kv);
  // Copies the node's block table (every sequence's, for a batch of several)
  // and per-token sequence indices into the input arena; adds them to `sig`.
  Status place_tables(const Node& n, uint64_t align, std::vector<uint64_t>& sig);
  TokenTables token_tables(const backend::KvView& kv) const;
  BufferView view(const Tensor* t) const { return views_.at(t); }
  // Whether a MatMul node runs on 8-bit activations (the path is on, its weights have a shader and fit
  // one binding: the matvec up to kMatvecMaxTokens tokens, the prompt tiles beyond), or a MatMulId node.
  bool int_dot_product(const Node& n) const;
  // Whether a MatMul is one matvec dispatch (up to 8 tokens, weights in one binding): what residual adds join.
  bool one_matvec(const Node& n) const;
  // Whether a weight matrix fits one storage binding (else it is bound in row pieces).
  bool fits_one_binding(const Tensor& w) const;
  // How an Attention node splits its positions (Kernels::attention_split):
  // by the most positions a query can see, the whole table or the window,
  // so the split stays the same while a conversation grows.
  AttentionSplit attention_split(const Node& n) const;
  // Product input x (ncols wide) as 8-bit blocks, quantized the first time
  // this recording asks: the products that share an input reuse them.
  Result<BufferView> quantized_input(const Tensor* x, uint32_t ncols);
  // Rows of `row_bytes` bytes that one storage binding may hold, keeping each
  // piece's offset aligned as the device requires; `rows` when all fit.
  uint32_t rows_per_binding(uint64_t row_bytes, uint32_t rows) const;
  // Replaces the activation arena by one of `bytes` (no graph is running).
  // A failure is OutOfMemory naming the device and the bytes.
  Status set_activation_arena(uint64_t bytes);
  void note_scratch() { scratch_high_water_ = std::max(scratch_high_water_, memory_use().scratch_bytes); }

  std::unique_ptr<VulkanContext> ctx_;
  std::unique_ptr<DeviceAllocator> allocator_;
  std::unique_ptr<Transfer> transfer_;
  std::unique_ptr<PipelineCache> cache_;
  std::unique_ptr<PipelineSet> pipelines_;
  std::unique_ptr<Kernels> kernels_;
  std::unique_ptr<CommandSequence> seq_;
  // Uploaded weights by host address of the data. Name and size are kept so
  // a different tensor mapped at a reused address (a new model loaded without
  // release_weights()) is uploaded again instead of aliasing the old one.
  struct DeviceWeight {
    Buffer buffer;
    size_t bytes = 0;
    std::string name;
  };
  std::unordered_map<const void*, DeviceWeight> weights_;
  Arena activations_;                                // device-local
  // Places activations in activations_ with memory reused across ops, as on
  // the CPU; CommandSequence::track puts a barrier before a dispatch that
  // overwrites a range an earlier dispatch still reads (write after read).
  backend::ActivationPlanner planner_;
  // The integer-dot path's 8-bit activations and split attention's partials.
  KernelScratch scratch_;                                 // device-local
  std::unordered_set<const Tensor*> quantized_recorded_;  // inputs quantized so far in this recording
  bool int_dot_ = false;                                  // MatvecPath resolved for this device
  Arena inputs_;                                     // host-visible: ids, positions, block tables
  Buffer output_;                                    // host-visible: graph.output
  std::unordered_map<const Tensor*, BufferView> views_;
  std::unordered_map<const int32_t*, BufferView> tables_;  // block tables and token_seq, by host address
  std::unordered_map<const int32_t*, uint32_t> seq_counts_;  // KvView::token_seq -> tables its batch holds
  std::unordered_map<const float*, BufferView> factors_;  // rope frequency factors
  std::vector<std::pair<const void*, BufferView>> input_copies_;  // host data -> mapped input range
  std::vector<uint64_t> signature_;                               // of the recorded graph
  VulkanBackendStats stats_;
  std::shared_ptr<BufferCounters> counters_ = std::make_shared<BufferCounters>();
  uint64_t scratch_high_water_ = 0;  // MemoryUse::scratch_high_water_bytes
  uint64_t scratch_growths_ = 0;     // arena replacements a graph forced after one existed
};

Status VulkanBackendImpl::set_activation_arena(uint64_t bytes) {
  // The recording references the old arena; it is recorded again.
  HEARTH_CHECK(seq_->begin());
  signature_.clear();
  activations_.buffer.reset();
  activations_.used = 0;
  const std::string& device = ctx_->description().name;
  const uint64_t heap = allocator_->budget().device_local_total;
  const uint64_t max_alloc = ctx_->limits().max_allocation_size;
  // Checked before asking the driver: a request no heap can hold is refused
  // at once, and some drivers misbehave on absurd buffer sizes.
  if ((heap > 0 && bytes > heap) || (max_alloc > 0 && bytes > max_alloc)) {
    return make_error(ErrorCode::OutOfMemory,
                      fmt::format("Vulkan: {} cannot hold an activation arena of {} bytes (device-local heap {} "
                                  "bytes, largest allocation {} bytes)",
                                  device, bytes, heap, max_alloc));
  }
  auto buffer = Buffer::create(*ctx_, *allocator_, bytes, MemoryUsage::DeviceLocal);
  if (!buffer.ok()) {
    const ErrorCode code = buffer.error().code == ErrorCode::LimitExceeded ? ErrorCode::OutOfMemory : buffer.error().code;
    return make_error(code, fmt::format("Vulkan: {} cannot allocate an activation arena of {} bytes: {}", device,
                                        bytes, buffer.error().message));
  }
  activations_.buffer = std::move(buffer).value();
  return {};
}

uint32_t VulkanBackendImpl::rows_per_binding(uint64_t row_bytes, uint32_t rows) const {
  const auto& lim = ctx_->limits();
  if (row_bytes == 0 || row_bytes * rows <= lim.max_storage_buffer_range) return rows;
  const uint64_t align = std::max<uint64_t>(1, lim.storage_offset_alignment);
  const uint64_t step = align / std::gcd(row_bytes, align);  // rows between aligned offsets
  const uint64_t fit = lim.max_storage_buffer_range / row_bytes / step * step;
  return static_cast<uint32_t>(std::clamp<uint64_t>(fit, step, rows));
}

Result<BufferView> VulkanBackendImpl::weight_view(const Tensor& t) {
  if (auto it = weights_.find(t.data); it != weights_.end()) {
    if (it->second.bytes == t.bytes() && it->second.name == t.name) return BufferView::whole(it->second.buffer);
    stats_.weight_bytes -= it->second.bytes;
    signature_.clear();  // the recording may reference the stale buffer
    HEARTH_CHECK(seq_->begin());
    weights_.erase(it);
  }
  if (t.data == nullptr) {
    return make_error(ErrorCode::InvalidArgument, fmt::format("Vulkan: weight '{}' has no data", t.name));
  }
  HEARTH_TRY(auto b, Buffer::create(*ctx_, *allocator_, t.bytes(), MemoryUsage::DeviceLocal));
  // The shaders read plain rows: weights interleaved for the CPU's kernels
  // (a model split between the CPU and the GPU) are converted on the way.
  std::vector<uint8_t> scratch(t.layout == backend::WeightLayout::Plain ? 0 : t.bytes());
  const void* bytes = backend::plain_rows(t, 0, t.rows(), scratch.data());
  HEARTH_CHECK(transfer_->upload(BufferView::whole(b), {static_cast<const std::byte*>(bytes), t.bytes()}));
  stats_.weight_bytes += t.bytes();
  auto [it, inserted] = weights_.emplace(t.data, DeviceWeight{std::move(b), t.bytes(), t.name});
  return BufferView::whole(it->second.buffer);
}

Result<KvBuffers> VulkanBackendImpl::kv_buffers(const backend::KvView& kv) {
  const auto* vb = dynamic_cast<const VulkanBuffer*>(kv.buffer);
  if (vb == nullptr) return make_error(ErrorCode::InvalidArgument, "Vulkan: the KV cache was not allocated by this backend");
  const uint64_t region = uint64_t(kv.n_blocks) * kv.n_head_kv * kv.block_tokens * kv.row_bytes;
  const BufferView whole = BufferView::whole(vb->buffer());
  return KvBuffers{whole.sub(kv.k_offset, region), whole.sub(kv.v_offset, region),
                   tables_.at(kv.token_seq ? kv.seq_tables : kv.block_table)};
}

TokenTables VulkanBackendImpl::token_tables(const backend::KvView& kv) const {
  if (!kv.token_seq) return {};
  return TokenTables{tables_.at(kv.token_seq), static_cast<uint32_t>(kv.table_blocks), seq_counts_.at(kv.token_seq)};
}

// One past the largest sequence index of a batch's tokens (later tables are never read).
Result<uint32_t> batch_tables(const backend::KvView& kv, int64_t n_tokens) {
  int32_t top = -1;
  for (int64_t t = 0; t < n_tokens; ++t) {
    if (kv.token_seq[t] < 0) {
      return make_error(ErrorCode::InvalidArgument,
                        fmt::format("Vulkan: token {} of a sequence batch names sequence {}", t, kv.token_seq[t]));
    }
    top = std::max(top, kv.token_seq[t]);
  }
  return static_cast<uint32_t>(top + 1);
}

Status VulkanBackendImpl::place_tables(const Node& n, uint64_t align, std::vector<uint64_t>& sig) {
  const auto& kv = n.params.kv;
  // A single table covers the blocks (a ring's is longer than them); a pool
  // shared by several sequences holds more blocks than one table.
  if (kv.table_blocks <= 0 || kv.n_blocks <= 0 || (!kv.token_seq && kv.n_blocks > kv.table_blocks)) {
    return make_error(ErrorCode::InvalidArgument,
                      fmt::format("Vulkan: {} has a KV view of {} physical blocks behind a table of {}",
                                  to_string(n.op), kv.n_blocks, kv.table_blocks));
  }
  // The whole table: shaders index it by logical block (a ring's table is longer than its blocks).
  if (!kv.token_seq) {
    if (!tables_.count(kv.block_table)) {
      HEARTH_TRY(tables_[kv.block_table], inputs_.take(4ull * kv.table_blocks, align));
      input_copies_.emplace_back(kv.block_table, tables_[kv.block_table]);
    }
    sig.push_back(tables_[kv.block_table].offset);
    return {};
  }
  // Several sequences: the layers share the token indices and the tables, copied once (the
  // tables for the widest list reading them: a last layer's queries are fewer, KeptRows).
  const int64_t n_tokens = n.src[0]->ne[1];
  if (!seq_counts_.count(kv.token_seq)) {
    HEARTH_TRY(const uint32_t n_tables, batch_tables(kv, n_tokens));
    seq_counts_[kv.token_seq] = n_tables;
    HEARTH_TRY(tables_[kv.token_seq], inputs_.take(4ull * n_tokens, align));
    input_copies_.emplace_back(kv.token_seq, tables_[kv.token_seq]);
    if (const uint64_t bytes = 4ull * kv.table_blocks * n_tables; tables_[kv.seq_tables].size < bytes) {
      HEARTH_TRY(tables_[kv.seq_tables], inputs_.take(bytes, align));
      input_copies_.emplace_back(kv.seq_tables, tables_[kv.seq_tables]);
    }
  }
  sig.push_back(seq_counts_[kv.token_seq]);
  sig.push_back(tables_[kv.token_seq].offset);
  sig.push_back(tables_[kv.seq_tables].offset);
  return {};
}

// Assigns device memory to every tensor and builds the graph's signature:
// everything that goes into the recorded commands, so an equal signature
// means the previous recording can be submitted again.
Status VulkanBackendImpl::place(Graph& graph, std::vector<uint64_t>& sig) {
  const uint64_t align = std::max<uint64_t>(ctx_->limits().storage_offset_alignment, 16);
  uint64_t act_bytes = 0, in_bytes = 0;
  auto grow = [&](uint64_t& total, uint64_t bytes) { total = *checked_align_up(total, align) + std::max<uint64_t>(bytes, 4); };
  // The shared plan's offsets are 64-byte aligned; a device that needs a
  // coarser descriptor alignment gets every activation its own range.
  const bool use_plan = backend::kActivationAlign % align == 0;
  std::unordered_map<const Tensor*, uint64_t> planned;
  if (use_plan) {
    const backend::ActivationPlan& plan = planner_.plan(graph);
    for (const auto& [tensor, offset] : plan.offsets) planned.emplace(tensor, offset);
    act_bytes = plan.arena_bytes;
  }
  const uint64_t planned_bytes = act_bytes;
  scratch_.begin();
  for (size_t i = 0; i < graph.nodes().size(); ++i) {
    const Node& n = graph.nodes()[i];
    if (int_dot_product(n)) {
      scratch_.request(n.src[1], ScratchUse::QuantizedInput,
                       Kernels::quantized_bytes(static_cast<uint32_t>(n.src[0]->ne[0]),
                                                static_cast<uint32_t>(n.src[1]->ne[1])),
                       align, i);
    }
    if (n.op == Op::Attention) {
      if (const AttentionSplit split = attention_split(n); split.n_splits > 1) {
        scratch_.request(n.dst, ScratchUse::AttentionPartials,
                         Kernels::attention_partial_bytes(static_cast<uint32_t>(n.params.kv.head_dim),
                                                          static_cast<uint32_t>(n.params.attn.n_head),
                                                          static_cast<uint32_t>(n.src[0]->ne[1]), split.n_splits),
                         align, i);
      }
    }
    for (const Tensor* s : n.src) {
      if (s && s->kind == TensorKind::Input) grow(in_bytes, s->bytes());
    }
    if (n.op == Op::KvStore || n.op == Op::Attention) {
      const auto& kv = n.params.kv;
      if (kv.token_seq) {
        // The token indices and every sequence's table (counted per node:
        // an upper bound, as the single tables are).
        HEARTH_TRY(const uint32_t n_tables, batch_tables(kv, n.src[0]->ne[1]));
        grow(in_bytes, 4ull * n.src[0]->ne[1]);
        grow(in_bytes, 4ull * kv.table_blocks * n_tables);
      } else {
        grow(in_bytes, 4ull * kv.table_blocks);
      }
    }
    if (n.op == Op::Rope && n.params.rope.freq_factors) grow(in_bytes, 4ull * (n.params.rope.n_dims / 2));
    if (n.dst && n.dst != graph.output && !planned.count(n.dst)) grow(act_bytes, n.dst->bytes());
  }
  if (!graph.output) return make_error(ErrorCode::InvalidArgument, "Vulkan: the graph has no output");
  scratch_.finish();
  if (scratch_.needs_growth()) {
    HEARTH_CHECK(seq_->begin());  // drop the recording that binds the old buffer
    signature_.clear();
    HEARTH_CHECK(scratch_.ensure(*ctx_, *allocator_));
  }
  if (activations_.buffer.size() < act_bytes || inputs_.buffer.size() < in_bytes ||
      output_.size() < graph.output->bytes()) {
    // Grow with headroom so prefill followed by decode does not reallocate.
    HEARTH_CHECK(seq_->begin());  // drop the recording that references the old buffers
    signature_.clear();
    if (activations_.buffer.size() < act_bytes) {
      // More than reserved (or than an earlier graph needed): counted, as on
      // the CPU; the first arena of a backend nobody reserved on is not a growth.
      if (activations_.buffer.valid()) ++scratch_growths_;
      // Planned graphs need exactly the plan (a larger batch plans larger);
      // unplanned ones grow with headroom so prefill then decode fits.
      HEARTH_CHECK(set_activation_arena(use_plan ? act_bytes : act_bytes + act_bytes / 2));
    }
    if (inputs_.buffer.size() < in_bytes) {
      inputs_.buffer.reset();
      HEARTH_TRY(inputs_.buffer, Buffer::create(*ctx_, *allocator_, in_bytes + in_bytes / 2 + 4096, MemoryUsage::Upload));
    }
    if (output_.size() < graph.output->bytes()) {
      output_.reset();
      HEARTH_TRY(output_, Buffer::create(*ctx_, *allocator_, graph.output->bytes(), MemoryUsage::Readback));
    }
  }
  note_scratch();
  activations_.used = planned_bytes;  // tensors outside the plan go after it
  inputs_.used = 0;
  views_.clear();
  tables_.clear();
  seq_counts_.clear();
  factors_.clear();
  input_copies_.clear();
  auto add_sig = [&](uint64_t v) { sig.push_back(v); };
  for (const Node& n : graph.nodes()) {
    add_sig(static_cast<uint64_t>(n.op));
    for (const Tensor* s : n.src) {
      if (!s) {
        add_sig(0);
        continue;
      }
      if (!views_.count(s)) {
        if (s->kind == TensorKind::Weight) {
          HEARTH_TRY(views_[s], weight_view(*s));
        } else if (s->kind == TensorKind::Input) {
          HEARTH_TRY(views_[s], inputs_.take(s->bytes(), align));
          input_copies_.emplace_back(s->data, views_[s]);
        } else {
          return make_error(ErrorCode::InvalidArgument,
                            fmt::format("Vulkan: {} reads an activation no earlier node wrote", to_string(n.op)));
        }
      }
      // By generation, not address: a buffer freed and re-created can reuse
      // the address, and the old recording would bind the dead VkBuffer.
      add_sig(views_[s].buffer->generation());
      add_sig(views_[s].offset);
      for (int64_t e : s->ne) add_sig(static_cast<uint64_t>(e));
      add_sig(static_cast<uint64_t>(s->type));
    }
    if (n.op == Op::KvStore || n.op == Op::Attention) {
      const auto& kv = n.params.kv;
      HEARTH_CHECK(place_tables(n, align, sig));
      const auto* kv_buffer = dynamic_cast<const VulkanBuffer*>(kv.buffer);
      if (kv_buffer == nullptr) {
        return make_error(ErrorCode::InvalidArgument,
                          fmt::format("Vulkan: {} reads a KV cache not allocated by this backend", to_string(n.op)));
      }
      add_sig(kv_buffer->buffer().generation());
      add_sig(kv.k_offset);
      add_sig(kv.v_offset);
      add_sig(static_cast<uint64_t>(kv.n_blocks));
      add_sig(static_cast<uint64_t>(kv.table_blocks));
      add_sig(static_cast<uint64_t>(kv.type));
    }
    using Placed = std::pair<const Tensor*, ScratchUse>;
    for (const auto& [tensor, use] : {Placed{n.src[1], ScratchUse::QuantizedInput},
                                      Placed{n.dst, ScratchUse::AttentionPartials}}) {
      if (!scratch_.has(tensor, use)) continue;
      HEARTH_TRY(const BufferView v, scratch_.view(tensor, use));
      add_sig(v.buffer->generation());
      add_sig(v.offset);
    }
    if (n.op == Op::Rope && n.params.rope.freq_factors) {
      // Llama 3.1 frequency factors: host data copied with the other inputs.
      const float* ff = n.params.rope.freq_factors;
      if (!factors_.count(ff)) {
        HEARTH_TRY(factors_[ff], inputs_.take(4ull * (n.params.rope.n_dims / 2), align));
        input_copies_.emplace_back(ff, factors_[ff]);
      }
      add_sig(factors_[ff].offset);
    }
    if (n.dst) {
      if (n.dst == graph.output) {
        views_[n.dst] = BufferView{&output_, 0, n.dst->bytes()};
      } else if (const auto it = planned.find(n.dst); it != planned.end()) {
        views_[n.dst] = BufferView{&activations_.buffer, it->second, std::max<uint64_t>(n.dst->bytes(), 4)};
      } else {
        HEARTH_TRY(views_[n.dst], activations_.take(n.dst->bytes(), align));
      }
      add_sig(views_[n.dst].offset);
      for (int64_t e : n.dst->ne) add_sig(static_cast<uint64_t>(e));
    }
    // Parameters that become push constants.
    const auto& p = n.params;
    const float floats[] = {p.eps,           p.scalar,           p.rope.freq_base, p.rope.freq_scale,
                            p.rope.ext_factor, p.rope.attn_factor, p.rope.beta_fast, p.rope.beta_slow,
                            p.attn.scale,      p.attn.softcap,     p.glu.alpha,      p.glu.limit};
    for (float f : floats) {
      uint32_t b;
      std::memcpy(&b, &f, 4);
      add_sig(b);
    }
    add_sig(static_cast<uint64_t>(p.rope.n_ctx_orig));
    add_sig(p.rope.freq_factors != nullptr);
    add_sig(static_cast<uint64_t>(p.group));
    add_sig(static_cast<uint64_t>(p.offset));
    add_sig(static_cast<uint64_t>(p.rope.n_dims) << 32 | static_cast<uint32_t>(p.rope.head_dim));
    add_sig(static_cast<uint64_t>(p.rope.mode));
    add_sig(static_cast<uint64_t>(p.attn.n_head) << 32 | static_cast<uint32_t>(p.attn.window));
    uint32_t moe_scale;
    std::memcpy(&moe_scale, &p.moe.scale, 4);
    add_sig(static_cast<uint64_t>(p.moe.gating) << 40 | static_cast<uint64_t>(p.moe.normalize) << 32 | moe_scale);
  }
  return {};
}

Status VulkanBackendImpl::record_node(const Node& n) {
  auto& k = *kernels_;
  auto& s = *seq_;
  const Tensor* a = n.src[0];
  const Tensor* b = n.src[1];
  auto u32 = [](int64_t v) { return static_cast<uint32_t>(v); };
  switch (n.op) {
    case Op::GetRows: {
      // A table larger than one storage binding (a 150k-token embedding) is
      // bound in row pieces; each dispatch fills the ids of its piece.
      HEARTH_TRY(const uint64_t row, row_bytes(a->type, a->ne[0]));
      const uint32_t rows = u32(a->ne[1]);
      const uint32_t piece = rows_per_binding(row, rows);
      for (uint32_t r0 = 0; r0 < rows; r0 += piece) {
        const uint32_t count = std::min(piece, rows - r0);
        HEARTH_CHECK(k.get_rows(s, a->type, view(a).sub(r0 * row, count * row), view(b), view(n.dst), u32(a->ne[0]),
                                u32(b->ne[0]), r0, count));
      }
      return {};
    }
    case Op::RmsNorm: {
      if (b->type != DType::F32) return make_error(ErrorCode::Unsupported, fmt::format("Vulkan rms_norm: weight '{}' is {}", b->name, traits(b->type).name));
      const int64_t group = n.params.group > 0 ? n.params.group : a->ne[0];
      return k.rms_norm(s, view(a), view(b), view(n.dst), u32(group), u32(a->elements() / group), n.params.eps);
    }
    case Op::MatMul: {
      const uint32_t m = u32(a->ne[1]), cols = u32(a->ne[0]), tokens = u32(b->ne[1]);
      HEARTH_TRY(const uint64_t row, row_bytes(a->type, a->ne[0]));
      const uint32_t piece = rows_per_binding(row, m);
      const Tensor* bias = n.src[2];
      if (bias && bias->type != DType::F32) return make_error(ErrorCode::Unsupported, fmt::format("Vulkan matmul: bias '{}' is not F32", bias->name));
      // A few tokens (a speculative verify pass, a short prompt) take the matvec shader with one column
      // per token: each row of the result is bit for bit a one-token decode's, so greedy speculation
      // matches plain greedy decoding exactly (tiles round differently). It adds bias and residual as it writes.
      const bool few = piece >= m && tokens <= Kernels::kMatvecMaxTokens;
      if (n.src[3] && !few) return make_error(ErrorCode::Internal, "Vulkan matmul: a residual fused into tiles");
      const Kernels::MatvecAddends add{few && bias ? view(bias) : BufferView{}, n.src[3] ? view(n.src[3]) : BufferView{}};
      if (piece >= m) {
        if (int_dot_product(n)) {
          HEARTH_TRY(const BufferView xq, quantized_input(b, cols));
          HEARTH_CHECK(few ? k.matvec_int_dot(s, a->type, view(a), xq, view(n.dst), cols, m, tokens, add)
                           : k.matmul_int_dot(s, a->type, view(a), xq, view(n.dst), m, tokens, cols));
        } else {
          HEARTH_CHECK(few ? k.matvec(s, a->type, view(a), view(b), view(n.dst), cols, m, tokens, add)
                           : k.matmul(s, a->type, view(a), view(b), view(n.dst), m, tokens, cols));
        }
      } else {
        // Weights larger than one storage binding (a tied 150k-token output
        // matrix): matrix-vector products over row pieces, token by token,
        // each writing its slice of that token's output row.
        for (uint32_t t = 0; t < tokens; ++t) {
          const BufferView x = view(b).sub(uint64_t{t} * cols * 4, uint64_t{cols} * 4);
          for (uint32_t r0 = 0; r0 < m; r0 += piece) {
            const uint32_t count = std::min(piece, m - r0);
            const BufferView y = view(n.dst).sub((uint64_t{t} * m + r0) * 4, uint64_t{count} * 4);
            HEARTH_CHECK(k.matvec(s, a->type, view(a).sub(r0 * row, count * row), x, y, cols, count));
          }
        }
      }
      if (bias && !few) return k.add(s, view(n.dst), view(bias), view(n.dst), m * tokens, m);
      return {};
    }
    case Op::Add: return k.add(s, view(a), view(b), view(n.dst), u32(a->elements()), u32(a->elements()));
    case Op::Scale: return k.scale(s, view(a), view(n.dst), u32(a->elements()), n.params.scalar);
    case Op::Rope: {
      const auto& r = n.params.rope;
      HEARTH_CHECK(s.copy(view(a), view(n.dst)));  // the shader rotates in place
      const RopeShape shape{u32(r.head_dim), u32(r.n_dims), u32(a->ne[0] / r.head_dim), u32(a->ne[1])};
      RopeFrequencies f;
      f.freq_base = r.freq_base;
      f.freq_scale = r.freq_scale;
      f.ext_factor = r.ext_factor;
      f.attn_factor = r.attn_factor;
      f.beta_fast = r.beta_fast;
      f.beta_slow = r.beta_slow;
      f.n_ctx_orig = u32(std::max(0, r.n_ctx_orig));
      if (r.freq_factors) f.freq_factors = factors_.at(r.freq_factors);
      return k.rope(s, r.mode == backend::RopeMode::NeoX ? RopeStyle::NeoX : RopeStyle::Normal, view(n.dst), view(b),
                    shape, f);
    }
    case Op::KvStore: {
      const auto& kv = n.params.kv;
      HEARTH_TRY(const KvBuffers bufs, kv_buffers(kv));
      const KvLayout layout{u32(kv.head_dim), u32(kv.n_head_kv), u32(kv.block_tokens), kv.type};
      return k.kv_store(s, view(a), view(b), bufs, layout, view(n.src[2]), u32(a->ne[1]), token_tables(kv));
    }
    case Op::Attention: {
      const auto& kv = n.params.kv;
      const auto& p = n.params.attn;
      HEARTH_TRY(const KvBuffers bufs, kv_buffers(kv));
      const KvLayout layout{u32(kv.head_dim), u32(kv.n_head_kv), u32(kv.block_tokens), kv.type};
      // Sinks (gpt-oss): a [n_head] F32 weight; none leaves the view empty.
      BufferView sinks;
      if (const Tensor* t = n.src[2]) {
        if (t->type != DType::F32) {
          return make_error(ErrorCode::Unsupported, fmt::format("Vulkan attention: sinks '{}' are not F32", t->name));
        }
        sinks = view(t);
      }
      AttentionSplit split = attention_split(n);
      if (split.n_splits > 1) {
        HEARTH_TRY(split.partials, scratch_.view(n.dst, ScratchUse::AttentionPartials));
      }
      return k.attention(s, view(a), bufs, layout, view(b), view(n.dst), {u32(p.n_head), u32(a->ne[1])},
                         {p.scale, p.softcap, u32(std::max(0, p.window))}, sinks, token_tables(kv), split);
    }
    case Op::SwiGlu: return k.glu(s, GluKind::SwiGlu, view(a), view(b), view(n.dst), u32(a->elements()));
    case Op::GeluGlu: return k.glu(s, GluKind::GeGlu, view(a), view(b), view(n.dst), u32(a->elements()));
    case Op::Gelu: return k.gelu(s, view(a), view(n.dst), u32(a->elements()));
    case Op::LayerNorm: {
      const Tensor* c = n.src[2];
      if (b->type != DType::F32 || c->type != DType::F32) {
        return make_error(ErrorCode::Unsupported,
                          fmt::format("Vulkan layer_norm: weight '{}' and bias '{}' must be F32", b->name, c->name));
      }
      return k.layer_norm(s, view(a), view(b), view(c), view(n.dst), u32(a->ne[0]), u32(a->rows()), n.params.eps);
    }
    case Op::SoftCap: return k.softcap(s, view(a), view(n.dst), u32(a->elements()), n.params.scalar);
    case Op::SliceCols: {
      const uint64_t width = 4ull * n.dst->ne[0], src_row = 4ull * a->ne[0];
      for (int64_t r = 0; r < a->ne[1]; ++r) {
        HEARTH_CHECK(s.copy(view(a).sub(r * src_row + 4ull * n.params.offset, width), view(n.dst).sub(r * width, width)));
      }
      return {};
    }
    case Op::LastRows: {
      const uint64_t row = 4ull * a->ne[0];
      return s.copy(view(a).sub((a->ne[1] - n.dst->ne[1]) * row, n.dst->bytes()), view(n.dst));
    }
    case Op::TopK:
      return k.moe_top_k(s, view(a), view(n.dst), {u32(a->ne[0]), u32(n.dst->ne[0]), u32(a->ne[1]), 0});
    case Op::MoeGate: {
      const auto& m = n.params.moe;
      return k.moe_gate(s, view(a), view(b), view(n.dst), {u32(a->ne[0]), u32(b->ne[0]), u32(a->ne[1]), 0},
                        m.gating == backend::MoeGating::Softmax ? 0u : 1u, m.normalize, m.scale);
    }
    case Op::MatMulId: {
      const Tensor* ids = n.src[2];
      Kernels::MatvecIdShape shape;
      shape.ncols = u32(a->ne[0]);
      shape.nrows = u32(a->ne[1]);
      shape.n_expert = u32(a->ne[2]);
      shape.k = u32(ids->ne[0]);
      shape.n_slots = u32(ids->ne[0] * ids->ne[1]);
      shape.x_per_slot = b->ne[1] != ids->ne[1];
      // A stack larger than one storage binding (gpt-oss-20b's 141 MB on a
      // 128 MiB device limit) is bound a range of whole experts at a time.
      HEARTH_TRY(const uint64_t row, row_bytes(a->type, a->ne[0]));
      const uint64_t expert_bytes = row * static_cast<uint64_t>(a->ne[1]);
      const uint32_t experts = u32(a->ne[2]);
      const uint32_t piece = rows_per_binding(expert_bytes, experts);
      const bool int_dot = int_dot_product(n);
      BufferView xq;
      if (int_dot) {
        HEARTH_TRY(xq, quantized_input(b, shape.ncols));
      }
      for (uint32_t e0 = 0; e0 < experts; e0 += piece) {
        shape.expert_begin = e0;
        shape.n_expert = std::min(piece, experts - e0);
        const BufferView w = view(a).sub(e0 * expert_bytes, shape.n_expert * expert_bytes);
        HEARTH_CHECK(int_dot ? k.matvec_id_int_dot(s, a->type, w, xq, view(ids), view(n.dst), shape)
                             : k.matvec_id(s, a->type, w, view(b), view(ids), view(n.dst), shape));
      }
      return {};
    }
    case Op::MoeSum:
      return k.moe_sum(s, view(a), view(b), view(n.dst), {0, u32(b->ne[0]), u32(b->ne[1]), u32(a->ne[0])});
    case Op::SwiGluOai:
      return k.swiglu_oai(s, view(a), view(b), view(n.dst), u32(a->elements()), n.params.glu.alpha,
                          n.params.glu.limit);
    case Op::AddId: {
      const Tensor* ids = n.src[2];
      if (b->type != DType::F32) {
        return make_error(ErrorCode::Unsupported, fmt::format("Vulkan add_id: bias '{}' is not F32", b->name));
      }
      return k.moe_add_id(s, view(a), view(b), view(ids), view(n.dst),
                          {u32(b->ne[1]), u32(ids->ne[0]), u32(ids->ne[1]), u32(a->ne[0])});
    }
  }
  return make_error(ErrorCode::Unsupported, fmt::format("Vulkan: op {}", to_string(n.op)));
}

bool VulkanBackendImpl::fits_one_binding(const Tensor& w) const {
  const auto row = row_bytes(w.type, w.ne[0]);
  const auto rows = static_cast<uint32_t>(w.ne[1]);
  return row.ok() && rows_per_binding(*row, rows) >= rows;
}

bool VulkanBackendImpl::one_matvec(const Node& n) const {
  return n.src[1]->ne[1] <= Kernels::kMatvecMaxTokens && fits_one_binding(*n.src[0]);
}

bool VulkanBackendImpl::int_dot_product(const Node& n) const {
  if (!int_dot_ || (n.op != Op::MatMul && n.op != Op::MatMulId)) return false;
  const Tensor* a = n.src[0];
  if (!Kernels::supports_int_dot(a->type) || a->ne[0] % 32 != 0) return false;
  if (n.op == Op::MatMulId) return true;  // one workgroup per (row, slot) at any batch size
  return fits_one_binding(*a);
}

Result<BufferView> VulkanBackendImpl::quantized_input(const Tensor* x, uint32_t ncols) {
  HEARTH_TRY(const BufferView xq, scratch_.view(x, ScratchUse::QuantizedInput));
  if (quantized_recorded_.insert(x).second) {
    HEARTH_CHECK(kernels_->quantize_activations(*seq_, view(x), xq, ncols, static_cast<uint32_t>(x->ne[1])));
  }
  return xq;
}

AttentionSplit VulkanBackendImpl::attention_split(const Node& n) const {
  const auto& kv = n.params.kv;
  uint64_t visible = uint64_t{static_cast<uint32_t>(kv.table_blocks)} * static_cast<uint32_t>(kv.block_tokens);
  if (n.params.attn.window > 0) visible = std::min<uint64_t>(visible, static_cast<uint32_t>(n.params.attn.window));
  return kernels_->attention_split(static_cast<uint32_t>(n.src[0]->ne[1]),
                                   static_cast<uint32_t>(std::min<uint64_t>(visible, UINT32_MAX)));
}

Status VulkanBackendImpl::record(const Graph& graph) {
  // With profiling, one timed span per node: bench reports time per graph op.
  HEARTH_CHECK(seq_->begin(SpanMode::Explicit));
  quantized_recorded_.clear();
  for (const Node& n : graph.nodes()) {
    auto st = record_node(n);
    if (st.ok()) st = seq_->close_span(to_string(n.op));
    if (!st.ok()) {
      signature_.clear();
      return make_error(st.error().code, fmt::format("{} (node {})", st.error().message, to_string(n.op)));
    }
  }
  HEARTH_CHECK(seq_->end());
  stats_.recordings += 1;
  return {};
}

Status VulkanBackendImpl::compute(Graph& graph) {
  HEARTH_CHECK(backend::check_supported(*this, graph));
  backend::fuse_residual_adds(graph, [this](const Node& n) { return one_matvec(n); });
  std::vector<uint64_t> sig;
  HEARTH_CHECK(place(graph, sig));
  for (const auto& [host, dst] : input_copies_) {
    std::memcpy(dst.buffer->mapped() + dst.offset, host, dst.size);
  }
  if (sig != signature_ || !seq_->recorded()) {
    HEARTH_CHECK(record(graph));
    signature_ = std::move(sig);
  } else {
    stats_.reuses += 1;
  }
  HEARTH_CHECK(seq_->submit_and_wait());
  for (Node& n : graph.nodes()) {
    if (n.dst && n.dst != graph.output) n.dst->data = nullptr;  // device memory only
  }
  graph.output->data = output_.mapped();
  return {};
}

}  // namespace

VulkanBackend::~VulkanBackend() = default;

Result<std::unique_ptr<VulkanBackend>> VulkanBackend::create(const VulkanConfig& config, Logger logger) {
  auto b = std::make_unique<VulkanBackendImpl>();
  HEARTH_CHECK(b->init(config, std::move(logger)));
  return std::unique_ptr<VulkanBackend>(std::move(b));
}

}  // namespace hearth::vulkan
