#include "hearth/engine/gguf/reader.h"

#include <fmt/format.h>

#include <unordered_map>

#include "mapped_file.h"
#include "parser.h"

namespace hearth::gguf {

struct GgufFile::Impl {
  std::filesystem::path path;
  std::string name;  // for messages
  FileBytes bytes;
  ParsedHeader header;
  std::unordered_map<std::string_view, size_t> key_index;
  std::unordered_map<std::string_view, size_t> tensor_index;
};

namespace {

// Special-token ids that must name an entry of the vocabulary.
constexpr const char* kTokenIdKeys[] = {
    "tokenizer.ggml.bos_token_id",     "tokenizer.ggml.eos_token_id",
    "tokenizer.ggml.unknown_token_id", "tokenizer.ggml.padding_token_id",
    "tokenizer.ggml.separator_token_id", "tokenizer.ggml.seperator_token_id",  // both spellings exist
    "tokenizer.ggml.eot_token_id",
    "tokenizer.ggml.eom_token_id",     "tokenizer.ggml.mask_token_id",
};

std::string describe(const Value& v) {
  if (v.type == ValueType::Array) {
    return fmt::format("array of {}", to_string(std::get<Array>(v.data).element_type));
  }
  return std::string(to_string(v.type));
}

// Checks that need the metadata as a whole: token ids against the
// vocabulary, layer count against a sane maximum.
Status check_semantics(const GgufFile& file, const std::string& name, const ReaderLimits& limits) {
  auto vocab_size = file.get_array_size("tokenizer.ggml.tokens");
  if (vocab_size.ok()) {
    for (const char* key : kTokenIdKeys) {
      const Value* v = file.find(key);
      if (!v) continue;
      auto id = file.get_int(key);
      if (!id) return id.take_error();
      // Converters write -1 (or its uint32 pattern) to mean "no such token".
      if (*id == -1 || *id == 0xFFFFFFFFll) continue;
      if (*id < 0 || static_cast<uint64_t>(*id) >= *vocab_size) {
        return make_error(ErrorCode::InvalidFormat,
                          fmt::format("{}: {} is {}, outside the vocabulary of {} tokens", name, key, *id,
                                      *vocab_size));
      }
    }
  }
  auto arch = file.find_string("general.architecture");
  if (!arch) return arch.take_error();
  if (arch->has_value()) {
    const std::string key = **arch + ".block_count";
    auto blocks = file.find_uint(key);
    if (!blocks) return blocks.take_error();
    if (blocks->has_value() && (**blocks == 0 || **blocks > limits.max_block_count)) {
      return make_error(ErrorCode::InvalidFormat,
                        fmt::format("{}: {} is {} (must be 1..{})", name, key, **blocks, limits.max_block_count));
    }
  }
  return {};
}

}  // namespace

GgufFile::GgufFile(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
GgufFile::GgufFile(GgufFile&&) noexcept = default;
GgufFile& GgufFile::operator=(GgufFile&&) noexcept = default;
GgufFile::~GgufFile() = default;

// Parses the header of the bytes in `impl`, indexes keys and tensors and runs
// the whole-file checks.
Result<GgufFile> GgufFile::finish_open(std::unique_ptr<Impl> impl, const ReaderLimits& limits) {
  HEARTH_TRY(impl->header, parse_header(impl->bytes.data(), impl->bytes.size(), impl->name, limits));
  for (size_t i = 0; i < impl->header.metadata.size(); ++i) {
    impl->key_index.emplace(impl->header.metadata[i].key, i);
  }
  for (size_t i = 0; i < impl->header.tensors.size(); ++i) {
    impl->tensor_index.emplace(impl->header.tensors[i].name, i);
  }
  const std::string name = impl->name;
  GgufFile file(std::move(impl));
  HEARTH_CHECK(check_semantics(file, name, limits));
  return file;
}

Result<GgufFile> GgufFile::open(const std::filesystem::path& path, LoadMode mode, const ReaderLimits& limits) {
  auto impl = std::make_unique<Impl>();
  impl->path = path;
  impl->name = path.string();
  HEARTH_TRY(impl->bytes,
             FileBytes::open(path, mode == LoadMode::Mmap ? FileBytes::Mode::Map : FileBytes::Mode::Read));
  return finish_open(std::move(impl), limits);
}

Result<GgufFile> GgufFile::from_bytes(std::span<const uint8_t> bytes, std::string name,
                                      const ReaderLimits& limits) {
  if (bytes.empty()) return make_error(ErrorCode::InvalidFormat, name + ": file is empty");
  auto impl = std::make_unique<Impl>();
  impl->name = std::move(name);
  impl->path = impl->name;
  impl->bytes = FileBytes::copy_of(bytes.data(), bytes.size());
  return finish_open(std::move(impl), limits);
}

const std::filesystem::path& GgufFile::path() const { return impl_->path; }
Status GgufFile::check_unchanged() const { return impl_->bytes.check_unchanged(impl_->path); }
uint64_t GgufFile::file_device() const { return impl_->bytes.device(); }
uint64_t GgufFile::file_inode() const { return impl_->bytes.inode(); }
uint32_t GgufFile::version() const { return impl_->header.version; }
uint64_t GgufFile::file_size() const { return impl_->bytes.size(); }
uint64_t GgufFile::alignment() const { return impl_->header.alignment; }
uint64_t GgufFile::data_offset() const { return impl_->header.data_offset; }
const std::vector<KeyValue>& GgufFile::metadata() const { return impl_->header.metadata; }
const std::vector<TensorInfo>& GgufFile::tensors() const { return impl_->header.tensors; }

const Value* GgufFile::find(std::string_view key) const {
  auto it = impl_->key_index.find(key);
  return it == impl_->key_index.end() ? nullptr : &impl_->header.metadata[it->second].value;
}

const TensorInfo* GgufFile::find_tensor(std::string_view name) const {
  auto it = impl_->tensor_index.find(name);
  return it == impl_->tensor_index.end() ? nullptr : &impl_->header.tensors[it->second];
}

std::span<const uint8_t> GgufFile::tensor_data(const TensorInfo& tensor) const {
  return {impl_->bytes.data() + impl_->header.data_offset + tensor.offset, static_cast<size_t>(tensor.bytes)};
}

namespace {

Error missing(const std::string& file, std::string_view key) {
  return make_error(ErrorCode::NotFound, fmt::format("{}: metadata key '{}' is missing", file, key));
}

Error wrong_type(const std::string& file, std::string_view key, const Value& v, const char* expected) {
  return make_error(ErrorCode::InvalidFormat,
                    fmt::format("{}: metadata key '{}' is {}, expected {}", file, key, describe(v), expected));
}

// Integer value as int64, or nullopt when it does not fit.
std::optional<int64_t> as_int64(const Value& v) {
  if (const auto* u = std::get_if<uint64_t>(&v.data)) {
    if (*u > static_cast<uint64_t>(INT64_MAX)) return std::nullopt;
    return static_cast<int64_t>(*u);
  }
  if (const auto* s = std::get_if<int64_t>(&v.data)) return *s;
  return std::nullopt;
}

const Array* as_array(const Value& v) { return std::get_if<Array>(&v.data); }

}  // namespace

Result<std::string> GgufFile::get_string(std::string_view key) const {
  const Value* v = find(key);
  if (!v) return missing(impl_->name, key);
  if (v->type != ValueType::String) return wrong_type(impl_->name, key, *v, "a string");
  return std::get<std::string>(v->data);
}

Result<uint64_t> GgufFile::get_uint(std::string_view key) const {
  const Value* v = find(key);
  if (!v) return missing(impl_->name, key);
  if (!is_integer(v->type)) return wrong_type(impl_->name, key, *v, "an integer");
  if (const auto* u = std::get_if<uint64_t>(&v->data)) return *u;
  const int64_t s = std::get<int64_t>(v->data);
  if (s < 0) {
    return make_error(ErrorCode::InvalidFormat,
                      fmt::format("{}: metadata key '{}' is {}, expected a non-negative value", impl_->name, key, s));
  }
  return static_cast<uint64_t>(s);
}

Result<int64_t> GgufFile::get_int(std::string_view key) const {
  const Value* v = find(key);
  if (!v) return missing(impl_->name, key);
  if (!is_integer(v->type)) return wrong_type(impl_->name, key, *v, "an integer");
  auto value = as_int64(*v);
  if (!value) {
    return make_error(ErrorCode::InvalidFormat,
                      fmt::format("{}: metadata key '{}' does not fit a signed 64-bit integer", impl_->name, key));
  }
  return *value;
}

Result<double> GgufFile::get_float(std::string_view key) const {
  const Value* v = find(key);
  if (!v) return missing(impl_->name, key);
  if (is_float(v->type)) return std::get<double>(v->data);
  if (is_integer(v->type)) {
    if (const auto* u = std::get_if<uint64_t>(&v->data)) return static_cast<double>(*u);
    return static_cast<double>(std::get<int64_t>(v->data));
  }
  return wrong_type(impl_->name, key, *v, "a number");
}

Result<bool> GgufFile::get_bool(std::string_view key) const {
  const Value* v = find(key);
  if (!v) return missing(impl_->name, key);
  if (v->type != ValueType::Bool) return wrong_type(impl_->name, key, *v, "a bool");
  return std::get<bool>(v->data);
}

Result<uint64_t> GgufFile::get_array_size(std::string_view key) const {
  const Value* v = find(key);
  if (!v) return missing(impl_->name, key);
  const Array* a = as_array(*v);
  if (!a) return wrong_type(impl_->name, key, *v, "an array");
  return a->items.size();
}

Result<std::vector<std::string>> GgufFile::get_string_array(std::string_view key) const {
  const Value* v = find(key);
  if (!v) return missing(impl_->name, key);
  const Array* a = as_array(*v);
  if (!a || a->element_type != ValueType::String) return wrong_type(impl_->name, key, *v, "an array of string");
  std::vector<std::string> out;
  out.reserve(a->items.size());
  for (const auto& item : a->items) out.push_back(std::get<std::string>(item.data));
  return out;
}

Result<std::vector<double>> GgufFile::get_float_array(std::string_view key) const {
  const Value* v = find(key);
  if (!v) return missing(impl_->name, key);
  const Array* a = as_array(*v);
  if (!a || !(is_float(a->element_type) || is_integer(a->element_type))) {
    return wrong_type(impl_->name, key, *v, "an array of numbers");
  }
  std::vector<double> out;
  out.reserve(a->items.size());
  for (const auto& item : a->items) {
    if (const auto* d = std::get_if<double>(&item.data)) {
      out.push_back(*d);
    } else if (const auto* u = std::get_if<uint64_t>(&item.data)) {
      out.push_back(static_cast<double>(*u));
    } else {
      out.push_back(static_cast<double>(std::get<int64_t>(item.data)));
    }
  }
  return out;
}

Result<std::vector<int64_t>> GgufFile::get_int_array(std::string_view key) const {
  const Value* v = find(key);
  if (!v) return missing(impl_->name, key);
  const Array* a = as_array(*v);
  if (!a || !is_integer(a->element_type)) return wrong_type(impl_->name, key, *v, "an array of integers");
  std::vector<int64_t> out;
  out.reserve(a->items.size());
  for (size_t i = 0; i < a->items.size(); ++i) {
    auto value = as_int64(a->items[i]);
    if (!value) {
      return make_error(ErrorCode::InvalidFormat,
                        fmt::format("{}: element {} of '{}' does not fit a signed 64-bit integer", impl_->name, i, key));
    }
    out.push_back(*value);
  }
  return out;
}

template <typename T, typename Getter>
static Result<std::optional<T>> optional_of(const GgufFile& file, std::string_view key, Getter getter) {
  if (!file.find(key)) return std::optional<T>{};
  auto value = getter(key);
  if (!value) return value.take_error();
  return std::optional<T>(std::move(value).value());
}

Result<std::optional<uint64_t>> GgufFile::find_uint(std::string_view key) const {
  return optional_of<uint64_t>(*this, key, [this](std::string_view k) { return get_uint(k); });
}
Result<std::optional<double>> GgufFile::find_float(std::string_view key) const {
  return optional_of<double>(*this, key, [this](std::string_view k) { return get_float(k); });
}
Result<std::optional<bool>> GgufFile::find_bool(std::string_view key) const {
  return optional_of<bool>(*this, key, [this](std::string_view k) { return get_bool(k); });
}
Result<std::optional<std::string>> GgufFile::find_string(std::string_view key) const {
  return optional_of<std::string>(*this, key, [this](std::string_view k) { return get_string(k); });
}

Result<std::string> GgufFile::architecture() const { return get_string("general.architecture"); }

std::optional<std::string> GgufFile::chat_template() const {
  auto t = get_string("tokenizer.chat_template");
  if (!t) return std::nullopt;
  return std::move(t).value();
}

}  // namespace hearth::gguf
