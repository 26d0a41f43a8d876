// The CPU backend: places activations in one arena by the graph's activation
// plan (a tensor's range is reused after its last reader), then runs each
// node's kernel on the persistent thread pool.
#include "hearth/engine/backend/cpu_backend.h"

#include <fmt/format.h>

#include <hearth/core/huge_page_buffer.h>
#include <hearth/engine/backend/activation_plan.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "ops.h"
#include "thread_pool.h"
#include "weight_rows.h"

namespace hearth::backend {
namespace {

uint64_t mem_available_bytes() {
  std::FILE* f = std::fopen("/proc/meminfo", "r");
  if (!f) return 0;
  char line[256];
  uint64_t kb = 0;
  while (std::fgets(line, sizeof line, f)) {
    if (std::sscanf(line, "MemAvailable: %lu kB", &kb) == 1) break;
  }
  std::fclose(f);
  return kb * 1024;
}

// Bytes held per buffer usage, shared with the buffers (which may be freed
// from another thread, and after the backend).
struct BufferCounters {
  std::atomic<uint64_t> bytes[3]{};
  std::atomic<uint64_t>& of(BufferUsage usage) { return bytes[static_cast<int>(usage)]; }
};

class CpuBuffer final : public Buffer {
 public:
  CpuBuffer(size_t bytes, BufferUsage usage, std::shared_ptr<BufferCounters> counters)
      : size_(bytes), usage_(usage), counters_(std::move(counters)) {
    // A KV cache of several MB in huge pages: its blocks are read scattered
    // over the pool, and in 4 KiB pages nearly every block cost a TLB walk
    // and, the first time, a page fault. With eight streams decoding
    // (Qwen2.5-0.5B), converting the cached rows fell from 8.3-8.5% to
    // 5.9-6.5% of the samples.
    if (usage == BufferUsage::KvCache && bytes >= kHugePageBytes) {
      auto huge = HugePageBuffer::allocate(bytes);
      if (huge.ok()) {
        huge_ = std::move(huge).value();
        data_ = huge_.data();
      }
    } else {
      data_ = std::aligned_alloc(64, std::max<size_t>(64, (bytes + 63) / 64 * 64));
    }
    if (data_) counters_->of(usage_) += size_;
  }
  ~CpuBuffer() override {
    if (data_) counters_->of(usage_) -= size_;
    if (!huge_.data()) std::free(data_);
  }
  bool valid() const { return data_ != nullptr; }
  size_t size() const override { return size_; }
  BufferUsage usage() const override { return usage_; }
  void* host_data() override { return data_; }
  void fault_in(size_t offset, size_t bytes) override {
    if (!data_ || offset >= size_) return;
    hearth::fault_in(static_cast<uint8_t*>(data_) + offset, std::min(bytes, size_ - offset));
  }

 private:
  size_t size_;
  BufferUsage usage_;
  std::shared_ptr<BufferCounters> counters_;
  HugePageBuffer huge_;  // holds data_ when the buffer is in huge pages
  void* data_ = nullptr;
};

struct FreeDeleter {
  void operator()(void* p) const { std::free(p); }
};

class CpuBackend final : public Backend {
 public:
  explicit CpuBackend(const CpuBackendOptions& options)
      : pool_(options.threads > 0 ? options.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()))),
        kernels_(quant::select_kernels(quant::detect_cpu_features(), options.kernels == KernelChoice::Reference
                                                                          ? quant::KernelLevel::Scalar
                                                                          : options.max_level)),
        observer_(options.observer),
        time_ops_(options.time_ops) {}

  const char* name() const override { return "cpu"; }

  DeviceInfo device() const override {
    DeviceInfo info;
    info.name = fmt::format("CPU ({} threads, {} kernels)", pool_.size(), quant::to_string(kernels_.level));
    info.kind = DeviceKind::Cpu;
    info.memory_free = mem_available_bytes();
    info.memory_total = info.memory_free;
    return info;
  }

  bool supports(Op op, DType type) const override {
    switch (op) {
      case Op::MatMul:
      case Op::MatMulId:
      case Op::GetRows: return cpu::has_row_ops(type);
      case Op::KvStore:
      case Op::Attention: return type == DType::F16 || type == DType::F32 || type == DType::Q8_0;
      default: return type == DType::F32;
    }
  }

  bool supports_sequence_batches() const override { return true; }

  std::vector<std::pair<std::string, double>> op_timings() const override { return timings_; }

  void run_host_tasks(int64_t n, const std::function<void(int64_t)>& task) override {
    pool_.parallel_for(n, 1, [&](int64_t b, int64_t e, int) {
      for (int64_t i = b; i < e; ++i) task(i);
    });
  }

  Result<std::unique_ptr<Buffer>> allocate(size_t bytes, BufferUsage usage) override {
    auto buffer = std::make_unique<CpuBuffer>(bytes, usage, counters_);
    if (!buffer->valid()) {
      return make_error(ErrorCode::OutOfMemory, fmt::format("cannot allocate {} bytes of CPU memory", bytes));
    }
    return std::unique_ptr<Buffer>(std::move(buffer));
  }

  Status reserve_scratch(const ScratchReservation& r) override {
    if (r.activation_bytes > arena_bytes_) HEARTH_CHECK(set_arena(r.activation_bytes));
    // Sized and zero-filled now rather than by the first product that needs
    // it (its pages faulted in inside a first request's prompt).
    if (r.conversion_bytes > matmul_scratch_.buffer.size()) matmul_scratch_.buffer.resize(static_cast<size_t>(r.conversion_bytes));
    if (r.expert_bytes > matmul_scratch_.expert.capacity()) matmul_scratch_.expert.reserve(static_cast<size_t>(r.expert_bytes));
    note_scratch();
    return {};
  }

  MemoryUse memory_use() const override {
    MemoryUse use;
    use.weights_bytes = counters_->of(BufferUsage::Weights);
    use.kv_bytes = counters_->of(BufferUsage::KvCache);
    use.scratch_bytes = counters_->of(BufferUsage::Scratch) + arena_bytes_ + matmul_scratch_.buffer.capacity() +
                        matmul_scratch_.expert.capacity();
    use.scratch_high_water_bytes = std::max(scratch_high_water_, use.scratch_bytes);
    use.scratch_growths = scratch_growths_;
    return use;
  }

  Status compute(Graph& graph) override {
    HEARTH_CHECK(check_supported(*this, graph));
    // Every activation gets its place in the arena before the first node
    // runs; the arena grows only when the graph needs more than was reserved.
    const ActivationPlan& plan = planner_.plan(graph);
    if (plan.arena_bytes > arena_bytes_) {
      if (arena_bytes_ > 0) ++scratch_growths_;
      HEARTH_CHECK(set_arena(plan.arena_bytes));
    }
    for (const auto& [tensor, offset] : plan.offsets) {
      tensor->data = static_cast<uint8_t*>(arena_.get()) + offset;
    }
    const size_t conversion_capacity = matmul_scratch_.buffer.capacity();
    const size_t expert_capacity = matmul_scratch_.expert.capacity();
    rope_tables_.clear();
    run_nodes(graph.nodes(), graph.output);
    if (matmul_scratch_.buffer.capacity() != conversion_capacity && conversion_capacity > 0) ++scratch_growths_;
    if (matmul_scratch_.expert.capacity() != expert_capacity && expert_capacity > 0) ++scratch_growths_;
    note_scratch();
    return {};
  }

 private:
  // Few-token products (a scheduler step, a speculative verify pass, a
  // prompt's last short chunk) go through the decode kernels, which give
  // every token exactly the result a one-token pass gives it: greedy
  // speculation then equals greedy decoding bit for bit.
  bool few_token_product(const Node& n) const {
    return n.op == Op::MatMul && n.src[1]->ne[1] > 1 && cpu::is_rows_batch_matmul(n, kernels_);
  }

  // Whether nodes[i] is a SwiGLU whose output only the product right after
  // it reads (a prompt's, or a few tokens'): then the product computes the
  // rows itself.
  bool fuses_into_next(const std::vector<Node>& nodes, size_t i, const Tensor* output) const {
    const Node& act = nodes[i];
    if (act.op != Op::SwiGlu || i + 1 >= nodes.size() || act.dst == output) return false;
    const Node& product = nodes[i + 1];
    if (product.src[1] != act.dst ||
        !(cpu::takes_computed_input(product, kernels_) || few_token_product(product))) {
      return false;
    }
    for (size_t j = i + 2; j < nodes.size(); ++j) {
      for (const Tensor* s : nodes[j].src) {
        if (s == act.dst) return false;
      }
    }
    return true;
  }

  // Runs the nodes in order, except that consecutive one-token or
  // few-token products of the same input (Q, K, V; gate, up) run as one
  // group, and a prompt's SwiGLU runs inside the product that reads it.
  void run_nodes(const std::vector<Node>& nodes, const Tensor* output) {
    matmul_scratch_.held = {};  // a new graph's tensors may sit where the last one's did
    timings_.clear();
    for (size_t i = 0; i < nodes.size();) {
      if (!time_ops_) {
        i += run_at(nodes, i, output);
        continue;
      }
      const auto start = std::chrono::steady_clock::now();
      const size_t n = run_at(nodes, i, output);
      timings_.emplace_back(op_label(nodes, i, n),
                            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
      i += n;
    }
  }

  // Runs nodes[i] and the nodes that go with it; returns how many it ran.
  size_t run_at(const std::vector<Node>& nodes, size_t i, const Tensor* output) {
    // Only a run of lone products keeps the converted input between them
    // (MatmulScratch::Held); any other node may rewrite what it came from.
    if (nodes[i].op != Op::MatMul) matmul_scratch_.held = {};
    if (observer_) {
      // One node at a time: the decode groups only batch what runs, and
      // every product's input is still intact before its node runs.
      if (nodes[i].op == Op::MatMul || nodes[i].op == Op::MatMulId) observer_->observe(nodes[i]);
      run(nodes[i]);
      return 1;
    }
    if (fuses_into_next(nodes, i, output)) {
      const Node& act = nodes[i];
      const cpu::InputRowFn rows = [&](int64_t t, float* row) { cpu::swiglu_row(act, t, row, kernels_); };
      if (few_token_product(nodes[i + 1])) {
        cpu::op_matmul_rows_batch(nodes[i + 1], pool_, kernels_, matmul_scratch_, &rows);
      } else {
        cpu::op_matmul(nodes[i + 1], pool_, kernels_, matmul_scratch_, &rows);
      }
      matmul_scratch_.held = {};  // the SwiGLU's output was never written
      return 2;
    }
    // One-token products (decode) or few-token ones (a scheduler step, a
    // verify pass) of the same input.
    std::array<const Node*, cpu::kMaxDecodeGroup> group{};
    size_t n = 1;
    group[0] = &nodes[i];
    const bool few = nodes[i].op == Op::MatMul && nodes[i].src[1]->ne[1] > 1;
    while (n < group.size() && i + n < nodes.size() &&
           (few ? cpu::can_share_rows_batch(nodes[i], nodes[i + n], kernels_)
                : cpu::can_share_decode(nodes[i], nodes[i + n], kernels_))) {
      group[n] = &nodes[i + n];
      ++n;
    }
    if (n > 1 && few) {
      cpu::op_matmul_rows_batch(std::span(group.data(), n), pool_, kernels_, matmul_scratch_);
    } else if (n > 1) {
      cpu::op_matmul_decode_group(std::span(group.data(), n), pool_, kernels_, matmul_scratch_);
    } else {
      run(nodes[i]);
    }
    return n;
  }

  // A timing's label: the op, a product's weight type after it (the
  // products' costs differ most by format), a SwiGLU run inside the product
  // after it joined to that product's label.
  static std::string op_label(const std::vector<Node>& nodes, size_t i, size_t n) {
    const Node& first = nodes[i];
    auto one = [](const Node& node) {
      std::string label = to_string(node.op);
      if (node.op == Op::MatMul || node.op == Op::MatMulId) {
        label += ' ';
        label += traits(node.src[0]->type).name;
      }
      return label;
    };
    if (first.op == Op::SwiGlu && n == 2) return one(first) + " + " + one(nodes[i + 1]);
    return one(first);
  }

  void run(const Node& n) {
    using namespace cpu;
    switch (n.op) {
      case Op::GetRows: op_get_rows(n, pool_); break;
      case Op::RmsNorm: op_rms_norm(n, pool_); break;
      case Op::MatMul:
        if (few_token_product(n)) {
          cpu::op_matmul_rows_batch(n, pool_, kernels_, matmul_scratch_);
        } else {
          op_matmul(n, pool_, kernels_, matmul_scratch_);
        }
        break;
      case Op::Add: op_add(n, pool_); break;
      case Op::Scale: op_scale(n, pool_); break;
      case Op::Rope: op_rope(n, pool_, rope_tables_); break;
      case Op::KvStore: op_kv_store(n, pool_, kernels_); break;
      case Op::Attention: op_attention(n, pool_, kernels_); break;
      case Op::SwiGlu: op_swiglu(n, pool_, kernels_); break;
      case Op::GeluGlu: op_geglu(n, pool_); break;
      case Op::SoftCap: op_softcap(n, pool_); break;
      case Op::SliceCols: op_slice_cols(n, pool_); break;
      case Op::LastRows: op_last_rows(n, pool_); break;
      case Op::TopK: op_top_k(n, pool_); break;
      case Op::MoeGate: op_moe_gate(n, pool_); break;
      case Op::MatMulId: op_matmul_id(n, pool_, kernels_, matmul_scratch_); break;
      case Op::MoeSum: op_moe_sum(n, pool_); break;
      case Op::SwiGluOai: op_swiglu_oai(n, pool_); break;
      case Op::AddId: op_add_id(n, pool_); break;
      case Op::LayerNorm: op_layer_norm(n, pool_); break;
      case Op::Gelu: op_gelu(n, pool_, kernels_); break;
    }
  }

  mutable cpu::ThreadPool pool_;
  quant::KernelTable kernels_;
  MatmulObserver* observer_;  // not owned; null: none
  // Replaces the arena (no graph is running, and the previous graph's output
  // has been read by its caller).
  Status set_arena(uint64_t bytes) {
    arena_.reset();
    arena_bytes_ = 0;
    void* p = std::aligned_alloc(kActivationAlign, (bytes + kActivationAlign - 1) / kActivationAlign * kActivationAlign);
    if (!p) {
      return make_error(ErrorCode::OutOfMemory, fmt::format("cannot allocate {} bytes of CPU memory for activations", bytes));
    }
    arena_.reset(p);
    arena_bytes_ = bytes;
    // The arena is sized for the largest pass, which uses all of it: its
    // pages mapped here, at load or reservation, instead of by the first
    // request's prompt (about a tenth of the extra time a fresh server's
    // first request took, with the KV cache's pages most of the rest).
    hearth::fault_in(p, bytes);
    return {};
  }

  void note_scratch() { scratch_high_water_ = std::max(scratch_high_water_, memory_use().scratch_bytes); }

  cpu::RopeTables rope_tables_;   // cos/sin of the running graph's positions
  bool time_ops_ = false;
  std::vector<std::pair<std::string, double>> timings_;  // of the last graph, when time_ops_
  cpu::MatmulScratch matmul_scratch_;  // converted activations, their kernel layouts, repacked weight tiles
  ActivationPlanner planner_;
  std::unique_ptr<void, FreeDeleter> arena_;  // activations, placed by plan_activations
  uint64_t arena_bytes_ = 0;
  uint64_t scratch_high_water_ = 0;
  uint64_t scratch_growths_ = 0;
  std::shared_ptr<BufferCounters> counters_ = std::make_shared<BufferCounters>();
};

}  // namespace

std::unique_ptr<Backend> make_cpu_backend(const CpuBackendOptions& options) {
  return std::make_unique<CpuBackend>(options);
}

}  // namespace hearth::backend
