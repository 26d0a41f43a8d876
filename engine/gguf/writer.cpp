#include "hearth/engine/gguf/writer.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>

#include "hearth/core/checked_math.h"
#include "hearth/engine/gguf/reader.h"

namespace hearth::gguf {

Value make_string(std::string s) { return Value{ValueType::String, std::move(s)}; }
Value make_uint32(uint32_t v) { return Value{ValueType::UInt32, static_cast<uint64_t>(v)}; }
Value make_uint64(uint64_t v) { return Value{ValueType::UInt64, v}; }
Value make_int32(int32_t v) { return Value{ValueType::Int32, static_cast<int64_t>(v)}; }
Value make_float32(float v) { return Value{ValueType::Float32, static_cast<double>(v)}; }
Value make_bool(bool v) { return Value{ValueType::Bool, v}; }

Value make_string_array(const std::vector<std::string>& items) {
  Array a{ValueType::String, {}};
  a.items.reserve(items.size());
  for (const auto& s : items) a.items.push_back(make_string(s));
  return Value{ValueType::Array, std::move(a)};
}

Value make_float32_array(const std::vector<float>& items) {
  Array a{ValueType::Float32, {}};
  a.items.reserve(items.size());
  for (float f : items) a.items.push_back(make_float32(f));
  return Value{ValueType::Array, std::move(a)};
}

Value make_int32_array(const std::vector<int32_t>& items) {
  Array a{ValueType::Int32, {}};
  a.items.reserve(items.size());
  for (int32_t i : items) a.items.push_back(make_int32(i));
  return Value{ValueType::Array, std::move(a)};
}

namespace {

// Appends the little-endian encoding of values to a byte buffer.
class Encoder {
 public:
  template <typename T>
  void put(T value) {
    const auto* p = reinterpret_cast<const uint8_t*>(&value);
    bytes.insert(bytes.end(), p, p + sizeof(T));
  }
  void put_string(const std::string& s) {
    put<uint64_t>(s.size());
    bytes.insert(bytes.end(), s.begin(), s.end());
  }
  void put_scalar(const Value& v) {
    switch (v.type) {
      case ValueType::UInt8: put<uint8_t>(static_cast<uint8_t>(std::get<uint64_t>(v.data))); break;
      case ValueType::UInt16: put<uint16_t>(static_cast<uint16_t>(std::get<uint64_t>(v.data))); break;
      case ValueType::UInt32: put<uint32_t>(static_cast<uint32_t>(std::get<uint64_t>(v.data))); break;
      case ValueType::UInt64: put<uint64_t>(std::get<uint64_t>(v.data)); break;
      case ValueType::Int8: put<int8_t>(static_cast<int8_t>(std::get<int64_t>(v.data))); break;
      case ValueType::Int16: put<int16_t>(static_cast<int16_t>(std::get<int64_t>(v.data))); break;
      case ValueType::Int32: put<int32_t>(static_cast<int32_t>(std::get<int64_t>(v.data))); break;
      case ValueType::Int64: put<int64_t>(std::get<int64_t>(v.data)); break;
      case ValueType::Float32: put<float>(static_cast<float>(std::get<double>(v.data))); break;
      case ValueType::Float64: put<double>(std::get<double>(v.data)); break;
      case ValueType::Bool: put<uint8_t>(std::get<bool>(v.data) ? 1 : 0); break;
      case ValueType::String: put_string(std::get<std::string>(v.data)); break;
      case ValueType::Array: {
        const auto& a = std::get<Array>(v.data);
        put<uint32_t>(static_cast<uint32_t>(a.element_type));
        put<uint64_t>(a.items.size());
        for (const auto& item : a.items) put_scalar(item);
        break;
      }
    }
  }
  std::vector<uint8_t> bytes;
};

Error write_error(const std::filesystem::path& path) {
  return make_error(ErrorCode::Io, fmt::format("{}: write failed: {}", path.string(), std::strerror(errno)));
}

}  // namespace

GgufWriter::GgufWriter(uint64_t alignment) : alignment_(alignment) {}

GgufWriter::~GgufWriter() {
  if (file_) std::fclose(file_);
}

void GgufWriter::add_metadata(std::string key, Value value) {
  metadata_.push_back(KeyValue{std::move(key), std::move(value)});
}

Status GgufWriter::add_tensor(TensorSpec spec) {
  if (file_) return make_error(ErrorCode::InvalidArgument, "GgufWriter: tensors are frozen after begin()");
  if (spec.dims.empty() || spec.dims.size() > kMaxDims) {
    return make_error(ErrorCode::InvalidArgument,
                      fmt::format("tensor '{}' must have 1..{} dimensions", spec.name, kMaxDims));
  }
  int64_t elements = 1;
  for (int64_t d : spec.dims) {
    if (d <= 0) return make_error(ErrorCode::InvalidArgument, fmt::format("tensor '{}' has a dimension <= 0", spec.name));
    elements *= d;
  }
  if (spec.dims[0] % traits(spec.type).block_elements != 0) {
    return make_error(ErrorCode::InvalidArgument,
                      fmt::format("tensor '{}' row length {} is not a multiple of the {} block size", spec.name,
                                  spec.dims[0], traits(spec.type).name));
  }
  HEARTH_TRY(uint64_t bytes, row_bytes(spec.type, elements));
  tensor_bytes_.push_back(bytes);
  tensors_.push_back(std::move(spec));
  return {};
}

Status GgufWriter::begin(const std::filesystem::path& path) {
  path_ = path;
  Encoder e;
  e.put<uint32_t>(kMagic);
  e.put<uint32_t>(3);
  e.put<uint64_t>(tensors_.size());
  const bool has_alignment_key = [&] {
    for (const auto& kv : metadata_) if (kv.key == "general.alignment") return true;
    return false;
  }();
  if (!has_alignment_key && alignment_ != kDefaultAlignment) {
    metadata_.push_back(KeyValue{"general.alignment", make_uint32(static_cast<uint32_t>(alignment_))});
  }
  e.put<uint64_t>(metadata_.size());
  for (const auto& kv : metadata_) {
    e.put_string(kv.key);
    e.put<uint32_t>(static_cast<uint32_t>(kv.value.type));
    e.put_scalar(kv.value);
  }
  uint64_t offset = 0;
  for (size_t i = 0; i < tensors_.size(); ++i) {
    const auto& t = tensors_[i];
    e.put_string(t.name);
    e.put<uint32_t>(static_cast<uint32_t>(t.dims.size()));
    for (int64_t d : t.dims) e.put<int64_t>(d);
    e.put<uint32_t>(static_cast<uint32_t>(t.type));
    e.put<uint64_t>(offset);
    offset = *checked_align_up(offset + tensor_bytes_[i], alignment_);
  }
  while (e.bytes.size() % alignment_ != 0) e.bytes.push_back(0);

  auto target = AtomicFile::create(path.string());
  if (!target.ok()) return target.take_error();
  target_.emplace(std::move(target).value());
  file_ = std::fopen(target_->temp_path().c_str(), "wb");
  if (!file_) {
    return make_error(ErrorCode::Io, fmt::format("{}: cannot create: {}", path.string(), std::strerror(errno)));
  }
  if (std::fwrite(e.bytes.data(), 1, e.bytes.size(), file_) != e.bytes.size()) return write_error(path_);
  return {};
}

Status GgufWriter::write_tensor_data(std::span<const uint8_t> bytes) {
  if (!file_) return make_error(ErrorCode::InvalidArgument, "GgufWriter: begin() was not called");
  if (next_tensor_ >= tensors_.size()) {
    return make_error(ErrorCode::InvalidArgument, "GgufWriter: more tensor data than declared tensors");
  }
  const auto& spec = tensors_[next_tensor_];
  if (bytes.size() != tensor_bytes_[next_tensor_]) {
    return make_error(ErrorCode::InvalidArgument,
                      fmt::format("tensor '{}' needs {} bytes, got {}", spec.name, tensor_bytes_[next_tensor_],
                                  bytes.size()));
  }
  if (std::fwrite(bytes.data(), 1, bytes.size(), file_) != bytes.size()) return write_error(path_);
  written_data_ += bytes.size();
  static constexpr uint8_t kZeros[64] = {};
  uint64_t pad = *checked_align_up(written_data_, alignment_) - written_data_;
  while (pad > 0) {
    const size_t n = static_cast<size_t>(std::min<uint64_t>(pad, sizeof(kZeros)));
    if (std::fwrite(kZeros, 1, n, file_) != n) return write_error(path_);
    pad -= n;
    written_data_ += n;
  }
  ++next_tensor_;
  return {};
}

Status GgufWriter::finish() {
  if (!file_) return make_error(ErrorCode::InvalidArgument, "GgufWriter: begin() was not called");
  if (next_tensor_ != tensors_.size()) {
    return make_error(ErrorCode::InvalidArgument,
                      fmt::format("GgufWriter: {} of {} tensors written", next_tensor_, tensors_.size()));
  }
  const bool flushed = std::fflush(file_) == 0;
  const bool closed = std::fclose(file_) == 0;
  file_ = nullptr;
  if (!flushed || !closed) return write_error(path_);
  Status committed = target_->commit();
  target_.reset();
  return committed;
}

Status GgufWriter::write_file(const std::filesystem::path& path, std::vector<KeyValue> metadata,
                              const std::vector<std::pair<TensorSpec, std::vector<uint8_t>>>& tensors,
                              uint64_t alignment) {
  GgufWriter w(alignment);
  for (auto& kv : metadata) w.add_metadata(std::move(kv.key), std::move(kv.value));
  for (const auto& [spec, data] : tensors) HEARTH_CHECK(w.add_tensor(spec));
  HEARTH_CHECK(w.begin(path));
  for (const auto& [spec, data] : tensors) HEARTH_CHECK(w.write_tensor_data(data));
  return w.finish();
}

}  // namespace hearth::gguf
