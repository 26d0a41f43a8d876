// Reading and writing importance matrices in the reference engine's layouts
// (importance.h). Files come from anywhere: every size is checked against the
// bytes present before it is used, and every value must be finite and >= 0.
#include <hearth/core/file_io.h>
#include <hearth/engine/gguf/reader.h>
#include <hearth/engine/gguf/writer.h>
#include <hearth/engine/imatrix/importance.h>

#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <string_view>

namespace hearth::imatrix {
namespace {

constexpr std::string_view kSumsSuffix = ".in_sum2";
constexpr std::string_view kCountsSuffix = ".counts";
// Larger than any model's importance data (a 400B-parameter MoE's is ~2 GB).
constexpr uint64_t kMaxFileBytes = 8ull << 30;
constexpr int32_t kMaxNameBytes = 4096;

Error bad(const std::string& file, const std::string& what) {
  return make_error(ErrorCode::InvalidFormat, fmt::format("{}: {}", file, what));
}

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// Little-endian reads with the remaining length checked first.
class Cursor {
 public:
  explicit Cursor(std::string_view bytes) : bytes_(bytes) {}
  size_t left() const { return bytes_.size() - pos_; }
  size_t pos() const { return pos_; }
  bool i32(int32_t& v) {
    if (left() < 4) return false;
    std::memcpy(&v, bytes_.data() + pos_, 4);
    pos_ += 4;
    return true;
  }
  bool take(size_t n, std::string_view& out) {
    if (left() < n) return false;
    out = bytes_.substr(pos_, n);
    pos_ += n;
    return true;
  }

 private:
  std::string_view bytes_;
  size_t pos_ = 0;
};

Status check_values(const std::string& file, const std::string& name, const char* what, const float* v, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    if (!std::isfinite(v[i]) || v[i] < 0) {
      return bad(file, fmt::format("entry '{}': {} value {} is {} (must be finite and >= 0)", name, what, i, v[i]));
    }
  }
  return {};
}

Result<ImportanceMatrix> read_legacy(const std::string& file, std::string_view bytes) {
  ImportanceMatrix out;
  out.legacy = true;
  Cursor c(bytes);
  int32_t n_entries = 0;
  if (!c.i32(n_entries)) return bad(file, "truncated: no entry count (not an importance matrix)");
  if (n_entries < 1) return bad(file, fmt::format("entry count {} (must be at least 1)", n_entries));
  // Each entry takes at least 16 bytes: a bound before anything is reserved.
  if (static_cast<uint64_t>(n_entries) > c.left() / 16) {
    return bad(file, fmt::format("entry count {} does not fit in the file's {} bytes", n_entries, bytes.size()));
  }
  std::vector<float> values;
  for (int32_t i = 0; i < n_entries; ++i) {
    const std::string at = fmt::format("entry {} of {} at byte {}", i + 1, n_entries, c.pos());
    int32_t len = 0, ncall = 0, nval = 0;
    std::string_view name;
    if (!c.i32(len)) return bad(file, "truncated: " + at + " has no name length");
    if (len < 1 || len > kMaxNameBytes) return bad(file, fmt::format("{}: name length {} (1..{})", at, len, kMaxNameBytes));
    if (!c.take(static_cast<size_t>(len), name)) return bad(file, "truncated: " + at + " name");
    if (!c.i32(ncall) || !c.i32(nval)) return bad(file, fmt::format("truncated: entry '{}' header", name));
    if (ncall < 0) return bad(file, fmt::format("entry '{}': call count {} is negative", name, ncall));
    if (nval < 1) return bad(file, fmt::format("entry '{}': value count {} (must be at least 1)", name, nval));
    std::string_view raw;
    if (!c.take(static_cast<size_t>(nval) * 4, raw)) {
      return bad(file, fmt::format("truncated: entry '{}' declares {} values, {} bytes are left", name, nval, c.left()));
    }
    values.resize(static_cast<size_t>(nval));
    std::memcpy(values.data(), raw.data(), raw.size());
    HEARTH_CHECK(check_values(file, std::string(name), "sum", values.data(), values.size()));
    ImportanceEntry e;
    e.sums.assign(values.begin(), values.end());
    // sums hold mean * ncall: with the count ncall the mean comes back.
    e.counts = {static_cast<double>(ncall)};
    if (!out.entries.emplace(std::string(name), std::move(e)).second) {
      return bad(file, fmt::format("entry '{}' appears twice", name));
    }
  }
  if (c.left() == 0) return out;
  int32_t chunks = 0, len = 0;
  std::string_view dataset;
  if (!c.i32(chunks) || chunks < 0) return bad(file, "trailing bytes are not a chunk count");
  out.chunk_count = static_cast<uint32_t>(chunks);
  if (c.left() == 0) return out;
  if (!c.i32(len) || len < 0 || !c.take(static_cast<size_t>(len), dataset)) {
    return bad(file, "truncated: the dataset name after the chunk count");
  }
  if (len > 0) out.datasets.emplace_back(dataset);
  if (c.left() != 0) return bad(file, fmt::format("{} unexpected bytes after the dataset name", c.left()));
  return out;
}

const gguf::TensorInfo* f32_tensor(const gguf::GgufFile& g, const std::string& file, const std::string& name,
                                   Error& error) {
  const auto* t = g.find_tensor(name);
  if (!t) {
    error = bad(file, fmt::format("tensor '{}' is missing (sums and counts come in pairs)", name));
    return nullptr;
  }
  if (t->type != DType::F32) {
    error = bad(file, fmt::format("tensor '{}' is {}, not F32", name, traits(t->type).name));
    return nullptr;
  }
  return t;
}

Result<ImportanceMatrix> read_gguf(const std::string& file) {
  auto opened = gguf::GgufFile::open(file, gguf::LoadMode::Memory);
  if (!opened.ok()) return bad(file, opened.error().message);
  const gguf::GgufFile& g = *opened;
  ImportanceMatrix out;
  if (g.find("imatrix.datasets")) {
    auto ds = g.get_string_array("imatrix.datasets");
    if (!ds.ok()) return bad(file, "imatrix.datasets: " + ds.error().message);
    out.datasets = std::move(*ds);
  }
  for (const char* key : {"imatrix.chunk_count", "imatrix.chunk_size"}) {
    auto v = g.find_uint(key);
    if (!v.ok()) return bad(file, fmt::format("{}: {}", key, v.error().message));
    if (v->value_or(0) > std::numeric_limits<uint32_t>::max()) return bad(file, fmt::format("{} = {} is too large", key, **v));
    (std::string_view(key) == "imatrix.chunk_count" ? out.chunk_count : out.chunk_size) =
        static_cast<uint32_t>(v->value_or(0));
  }
  for (const auto& t : g.tensors()) {
    const bool is_sums = ends_with(t.name, kSumsSuffix);
    if (!is_sums && !ends_with(t.name, kCountsSuffix)) {
      return bad(file, fmt::format("tensor '{}' is neither <name>{} nor <name>{}", t.name, kSumsSuffix, kCountsSuffix));
    }
    const std::string base = t.name.substr(0, t.name.size() - (is_sums ? kSumsSuffix : kCountsSuffix).size());
    if (!is_sums) {
      if (!g.find_tensor(base + std::string(kSumsSuffix))) {
        return bad(file, fmt::format("tensor '{}' has no '{}{}'", t.name, base, kSumsSuffix));
      }
      continue;
    }
    Error error;
    const auto* sums = f32_tensor(g, file, t.name, error);
    const auto* counts = sums ? f32_tensor(g, file, base + std::string(kCountsSuffix), error) : nullptr;
    if (!counts) return error;
    const int64_t n_mat = counts->elements();
    if (n_mat < 1 || counts->dims[0] != 1) {
      return bad(file, fmt::format("tensor '{}' has shape {{{}, {}}}; counts are {{1, n_mat}}", counts->name,
                                   counts->dims[0], counts->dims[1]));
    }
    if (sums->elements() < 1 || sums->rows() != n_mat) {
      return bad(file, fmt::format("tensor '{}' has {} rows of {} values but '{}' counts {} matrices", sums->name,
                                   sums->rows(), sums->dims[0], counts->name, n_mat));
    }
    const auto sum_data = g.tensor_data(*sums);
    const auto count_data = g.tensor_data(*counts);
    std::vector<float> s(static_cast<size_t>(sums->elements())), n(static_cast<size_t>(n_mat));
    std::memcpy(s.data(), sum_data.data(), s.size() * 4);
    std::memcpy(n.data(), count_data.data(), n.size() * 4);
    HEARTH_CHECK(check_values(file, base, "sum", s.data(), s.size()));
    HEARTH_CHECK(check_values(file, base, "count", n.data(), n.size()));
    ImportanceEntry e;
    e.sums.assign(s.begin(), s.end());
    e.counts.reserve(n.size());
    for (const float v : n) e.counts.push_back(std::round(static_cast<double>(v)));
    out.entries.emplace(base, std::move(e));
  }
  if (out.entries.empty()) return bad(file, "no importance data (no <name>.in_sum2 tensors)");
  return out;
}

}  // namespace

Result<ImportanceMatrix> read_importance(const std::filesystem::path& path) {
  const std::string file = path.string();
  // The magic decides the layout; a GGUF file goes to the GGUF reader
  // (which validates it), not through a second whole-file read here.
  uint32_t magic = 0;
  {
    std::ifstream in(path, std::ios::binary);
    if (!in) return make_error(ErrorCode::NotFound, fmt::format("{}: cannot open the importance matrix", file));
    in.read(reinterpret_cast<char*>(&magic), 4);
    if (in.gcount() != 4) magic = 0;
  }
  if (magic == gguf::kMagic) return read_gguf(file);
  HEARTH_TRY(const std::string bytes, read_regular_file(file, kMaxFileBytes, "importance matrix files"));
  return read_legacy(file, bytes);
}

Status write_importance(const ImportanceMatrix& matrix, const std::filesystem::path& path) {
  const std::string file = path.string();
  gguf::GgufWriter writer;
  writer.add_metadata("general.type", gguf::make_string("imatrix"));
  writer.add_metadata("imatrix.datasets", gguf::make_string_array(matrix.datasets));
  writer.add_metadata("imatrix.chunk_count", gguf::make_uint32(matrix.chunk_count));
  writer.add_metadata("imatrix.chunk_size", gguf::make_uint32(matrix.chunk_size));
  std::vector<std::vector<uint8_t>> data;
  for (const auto& [name, e] : matrix.entries) {
    if (e.counts.empty() || e.sums.empty() || e.sums.size() % e.counts.size() != 0) {
      return make_error(ErrorCode::InvalidArgument,
                        fmt::format("{}: entry '{}' has {} sums for {} counts", file, name, e.sums.size(), e.counts.size()));
    }
    const auto to_bytes = [](const std::vector<double>& v) {
      std::vector<uint8_t> b(v.size() * 4);
      for (size_t i = 0; i < v.size(); ++i) {
        const auto f = static_cast<float>(v[i]);
        std::memcpy(b.data() + 4 * i, &f, 4);
      }
      return b;
    };
    HEARTH_CHECK(writer.add_tensor({name + std::string(kSumsSuffix), DType::F32, {e.cols(), e.n_mat()}}));
    HEARTH_CHECK(writer.add_tensor({name + std::string(kCountsSuffix), DType::F32, {1, e.n_mat()}}));
    data.push_back(to_bytes(e.sums));
    data.push_back(to_bytes(e.counts));
  }
  HEARTH_CHECK(writer.begin(path));
  for (const auto& d : data) HEARTH_CHECK(writer.write_tensor_data(d));
  return writer.finish();
}

std::map<std::string, std::vector<float>> quant_weights(const ImportanceMatrix& matrix) {
  std::map<std::string, std::vector<float>> out;
  for (const auto& [name, e] : matrix.entries) {
    std::vector<float> w(e.sums.size(), 1.0f);
    const int64_t cols = e.cols();
    for (int64_t m = 0; m < e.n_mat(); ++m) {
      const double count = e.counts[static_cast<size_t>(m)];
      // A legacy entry with no call count holds the means themselves.
      const float divisor = count > 0 ? static_cast<float>(count) : (matrix.legacy ? 1.0f : 0.0f);
      if (divisor <= 0) continue;
      // In float, as the reference divides: the same weights to the bit.
      for (int64_t c = 0; c < cols; ++c) {
        const auto i = static_cast<size_t>(m * cols + c);
        w[i] = static_cast<float>(e.sums[i]) / divisor;
      }
    }
    out.emplace(name, std::move(w));
  }
  return out;
}

}  // namespace hearth::imatrix
