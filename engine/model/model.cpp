// Loading (memory check first, then mmap and binding; the weights used in
// place or copied to huge pages, weight_memory.h) and the
// forward-pass driver shared by every family.
#include "hearth/engine/model/model.h"

#include <fmt/format.h>
#include <hearth/core/file_io.h>
#include <hearth/engine/quant/interleave.h>

#include <algorithm>
#include <cstdio>
#include <system_error>

#include "arch.h"
#include "graph_output.h"

namespace hearth::model {

uint64_t available_memory_bytes() {
  std::FILE* f = std::fopen("/proc/meminfo", "r");
  if (!f) return 0;
  char line[256];
  unsigned long long kb = 0;
  while (std::fgets(line, sizeof line, f)) {
    if (std::sscanf(line, "MemAvailable: %llu kB", &kb) == 1) break;
  }
  std::fclose(f);
  return static_cast<uint64_t>(kb) * 1024;
}

Status check_memory(uint64_t needed, uint64_t available, const std::string& what) {
  if (available == 0 || needed <= available) return {};
  return make_error(ErrorCode::OutOfMemory,
                    fmt::format("{} needs {:.1f} GB, {:.1f} GB available", what, static_cast<double>(needed) / 1e9,
                                static_cast<double>(available) / 1e9));
}

Result<std::unique_ptr<Model>> Model::load(const std::filesystem::path& path, const LoadOptions& options) {
  // Refuse before mapping anything: a model that does not fit would push the
  // machine into swap or get the process killed half-way through.
  // RegularFile refuses a FIFO, a device or a directory before open().
  uint64_t file_bytes = 0;
  {
    HEARTH_TRY(const RegularFile probe, RegularFile::open(path.string()));
    file_bytes = probe.size();
  }
  if (options.memory_check == MemoryCheck::Enforce) {
    HEARTH_CHECK(check_memory(file_bytes + options.extra_bytes, available_memory_bytes(), path.string()));
  }
  if (options.cancelled && options.cancelled()) {
    return make_error(ErrorCode::Cancelled, fmt::format("{}: loading cancelled", path.string()));
  }
  HEARTH_TRY(auto file, gguf::GgufFile::open(path, options.mode));
  const bool copy = options.mode == gguf::LoadMode::Mmap && resolve(options.weights) == WeightMemory::HugePageCopy;
  HEARTH_TRY(auto m, bind(std::move(file)));
  if (copy) {
    HEARTH_CHECK(m->copy_weights(path, options.progress, options.cancelled));
    m->interleave_weights(options.cpu_kernels);
  } else {
    HEARTH_CHECK(m->file_.check_unchanged());
    HEARTH_CHECK(m->fault_in(options.progress, options.cancelled));
  }
  return m;
}

Result<std::unique_ptr<Model>> Model::from_file(gguf::GgufFile file, const LoadOptions& options) {
  HEARTH_TRY(auto m, bind(std::move(file)));
  HEARTH_CHECK(m->fault_in(options.progress, options.cancelled));
  return m;
}

Result<std::unique_ptr<Model>> Model::bind(gguf::GgufFile file) {
  std::unique_ptr<Model> m(new Model(std::move(file)));
  const std::string where = m->file_.path().string();
  HEARTH_TRY(m->hparams_.architecture, m->file_.architecture());
  m->arch_ = find_arch(m->hparams_.architecture);
  if (!m->arch_) {
    return make_error(ErrorCode::Unsupported, fmt::format("{}: architecture '{}' is not supported (supported: {})",
                                                          where, m->hparams_.architecture, supported_list()));
  }
  HParams& hp = m->hparams_;
  HEARTH_CHECK(m->arch_->read_hparams(m->file_, hp));
  HEARTH_CHECK(read_embedding_hparams(m->file_, hp));
  const gguf::TensorInfo* embd = m->file_.find_tensor("token_embd.weight");
  if (!embd) {
    return make_error(ErrorCode::NotFound, fmt::format("{}: required tensor 'token_embd.weight' is missing", where));
  }
  hp.n_vocab = embd->dims[1];

  m->weights_.layers.resize(static_cast<size_t>(hp.n_layer));
  WeightBinder binder(m->file_, m->tensors_);
  HEARTH_CHECK(m->arch_->bind(binder, hp, m->weights_));
  if (m->weights_.rope_freqs) hp.rope.freq_factors = m->weights_.rope_freqs->as<const float>();
  m->weight_bytes_ = binder.bound_bytes();
  return m;
}

void Model::interleave_weights(quant::KernelLevel cap) {
  const quant::KernelTable kernels = quant::select_kernels(quant::detect_cpu_features(), cap);
  // The products (fused ones too: the graph slices their outputs) and the
  // token embedding (the tied output head of small models is a fifth of
  // their weights; its lookups read single rows through copy_plain_rows).
  // Not the experts: 3-D, with their own kernels.
  auto interleave = [&](Tensor* t) {
    if (!t || t->layout != backend::WeightLayout::Plain || t->ne[2] != 1 || t->ne[3] != 1) return;
    if (!quant::can_interleave(t->type, t->ne[1], t->ne[0]) || !kernels.get(t->type).interleaved.decode.rows) return;
    quant::interleave_rows_in_place(t->type, t->data, t->ne[1], t->ne[0]);
    t->layout = backend::WeightLayout::Interleaved16;
  };
  for (LayerWeights& layer : weights_.layers) {
    for (Tensor* t : {layer.wq, layer.wk, layer.wv, layer.wqkv, layer.wo, layer.w_gate, layer.w_up, layer.w_gate_up,
                      layer.w_down}) {
      interleave(t);
    }
  }
  interleave(weights_.tok_embd);
  if (weights_.output != weights_.tok_embd) interleave(weights_.output);
}

Status Model::fault_in(const ProgressFn& progress_fn, const std::function<bool()>& cancelled) {
  // Fault the mapped pages in now, tensor by tensor, so the first token does
  // not pay for it and the caller can show progress.
  LoadProgress progress{0, weight_bytes_};
  constexpr size_t kPage = 4096;
  volatile uint8_t sink = 0;
  for (const Tensor& t : tensors_) {
    if (cancelled && cancelled()) {
      return make_error(ErrorCode::Cancelled, fmt::format("{}: loading cancelled", file_.path().string()));
    }
    const auto* p = static_cast<const uint8_t*>(t.data);
    const size_t n = t.bytes();
    for (size_t off = 0; off < n; off += kPage) sink = static_cast<uint8_t>(sink + p[off]);
    progress.done_bytes += n;
    if (progress_fn) progress_fn(progress);
  }
  (void)sink;
  weight_memory_ = WeightMemory::Mapped;
  return {};
}

Status Model::copy_weights(const std::filesystem::path& path, const ProgressFn& progress_fn,
                           const std::function<bool()>& cancelled) {
  if (tensors_.empty()) return {};
  // The bound tensors as one byte range of the file: from the first weight's
  // first byte to the last one's end (the few unbound bytes between them,
  // alignment padding, come along).
  const auto* lo = static_cast<const uint8_t*>(tensors_.front().data);
  const uint8_t* hi = lo;
  for (const Tensor& t : tensors_) {
    const auto* p = static_cast<const uint8_t*>(t.data);
    lo = std::min(lo, p);
    hi = std::max(hi, p + t.bytes());
  }
  // The mapping's first byte is file offset 0: locate `lo` in the file
  // through any tensor's offset in the data section.
  const gguf::TensorInfo& info = file_.tensors().front();
  const uint8_t* mapping = file_.tensor_data(info).data() - (file_.data_offset() + info.offset);
  const auto offset = static_cast<uint64_t>(lo - mapping);
  const auto size = static_cast<uint64_t>(hi - lo);
  const uint64_t total = weight_bytes_;
  WeightReadOptions read_options;
  read_options.expect_device = file_.file_device();
  read_options.expect_inode = file_.file_inode();
  read_options.stop = cancelled;
  HEARTH_TRY(weight_copy_, read_weights_file(
                               path, offset, size,
                               [&](uint64_t done) {
                                 // Progress in the units the mapped load reports (weight bytes, a
                                 // tied matrix counted twice), scaled from the bytes read.
                                 if (!progress_fn) return;
                                 const double fraction = static_cast<double>(done) / static_cast<double>(size);
                                 const auto scaled = static_cast<uint64_t>(fraction * static_cast<double>(total));
                                 progress_fn(LoadProgress{done == size ? total : scaled, total});
                               },
                               read_options));
  for (Tensor& t : tensors_) {
    t.data = weight_copy_.data() + (static_cast<const uint8_t*>(t.data) - lo);
  }
  if (weights_.rope_freqs) hparams_.rope.freq_factors = weights_.rope_freqs->as<const float>();
  weight_memory_ = WeightMemory::HugePageCopy;
  return {};
}

uint64_t Model::bytes_per_token() const {
  uint64_t total = 0;
  for (const Tensor& t : tensors_) {
    if (&t == weights_.tok_embd && weights_.output != weights_.tok_embd) {
      total += t.row_bytes();  // one embedding row per token
    } else if (is_expert_tensor(t)) {
      total += active_expert_bytes(t);
    } else {
      total += t.bytes();
    }
  }
  return total;
}

bool Model::is_expert_tensor(const Tensor& t) const {
  return hparams_.n_expert > 0 && t.ne[2] == hparams_.n_expert && t.ne[3] == 1;
}

uint64_t Model::active_expert_bytes(const Tensor& t) const {
  // A token reads the matrices of the experts it is routed to, and only those.
  return t.bytes() / static_cast<uint64_t>(hparams_.n_expert) * static_cast<uint64_t>(hparams_.n_expert_used);
}

uint64_t Model::expert_bytes() const {
  uint64_t total = 0;
  for (const Tensor& t : tensors_) {
    if (is_expert_tensor(t)) total += t.bytes();
  }
  return total;
}

kv::KvCacheConfig Model::kv_config(int64_t n_ctx, DType type) const {
  return kv_config(n_ctx, type, 0, kv::WindowedLayers::Full);
}

kv::KvCacheConfig Model::kv_config(int64_t n_ctx, DType type, int64_t n_batch, kv::WindowedLayers windowed) const {
  kv::KvCacheConfig c;
  c.n_layer = hparams_.n_layer;
  c.n_head_kv = hparams_.n_head_kv;
  c.head_dim = hparams_.head_dim;
  c.n_ctx = n_ctx;
  c.type = type;
  c.layer_windows = layer_windows();
  c.n_batch = n_batch;
  c.windowed = windowed;
  return c;
}

std::vector<int32_t> Model::layer_windows() const {
  std::vector<int32_t> w;
  for (int64_t l = 0; l < hparams_.n_layer; ++l) w.push_back(hparams_.window_of_layer(l));
  if (std::ranges::all_of(w, [](int32_t x) { return x == 0; })) w.clear();
  return w;
}

kv::ModelDims Model::memory_dims() const {
  kv::ModelDims d{hparams_.n_layer, hparams_.n_embd,  hparams_.n_head, hparams_.n_head_kv,
                  hparams_.head_dim, hparams_.n_ff, hparams_.n_vocab};
  for (const LayerWeights& lw : weights_.layers) {
    if (lw.wqkv || lw.w_gate_up) d.projections = kv::ProjectionLayout::Fused;
  }
  d.layer_windows = layer_windows();
  d.n_expert = hparams_.n_expert;
  d.n_expert_used = hparams_.n_expert_used;
  d.n_ff_exp = hparams_.n_ff_exp;
  for (const LayerWeights& lw : weights_.layers) {
    if (lw.ffn_down_exps_b) d.expert_biases = true;
  }
  return d;
}

backend::Tensor* Model::build_forward(backend::Graph& g, const Batch& batch, const kv::KvCache& cache,
                                      LogitsRows rows) const {
  const auto n = static_cast<int64_t>(batch.tokens.size());
  Tensor* ids = g.input(DType::I32, {n, 1, 1, 1}, const_cast<int32_t*>(batch.tokens.data()));
  Tensor* pos = g.input(DType::I32, {n, 1, 1, 1}, const_cast<int32_t*>(batch.positions.data()));
  Tensor* x = g.get_rows(weights_.tok_embd, ids);
  if (hparams_.embd_scale > 0.0f) x = g.scale(x, hparams_.embd_scale);
  // Only the last row's logits: the last layer computes that row alone past
  // its K/V store (KeptRows).
  const bool keep_last = rows == LogitsRows::Last && n > 1;
  KeptRows kept;
  if (keep_last) {
    kept.last = 1;
    auto* last_position = const_cast<int32_t*>(&batch.positions[static_cast<size_t>(n - 1)]);
    kept.positions = g.input(DType::I32, {1, 1, 1, 1}, last_position);
    kept.kv = cache.layer_view(hparams_.n_layer - 1);
  }
  for (int64_t il = 0; il < hparams_.n_layer; ++il) {
    g.set_layer(static_cast<int32_t>(il));
    LayerContext ctx{g, hparams_, weights_.layers[static_cast<size_t>(il)], pos, cache.layer_view(il), il, pos};
    if (keep_last && il == hparams_.n_layer - 1) ctx.kept = &kept;
    x = arch_->build_layer(ctx, x);
  }
  g.set_layer(-1);
  if (rows == LogitsRows::LastOfWholeLayers && n > 1) x = g.last_rows(x, 1);
  x = g.rms_norm(x, weights_.output_norm, hparams_.rms_eps);
  Tensor* logits = g.matmul(weights_.output, x);
  if (hparams_.final_softcap > 0.0f) logits = g.softcap(logits, hparams_.final_softcap);
  g.output = logits;
  return logits;
}

Status Model::forward(backend::Backend& backend, kv::KvCache& cache, const Batch& batch, LogitsRows rows,
                      std::vector<float>& logits) const {
  // Mapped weights: a file truncated or rewritten since the load would raise
  // SIGBUS (or give wrong numbers) on the next page read. One fstat per
  // forward pass finds it first; one during the pass is found after it.
  if (weight_memory_ == WeightMemory::Mapped) HEARTH_CHECK(file_.check_unchanged());
  HEARTH_CHECK(require_lm_head());
  if (batch.tokens.empty() || batch.tokens.size() != batch.positions.size()) {
    return make_error(ErrorCode::InvalidArgument, "forward: empty batch or positions of the wrong length");
  }
  int32_t max_pos = 0;
  int32_t min_pos = batch.positions.front();
  for (size_t i = 0; i < batch.tokens.size(); ++i) {
    min_pos = std::min(min_pos, batch.positions[i]);
    if (batch.tokens[i] < 0 || batch.tokens[i] >= hparams_.n_vocab) {
      return make_error(ErrorCode::InvalidArgument,
                        fmt::format("token id {} is outside the vocabulary (0..{})", batch.tokens[i], hparams_.n_vocab - 1));
    }
    max_pos = std::max(max_pos, batch.positions[i]);
  }
  if (max_pos >= cache.capacity() || batch.positions.front() < 0) {
    return make_error(ErrorCode::LimitExceeded,
                      fmt::format("position {} is outside the KV cache of {} positions", max_pos, cache.capacity()));
  }
  // Ring layers hold window + n_batch - 1 positions: a longer span would
  // overwrite keys the batch's first queries still see.
  if (max_pos - min_pos + 1 > cache.max_batch_span() ||
      (cache.has_rings() && max_pos - min_pos + 1 != static_cast<int32_t>(batch.positions.size()))) {
    return make_error(ErrorCode::InvalidArgument,
                      fmt::format("forward: positions {}..{} are not one run of at most {} positions, which the "
                                  "sliding-window layers of this KV cache were sized for",
                                  min_pos, max_pos, cache.max_batch_span()));
  }
  if (cache.has_rings() && !cache.holds_history(min_pos)) {
    return make_error(ErrorCode::InvalidArgument,
                      fmt::format("forward: the sliding-window layers no longer hold the keys before position {}; "
                                  "prefill the context again",
                                  min_pos));
  }
  backend::Graph graph;
  build_forward(graph, batch, cache, rows);
  HEARTH_CHECK(compute_into(backend, graph, logits));
  // A truncation during the pass read zeros where the weights were
  // (gguf/mapping_guard.h): the pass is discarded with a clean error.
  if (weight_memory_ == WeightMemory::Mapped) HEARTH_CHECK(file_.check_unchanged());
  cache.note_written(min_pos, max_pos + 1);
  cache.set_used(std::max<int64_t>(cache.used(), max_pos + 1));
  return {};
}

}  // namespace hearth::model
