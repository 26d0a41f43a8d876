#include "hearth/engine/backend/split_backend.h"

#include <fmt/format.h>

#include <algorithm>
#include <unordered_map>
#include <vector>

namespace hearth::backend {
namespace {

// A run of consecutive nodes on one backend.
struct Segment {
  Backend* owner = nullptr;
  size_t begin = 0;
  size_t end = 0;                 // one past the last node
  Tensor* exported = nullptr;     // the activation a later segment reads (or graph.output)
  std::vector<Tensor*> imported;  // activations of the previous segment that this one reads
};

// Marks the activations a segment receives from the previous one as inputs
// for the duration of its compute: the receiving backend then copies (Vulkan)
// or reads (CPU) them from host memory instead of expecting to produce them,
// and never recycles their memory.
class ImportScope {
 public:
  explicit ImportScope(const std::vector<Tensor*>& tensors) : tensors_(tensors) {
    for (Tensor* t : tensors_) t->kind = TensorKind::Input;
  }
  ~ImportScope() {
    for (Tensor* t : tensors_) t->kind = TensorKind::Activation;
  }
  ImportScope(const ImportScope&) = delete;
  ImportScope& operator=(const ImportScope&) = delete;

 private:
  const std::vector<Tensor*>& tensors_;
};

}  // namespace

SplitBackend::SplitBackend(std::unique_ptr<Backend> front, std::unique_ptr<Backend> back, SplitPlacement placement)
    : front_(std::move(front)),
      back_(std::move(back)),
      placement_(placement),
      name_(std::string(front_->name()) + "+" + back_->name()) {}

bool SplitBackend::supports(Op op, DType type) const {
  if (placement_.front_layers <= 0) return back_->supports(op, type);
  return front_->supports(op, type) && back_->supports(op, type);
}

bool SplitBackend::supports_sequence_batches() const {
  return back_->supports_sequence_batches() && (placement_.front_layers <= 0 || front_->supports_sequence_batches());
}

Result<std::unique_ptr<Buffer>> SplitBackend::allocate(size_t bytes, BufferUsage usage) {
  return back_->allocate(bytes, usage);
}

Backend& SplitBackend::backend_for_layer(int64_t layer) {
  return layer < placement_.front_layers ? *front_ : *back_;
}

Status SplitBackend::reserve_scratch(const ScratchReservation& reservation) {
  // The front's layers alone never have more activations alive than the
  // whole model, so the model's reservation covers them; the front backend
  // takes what it keeps on its device (Vulkan: the activation arena only).
  if (placement_.front_layers > 0) HEARTH_CHECK(front_->reserve_scratch(reservation));
  return back_->reserve_scratch(reservation);
}

MemoryUse SplitBackend::memory_use() const {
  const MemoryUse a = front_->memory_use();
  const MemoryUse b = back_->memory_use();
  return MemoryUse{a.weights_bytes + b.weights_bytes, a.kv_bytes + b.kv_bytes, a.scratch_bytes + b.scratch_bytes,
                   a.scratch_high_water_bytes + b.scratch_high_water_bytes, a.scratch_growths + b.scratch_growths};
}

Status SplitBackend::compute(Graph& graph) {
  auto& nodes = graph.nodes();
  if (nodes.empty() || graph.output == nullptr) {
    return make_error(ErrorCode::InvalidArgument, "split backend: the graph has no nodes or no output");
  }
  // Owner of every node (see the header for nodes outside layers).
  int32_t last_layer = -1;
  for (const Node& n : nodes) {
    if (n.layer >= 0) last_layer = n.layer;
  }
  Backend* current = last_layer >= 0 ? &backend_for_layer(last_layer) : back_.get();
  std::vector<Segment> segments;
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (nodes[i].layer >= 0) current = &backend_for_layer(nodes[i].layer);
    if (segments.empty() || segments.back().owner != current) segments.push_back(Segment{current, i, i, nullptr, {}});
    segments.back().end = i + 1;
  }
  last_segments_ = static_cast<int>(segments.size());
  if (segments.size() == 1) return current->compute(graph);

  // Which segment wrote each activation; each segment may read activations of
  // its own or of the segment just before it, and hands on exactly one.
  std::unordered_map<const Tensor*, size_t> writer;
  for (size_t s = 0; s < segments.size(); ++s) {
    for (size_t i = segments[s].begin; i < segments[s].end; ++i) {
      if (nodes[i].dst) writer[nodes[i].dst] = s;
    }
  }
  for (size_t s = 0; s < segments.size(); ++s) {
    Segment& seg = segments[s];
    for (size_t i = seg.begin; i < seg.end; ++i) {
      for (Tensor* src : nodes[i].src) {
        if (!src || src->kind != TensorKind::Activation) continue;
        const auto it = writer.find(src);
        if (it == writer.end() || it->second == s) continue;
        if (it->second + 1 != s) {
          return make_error(ErrorCode::Unsupported,
                            fmt::format("split backend: node {} ({}, layer {}) reads an activation from two segments back",
                                        i, to_string(nodes[i].op), nodes[i].layer));
        }
        Segment& prev = segments[s - 1];
        if (prev.exported != nullptr && prev.exported != src) {
          return make_error(ErrorCode::Unsupported,
                            fmt::format("split backend: more than one activation crosses into layer {} ({})",
                                        nodes[i].layer, to_string(nodes[i].op)));
        }
        prev.exported = src;
        if (std::find(seg.imported.begin(), seg.imported.end(), src) == seg.imported.end()) seg.imported.push_back(src);
      }
    }
  }
  const auto out_writer = writer.find(graph.output);
  if (out_writer == writer.end() || out_writer->second != segments.size() - 1) {
    return make_error(ErrorCode::Unsupported, "split backend: the graph output is not written by its last segment");
  }
  segments.back().exported = graph.output;

  for (size_t s = 0; s < segments.size(); ++s) {
    const Segment& seg = segments[s];
    if (seg.exported == nullptr) {
      return make_error(ErrorCode::Unsupported,
                        fmt::format("split backend: nodes {}..{} produce nothing later nodes read", seg.begin, seg.end - 1));
    }
    for (const Tensor* t : seg.imported) {
      if (t->data == nullptr) {
        return make_error(ErrorCode::Internal, "split backend: a handed-over activation has no host data");
      }
    }
    Graph part;
    part.nodes().assign(nodes.begin() + static_cast<std::ptrdiff_t>(seg.begin),
                        nodes.begin() + static_cast<std::ptrdiff_t>(seg.end));
    part.output = seg.exported;
    ImportScope scope(seg.imported);
    auto st = seg.owner->compute(part);
    if (!st.ok()) {
      return make_error(st.error().code, fmt::format("{} (split: layers on {})", st.error().message, seg.owner->name()));
    }
  }
  return {};
}

}  // namespace hearth::backend
