// Streaming whole-model quantization. The input stays mapped; each tensor is
// converted by `threads` workers, each owning a contiguous range of rows and
// its own float buffers, into one output buffer that is written and dropped
// before the next tensor starts.
#include "hearth/engine/tools/quantize_model.h"

#include <fmt/format.h>
#include <hearth/engine/gguf/reader.h>
#include <hearth/core/file_io.h>
#include <hearth/engine/gguf/writer.h>
#include <hearth/engine/quant/kernels.h>
#include <hearth/engine/quant/reference.h>
#include <hearth/engine/quant/weighted.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <thread>

namespace hearth::tools {
namespace {

bool is_float_source(DType t) { return t == DType::F32 || t == DType::F16 || t == DType::BF16; }

// The reference writes global tensors first (by name), then each layer's
// tensors (by name): its loader keeps weights in a map ordered this way.
bool reference_order(const gguf::TensorInfo* a, const gguf::TensorInfo* b) {
  const int64_t la = layer_of(a->name);
  const int64_t lb = layer_of(b->name);
  if (la != lb) return la < lb;
  return a->name < b->name;
}

// One tensor's conversion job; workers read `src` rows and write `dst` rows.
struct Job {
  DType src_type;
  DType dst_type;
  const uint8_t* src;
  uint8_t* dst;
  int64_t row_length;
  uint64_t src_row_bytes;
  uint64_t dst_row_bytes;
  quant::QuantizeFn fast;  // nullptr: use the reference quantize_row
  ErrorReport report;
  // {row_length * n_mat} importance weights, or null; rows of matrix m (m =
  // row / rows_per_matrix) use [m * row_length, (m + 1) * row_length).
  const float* importance = nullptr;
  int64_t rows_per_matrix = 1;
};

struct Partial {
  double err2 = 0.0;
  double src2 = 0.0;
  Status status;
};

void convert_rows(const Job& job, int64_t r0, int64_t r1, Partial& out) {
  std::vector<float> row(static_cast<size_t>(job.row_length));
  std::vector<float> back(job.report == ErrorReport::Compute ? row.size() : 0);
  for (int64_t r = r0; r < r1; ++r) {
    const uint8_t* s = job.src + static_cast<uint64_t>(r) * job.src_row_bytes;
    uint8_t* d = job.dst + static_cast<uint64_t>(r) * job.dst_row_bytes;
    if (auto st = quant::dequantize_row(job.src_type, s, row.data(), job.row_length); !st) {
      out.status = st;
      return;
    }
    if (job.importance) {
      const float* w = job.importance + (r / job.rows_per_matrix) * job.row_length;
      if (auto st = quant::quantize_row_weighted(job.dst_type, row.data(), d, job.row_length, w); !st) {
        out.status = st;
        return;
      }
    } else if (job.fast) {
      job.fast(row.data(), d, job.row_length);
    } else if (auto st = quant::quantize_row(job.dst_type, row.data(), d, job.row_length); !st) {
      out.status = st;
      return;
    }
    if (job.report == ErrorReport::Skip) continue;
    if (auto st = quant::dequantize_row(job.dst_type, d, back.data(), job.row_length); !st) {
      out.status = st;
      return;
    }
    for (size_t i = 0; i < row.size(); ++i) {
      const double diff = static_cast<double>(back[i]) - row[i];
      out.err2 += diff * diff;
      out.src2 += static_cast<double>(row[i]) * row[i];
    }
  }
}

// Splits the rows between threads; small tensors run on the caller alone.
Status run_job(const Job& job, int64_t rows, int threads, TensorReport& report) {
  const int64_t min_rows_per_thread = 16;
  const int64_t n_threads = std::clamp<int64_t>(rows / min_rows_per_thread, 1, std::max(1, threads));
  std::vector<Partial> parts(static_cast<size_t>(n_threads));
  std::vector<std::thread> workers;
  const int64_t per = (rows + n_threads - 1) / n_threads;
  for (int64_t t = 1; t < n_threads; ++t) {
    const int64_t r0 = std::min(rows, t * per);
    const int64_t r1 = std::min(rows, r0 + per);
    workers.emplace_back(convert_rows, std::cref(job), r0, r1, std::ref(parts[static_cast<size_t>(t)]));
  }
  convert_rows(job, 0, std::min(rows, per), parts[0]);
  for (auto& w : workers) w.join();
  double err2 = 0.0;
  double src2 = 0.0;
  for (const auto& p : parts) {
    if (!p.status) return p.status;
    err2 += p.err2;
    src2 += p.src2;
  }
  const auto n = static_cast<double>(report.elements);
  if (job.report == ErrorReport::Compute && n > 0) {
    report.rms_error = std::sqrt(err2 / n);
    report.rms_source = std::sqrt(src2 / n);
  }
  return {};
}

// Layers as the reference counts them for its rules: from the tensors present.
int64_t model_layers(const std::vector<const gguf::TensorInfo*>& tensors) {
  int64_t from_names = 0;
  for (const auto* t : tensors) from_names = std::max(from_names, layer_of(t->name) + 1);
  return from_names;
}

int64_t model_gqa(const gguf::GgufFile& file) {
  auto arch = file.architecture();
  if (!arch.ok()) return 1;
  auto heads = file.find_uint(*arch + ".attention.head_count");
  auto heads_kv = file.find_uint(*arch + ".attention.head_count_kv");
  if (!heads.ok() || !heads_kv.ok() || !*heads || !*heads_kv || **heads_kv == 0) return 1;
  return static_cast<int64_t>(**heads / **heads_kv);
}

// The importance weights of one tensor, or null when it has none or its type
// takes none. The size must be the tensor's columns times its matrices (the
// experts of a 3-D stack); the token embedding is exempt, as in the
// reference (a lookup table whose entry, if any, comes from elsewhere).
Result<const float*> importance_for(const QuantImportance* importance, const gguf::TensorInfo& t, DType type) {
  if (!importance || !quant::takes_importance(type)) return static_cast<const float*>(nullptr);
  const auto it = importance->weights.find(t.name);
  if (it == importance->weights.end()) return static_cast<const float*>(nullptr);
  const int64_t want = t.dims[0] * t.dims[2] * t.dims[3];
  if (static_cast<int64_t>(it->second.size()) != want) {
    if (t.name == "token_embd.weight") return static_cast<const float*>(nullptr);
    return make_error(ErrorCode::InvalidArgument,
                      fmt::format("tensor '{}': the importance matrix {} has {} values for it, the tensor needs {} "
                                  "({} columns x {} matrices); was it collected on another model?",
                                  t.name, importance->file, it->second.size(), want, t.dims[0], want / t.dims[0]));
  }
  return it->second.data();
}

}  // namespace

Result<ErrorStats> tensor_error(DType type, const uint8_t* data, const float* reference, int64_t row_length,
                                int64_t rows) {
  HEARTH_TRY(const uint64_t rb, row_bytes(type, row_length));
  std::vector<float> back(static_cast<size_t>(row_length));
  double err2 = 0.0;
  double src2 = 0.0;
  for (int64_t r = 0; r < rows; ++r) {
    HEARTH_CHECK(quant::dequantize_row(type, data + static_cast<uint64_t>(r) * rb, back.data(), row_length));
    const float* ref = reference + r * row_length;
    for (int64_t i = 0; i < row_length; ++i) {
      const double diff = static_cast<double>(back[static_cast<size_t>(i)]) - ref[i];
      err2 += diff * diff;
      src2 += static_cast<double>(ref[i]) * ref[i];
    }
  }
  const double n = static_cast<double>(rows) * static_cast<double>(row_length);
  if (n <= 0) return ErrorStats{};
  return ErrorStats{std::sqrt(err2 / n), std::sqrt(src2 / n)};
}

Result<QuantizeReport> quantize_model(const std::filesystem::path& input, const std::filesystem::path& output,
                                      const QuantizeOptions& options) {
  // Writing over the input would truncate the file that is mapped for
  // reading (SIGBUS) and destroy it; hard links and symlinks count too.
  if (same_file(input.string(), output.string())) {
    return make_error(ErrorCode::InvalidArgument,
                      fmt::format("{} and {} are the same file; write the output to a new file", input.string(),
                                  output.string()));
  }
  HEARTH_TRY(gguf::GgufFile file, gguf::GgufFile::open(input, gguf::LoadMode::Mmap));
  const std::string where = input.string();

  std::vector<const gguf::TensorInfo*> order;
  for (const auto& t : file.tensors()) {
    if (!is_float_source(t.type)) {
      return make_error(ErrorCode::Unsupported,
                        fmt::format("{}: tensor '{}' is {}; quantize needs F32, F16 or BF16 tensors", where, t.name,
                                    traits(t.type).name));
    }
    order.push_back(&t);
  }
  std::stable_sort(order.begin(), order.end(), reference_order);

  const int64_t n_layer = model_layers(order);
  const int64_t n_gqa = model_gqa(file);
  const bool has_output = file.find_tensor("output.weight") != nullptr;
  int64_t n_expert = 0;
  if (auto arch = file.architecture(); arch.ok()) {
    HEARTH_TRY(const auto experts, file.find_uint(*arch + ".expert_count"));
    n_expert = static_cast<int64_t>(experts.value_or(0));
  }

  gguf::GgufWriter writer(file.alignment());
  for (const auto& kv : file.metadata()) {
    if (kv.key == "general.file_type" || kv.key == "general.quantization_version") continue;
    writer.add_metadata(kv.key, kv.value);
  }
  writer.add_metadata("general.quantization_version", gguf::make_uint32(2));
  writer.add_metadata("general.file_type", gguf::make_uint32(file_type_id(options.target)));
  if (options.importance) {
    // The keys the reference records, so tools that list them see where the weights came from.
    writer.add_metadata("quantize.imatrix.file", gguf::make_string(options.importance->file));
    if (!options.importance->dataset.empty()) {
      writer.add_metadata("quantize.imatrix.dataset", gguf::make_string(options.importance->dataset));
    }
    writer.add_metadata("quantize.imatrix.entries_count",
                        gguf::make_int32(static_cast<int32_t>(options.importance->weights.size())));
    writer.add_metadata("quantize.imatrix.chunks_count", gguf::make_int32(static_cast<int32_t>(options.importance->chunks)));
  }

  std::vector<DType> types;
  for (const auto* t : order) {
    TensorContext ctx{t->name, t->n_dims, t->row_length(), layer_of(t->name), n_layer, n_gqa, has_output, n_expert,
                      options.importance != nullptr};
    const DType type = choose_tensor_type(options.target, ctx);
    types.push_back(type);
    gguf::TensorSpec spec{t->name, type, {}};
    for (uint32_t d = 0; d < t->n_dims; ++d) spec.dims.push_back(t->dims[d]);
    if (auto st = writer.add_tensor(std::move(spec)); !st) {
      return make_error(st.error().code, fmt::format("{}: {}", output.string(), st.error().message));
    }
  }
  HEARTH_CHECK(writer.begin(output));
  // The writer fills a temporary file renamed over `output` only by finish(),
  // so a failure leaves any existing output untouched and nothing partial.
  auto fail = [](Error error) { return error; };

  const quant::KernelTable kernels = quant::select_kernels(quant::detect_cpu_features());
  QuantizeReport report;
  std::vector<uint8_t> out;
  for (size_t i = 0; i < order.size(); ++i) {
    const gguf::TensorInfo& t = *order[i];
    const DType type = types[i];
    auto src_rb_or = row_bytes(t.type, t.row_length());
    auto dst_rb_or = row_bytes(type, t.row_length());
    if (!src_rb_or.ok()) return fail(src_rb_or.take_error());
    if (!dst_rb_or.ok()) return fail(dst_rb_or.take_error());
    const uint64_t src_rb = *src_rb_or;
    const uint64_t dst_rb = *dst_rb_or;
    out.assign(dst_rb * static_cast<uint64_t>(t.rows()), 0);
    const bool blocks = traits(type).quantized;
    Job job{t.type, type, file.tensor_data(t).data(), out.data(), t.row_length(), src_rb, dst_rb,
            blocks ? kernels.get(type).quantize : nullptr, options.error_report};
    auto imp = importance_for(options.importance.get(), t, type);
    if (!imp.ok()) return fail(make_error(imp.error().code, fmt::format("{}: {}", where, imp.error().message)));
    job.importance = *imp;
    job.rows_per_matrix = std::max<int64_t>(1, t.dims[1]);
    TensorReport tr{t.name, t.type, type, t.elements(), out.size(), 0.0, 0.0};
    if (auto st = run_job(job, t.rows(), options.threads, tr); !st) {
      return fail(make_error(st.error().code, fmt::format("{}: tensor '{}': {}", where, t.name, st.error().message)));
    }
    if (auto st = writer.write_tensor_data(out); !st) {
      return fail(make_error(st.error().code, fmt::format("{}: {}", output.string(), st.error().message)));
    }
    report.input_bytes += t.bytes;
    report.output_bytes += out.size();
    if (options.on_tensor) options.on_tensor(tr);
    report.tensors.push_back(std::move(tr));
  }
  if (auto st = writer.finish(); !st) return fail(st.take_error());
  return report;
}

}  // namespace hearth::tools
