// The CPU backend: places activations in reusable scratch memory (a tensor's
// memory returns to the pool after its last reader), then runs each node's
// kernel on the persistent thread pool.
#include "hearth/engine/backend/cpu_backend.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <thread>
#include <unordered_map>

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

class CpuBuffer final : public Buffer {
 public:
  CpuBuffer(size_t bytes, BufferUsage usage) : size_(bytes), usage_(usage) {
    data_ = std::aligned_alloc(64, std::max<size_t>(64, (bytes + 63) / 64 * 64));
  }
  ~CpuBuffer() override { std::free(data_); }
  bool valid() const { return data_ != nullptr; }
  size_t size() const override { return size_; }
  BufferUsage usage() const override { return usage_; }
  void* host_data() override { return data_; }

 private:
  size_t size_;
  BufferUsage usage_;
  void* data_ = nullptr;
};

// Scratch memory for activations, kept between graphs so steady-state decode
// allocates nothing.
class ScratchPool {
 public:
  float* acquire(size_t floats) {
    auto it = free_.lower_bound(floats);
    if (it != free_.end()) {
      float* p = it->second;
      free_.erase(it);
      return p;
    }
    auto& block = blocks_.emplace_back(new float[floats + 16]);
    sizes_[block.get()] = floats;
    return block.get();
  }
  void release(float* p) { free_.emplace(sizes_[p], p); }
  void reset() {
    free_.clear();
    for (auto& b : blocks_) free_.emplace(sizes_[b.get()], b.get());
  }

 private:
  std::vector<std::unique_ptr<float[]>> blocks_;
  std::unordered_map<float*, size_t> sizes_;
  std::multimap<size_t, float*> free_;
};

class CpuBackend final : public Backend {
 public:
  explicit CpuBackend(const CpuBackendOptions& options)
      : pool_(options.threads > 0 ? options.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()))),
        kernels_(quant::select_kernels(quant::detect_cpu_features(), options.kernels == KernelChoice::Reference
                                                                          ? quant::KernelLevel::Scalar
                                                                          : quant::KernelLevel::Avx512)) {}

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
      case Op::GetRows: return cpu::has_row_ops(type);
      case Op::KvStore:
      case Op::Attention: return type == DType::F16 || type == DType::F32 || type == DType::Q8_0;
      default: return type == DType::F32;
    }
  }

  Result<std::unique_ptr<Buffer>> allocate(size_t bytes, BufferUsage usage) override {
    auto buffer = std::make_unique<CpuBuffer>(bytes, usage);
    if (!buffer->valid()) {
      return make_error(ErrorCode::OutOfMemory, fmt::format("cannot allocate {} bytes of CPU memory", bytes));
    }
    return std::unique_ptr<Buffer>(std::move(buffer));
  }

  Status compute(Graph& graph) override {
    HEARTH_CHECK(check_supported(*this, graph));
    auto& nodes = graph.nodes();
    // Last node that reads each activation; the output lives past the end.
    std::unordered_map<const Tensor*, size_t> last_use;
    for (size_t i = 0; i < nodes.size(); ++i) {
      for (Tensor* s : nodes[i].src) {
        if (s && s->kind == TensorKind::Activation) last_use[s] = i;
      }
    }
    scratch_.reset();
    for (size_t i = 0; i < nodes.size(); ++i) {
      Node& node = nodes[i];
      if (node.dst && node.dst->kind == TensorKind::Activation && !node.dst->data) {
        node.dst->data = scratch_.acquire(static_cast<size_t>(node.dst->elements()));
      }
      run(node);
      std::array<Tensor*, 3> released{};
      for (size_t k = 0; k < node.src.size(); ++k) {
        Tensor* s = node.src[k];
        if (!s || s->kind != TensorKind::Activation || s == graph.output || last_use[s] != i) continue;
        if (std::find(released.begin(), released.end(), s) != released.end()) continue;
        released[k] = s;
        scratch_.release(static_cast<float*>(s->data));
      }
    }
    return {};
  }

 private:
  void run(const Node& n) {
    using namespace cpu;
    switch (n.op) {
      case Op::GetRows: op_get_rows(n, pool_); break;
      case Op::RmsNorm: op_rms_norm(n, pool_); break;
      case Op::MatMul: op_matmul(n, pool_, kernels_, matmul_scratch_); break;
      case Op::Add: op_add(n, pool_); break;
      case Op::Scale: op_scale(n, pool_); break;
      case Op::Rope: op_rope(n, pool_); break;
      case Op::KvStore: op_kv_store(n, pool_); break;
      case Op::Attention: op_attention(n, pool_, kernels_); break;
      case Op::SwiGlu: op_swiglu(n, pool_, kernels_); break;
      case Op::GeluGlu: op_geglu(n, pool_); break;
      case Op::SoftCap: op_softcap(n, pool_); break;
      case Op::SliceCols: op_slice_cols(n, pool_); break;
      case Op::LastRows: op_last_rows(n, pool_); break;
    }
  }

  mutable cpu::ThreadPool pool_;
  quant::KernelTable kernels_;
  cpu::MatmulScratch matmul_scratch_;  // converted activations, repacked weight tiles
  ScratchPool scratch_;
};

}  // namespace

std::unique_ptr<Backend> make_cpu_backend(const CpuBackendOptions& options) {
  return std::make_unique<CpuBackend>(options);
}

}  // namespace hearth::backend
