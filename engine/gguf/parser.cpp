#include "parser.h"

#include <fmt/format.h>

#include <algorithm>
#include <unordered_set>

#include "byte_cursor.h"
#include "hearth/core/checked_math.h"
#include "utf8.h"

namespace hearth::gguf {
namespace {

constexpr uint64_t kMaxAlignment = 1ull << 20;

// Smallest encoded size of one array element of `type`; used to bound an
// array's declared length by the bytes actually left in the file.
uint64_t min_encoded_size(ValueType type) {
  switch (type) {
    case ValueType::UInt8:
    case ValueType::Int8:
    case ValueType::Bool:
      return 1;
    case ValueType::UInt16:
    case ValueType::Int16:
      return 2;
    case ValueType::UInt32:
    case ValueType::Int32:
    case ValueType::Float32:
      return 4;
    case ValueType::String:  // u64 length
    case ValueType::UInt64:
    case ValueType::Int64:
    case ValueType::Float64:
      return 8;
    case ValueType::Array:  // u32 type + u64 count
      return 12;
  }
  return 1;
}

bool valid_value_type(uint32_t raw) { return raw <= static_cast<uint32_t>(ValueType::Float64); }

class HeaderParser {
 public:
  HeaderParser(const uint8_t* data, uint64_t size, const std::string& name, const ReaderLimits& limits)
      : cursor_(data, size), size_(size), name_(name), limits_(limits) {}

  Result<ParsedHeader> parse() {
    ParsedHeader out;
    HEARTH_CHECK(parse_preamble(out));
    HEARTH_TRY(const uint64_t n_tensors, read_count("tensor count", limits_.max_tensors));
    HEARTH_TRY(const uint64_t n_kv, read_count("metadata key count", limits_.max_kv));
    out.metadata.reserve(static_cast<size_t>(std::min<uint64_t>(n_kv, cursor_.remaining() / 13)));
    std::unordered_set<std::string> keys;
    for (uint64_t i = 0; i < n_kv; ++i) {
      HEARTH_TRY(KeyValue kv, parse_kv(i));
      if (!keys.insert(kv.key).second) {
        return fail(fmt::format("metadata key '{}' appears twice", kv.key));
      }
      out.metadata.push_back(std::move(kv));
    }
    HEARTH_CHECK(read_alignment(out));
    HEARTH_CHECK(parse_tensor_infos(out, n_tensors));
    return out;
  }

 private:
  Error fail(const std::string& what) const {
    return make_error(ErrorCode::InvalidFormat, fmt::format("{}: {}", name_, what));
  }
  Error truncated(const std::string& what) const {
    return fail(fmt::format("file ends at byte {} while reading {}", size_, what));
  }

  Status parse_preamble(ParsedHeader& out) {
    auto magic = cursor_.read<uint32_t>();
    if (!magic) return truncated("the magic number");
    if (*magic != kMagic) {
      return fail(fmt::format("not a GGUF file (magic 0x{:08x}, expected 0x{:08x} \"GGUF\")", *magic, kMagic));
    }
    auto version = cursor_.read<uint32_t>();
    if (!version) return truncated("the version");
    if (*version == 1) return fail("GGUF version 1 is obsolete and not supported (need 2 or 3)");
    if ((*version & 0xFFFF) == 0 && (*version >> 16) != 0) {
      return fail(fmt::format("version field 0x{:08x} looks byte-swapped: big-endian GGUF files are not supported",
                              *version));
    }
    if (*version != 2 && *version != 3) {
      return fail(fmt::format("unsupported GGUF version {} (need 2 or 3)", *version));
    }
    out.version = *version;
    return {};
  }

  Result<uint64_t> read_count(const char* what, uint64_t cap) {
    auto count = cursor_.read<uint64_t>();
    if (!count) return truncated(what);
    if (*count > cap) return fail(fmt::format("{} {} exceeds the limit {}", what, *count, cap));
    return *count;
  }

  Result<std::string> read_string(const std::string& what) {
    auto length = cursor_.read<uint64_t>();
    if (!length) return truncated(what + " length");
    if (*length > limits_.max_string_bytes) {
      return fail(fmt::format("{} length {} exceeds the limit {}", what, *length, limits_.max_string_bytes));
    }
    if (*length > cursor_.remaining()) {
      return fail(fmt::format("{} length {} runs past the end of the file ({} bytes left)", what, *length,
                              cursor_.remaining()));
    }
    HEARTH_CHECK(charge(*length));
    return *cursor_.read_bytes(*length);
  }

  // Counts parsed metadata against the budget so a file cannot make us
  // allocate far more than it contains.
  Status charge(uint64_t bytes) {
    auto total = checked_add(metadata_bytes_, bytes);
    if (!total || *total > limits_.max_metadata_bytes) {
      return fail(fmt::format("metadata exceeds the limit of {} bytes", limits_.max_metadata_bytes));
    }
    metadata_bytes_ = *total;
    return {};
  }

  Result<KeyValue> parse_kv(uint64_t index) {
    KeyValue kv;
    HEARTH_TRY(kv.key, read_string(fmt::format("metadata key #{}", index)));
    if (kv.key.empty()) return fail(fmt::format("metadata key #{} is empty", index));
    if (!is_valid_utf8(kv.key)) return fail(fmt::format("metadata key #{} is not valid UTF-8", index));
    auto raw_type = cursor_.read<uint32_t>();
    if (!raw_type) return truncated(fmt::format("the type of key '{}'", kv.key));
    if (!valid_value_type(*raw_type)) {
      return fail(fmt::format("key '{}' has unknown value type {}", kv.key, *raw_type));
    }
    HEARTH_TRY(kv.value, parse_value(static_cast<ValueType>(*raw_type), kv.key, 0));
    return kv;
  }

  Result<Value> parse_value(ValueType type, const std::string& key, uint32_t depth) {
    Value v;
    v.type = type;
    auto scalar = [&](auto tag) -> Status {
      using T = decltype(tag);
      auto x = cursor_.read<T>();
      if (!x) return truncated(fmt::format("the value of '{}'", key));
      if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
        v.data = static_cast<double>(*x);
      } else if constexpr (std::is_signed_v<T>) {
        v.data = static_cast<int64_t>(*x);
      } else {
        v.data = static_cast<uint64_t>(*x);
      }
      return {};
    };
    switch (type) {
      case ValueType::UInt8: HEARTH_CHECK(scalar(uint8_t{})); break;
      case ValueType::Int8: HEARTH_CHECK(scalar(int8_t{})); break;
      case ValueType::UInt16: HEARTH_CHECK(scalar(uint16_t{})); break;
      case ValueType::Int16: HEARTH_CHECK(scalar(int16_t{})); break;
      case ValueType::UInt32: HEARTH_CHECK(scalar(uint32_t{})); break;
      case ValueType::Int32: HEARTH_CHECK(scalar(int32_t{})); break;
      case ValueType::UInt64: HEARTH_CHECK(scalar(uint64_t{})); break;
      case ValueType::Int64: HEARTH_CHECK(scalar(int64_t{})); break;
      case ValueType::Float32: HEARTH_CHECK(scalar(float{})); break;
      case ValueType::Float64: HEARTH_CHECK(scalar(double{})); break;
      case ValueType::Bool: {
        auto b = cursor_.read<uint8_t>();
        if (!b) return truncated(fmt::format("the value of '{}'", key));
        if (*b > 1) return fail(fmt::format("key '{}' has bool value {} (must be 0 or 1)", key, *b));
        v.data = *b == 1;
        break;
      }
      case ValueType::String: {
        HEARTH_TRY(std::string s, read_string(fmt::format("string value of '{}'", key)));
        v.data = std::move(s);
        break;
      }
      case ValueType::Array: {
        HEARTH_TRY(Array a, parse_array(key, depth + 1));
        v.data = std::move(a);
        break;
      }
    }
    return v;
  }

  Result<Array> parse_array(const std::string& key, uint32_t depth) {
    if (depth > limits_.max_array_depth) {
      return fail(fmt::format("key '{}' nests arrays deeper than {}", key, limits_.max_array_depth));
    }
    auto raw_type = cursor_.read<uint32_t>();
    if (!raw_type) return truncated(fmt::format("the array type of '{}'", key));
    if (!valid_value_type(*raw_type)) {
      return fail(fmt::format("key '{}' is an array of unknown type {}", key, *raw_type));
    }
    auto count = cursor_.read<uint64_t>();
    if (!count) return truncated(fmt::format("the array length of '{}'", key));
    const auto element_type = static_cast<ValueType>(*raw_type);
    const uint64_t max_fit = cursor_.remaining() / min_encoded_size(element_type);
    if (*count > max_fit) {
      return fail(fmt::format("key '{}' declares {} array elements but only {} bytes are left", key, *count,
                              cursor_.remaining()));
    }
    if (*count > limits_.max_array_elements) {
      return fail(fmt::format("key '{}' has {} array elements, over the limit {}", key, *count,
                              limits_.max_array_elements));
    }
    HEARTH_CHECK(charge(*count * sizeof(Value)));
    Array a;
    a.element_type = element_type;
    a.items.reserve(static_cast<size_t>(*count));
    for (uint64_t i = 0; i < *count; ++i) {
      HEARTH_TRY(Value item, parse_value(element_type, key, depth));
      a.items.push_back(std::move(item));
    }
    return a;
  }

  Status read_alignment(ParsedHeader& out) {
    for (const auto& kv : out.metadata) {
      if (kv.key != "general.alignment") continue;
      if (!is_integer(kv.value.type)) {
        return fail(fmt::format("general.alignment has type {}, expected an integer", to_string(kv.value.type)));
      }
      const auto* u = std::get_if<uint64_t>(&kv.value.data);
      const uint64_t a = u ? *u : 0;
      if (a == 0 || (a & (a - 1)) != 0 || a > kMaxAlignment) {
        return fail(fmt::format("general.alignment must be a power of two up to {}, not {}", kMaxAlignment,
                                u ? std::to_string(*u) : std::string("negative")));
      }
      out.alignment = a;
    }
    return {};
  }

  Status parse_tensor_infos(ParsedHeader& out, uint64_t n_tensors) {
    out.tensors.reserve(static_cast<size_t>(std::min<uint64_t>(n_tensors, cursor_.remaining() / 24)));
    std::unordered_set<std::string> names;
    for (uint64_t i = 0; i < n_tensors; ++i) {
      HEARTH_TRY(TensorInfo t, parse_tensor_info(i));
      if (!names.insert(t.name).second) return fail(fmt::format("tensor '{}' appears twice", t.name));
      out.tensors.push_back(std::move(t));
    }
    auto data_offset = checked_align_up(cursor_.position(), out.alignment);
    if (!data_offset) return fail("data section offset overflows");
    out.data_offset = *data_offset;
    if (!out.tensors.empty() && out.data_offset > size_) {
      return fail(fmt::format("tensor data section would start at byte {}, past the end of the file ({} bytes)",
                              out.data_offset, size_));
    }
    return check_tensor_placement(out);
  }

  Result<TensorInfo> parse_tensor_info(uint64_t index) {
    TensorInfo t;
    HEARTH_TRY(t.name, read_string(fmt::format("name of tensor #{}", index)));
    if (t.name.empty()) return fail(fmt::format("tensor #{} has an empty name", index));
    if (!is_valid_utf8(t.name)) return fail(fmt::format("name of tensor #{} is not valid UTF-8", index));
    auto n_dims = cursor_.read<uint32_t>();
    if (!n_dims) return truncated(fmt::format("dimensions of tensor '{}'", t.name));
    if (*n_dims == 0 || *n_dims > kMaxDims) {
      return fail(fmt::format("tensor '{}' has {} dimensions (must be 1..{})", t.name, *n_dims, kMaxDims));
    }
    t.n_dims = *n_dims;
    uint64_t elements = 1;
    for (uint32_t d = 0; d < *n_dims; ++d) {
      auto dim = cursor_.read<int64_t>();
      if (!dim) return truncated(fmt::format("dimensions of tensor '{}'", t.name));
      if (*dim <= 0) return fail(fmt::format("tensor '{}' dimension {} is {} (must be > 0)", t.name, d, *dim));
      auto product = checked_mul(elements, static_cast<uint64_t>(*dim));
      if (!product || *product > static_cast<uint64_t>(INT64_MAX)) {
        return fail(fmt::format("tensor '{}' element count overflows (dimension {} is {})", t.name, d, *dim));
      }
      elements = *product;
      t.dims[d] = *dim;
    }
    auto raw_type = cursor_.read<uint32_t>();
    if (!raw_type) return truncated(fmt::format("type of tensor '{}'", t.name));
    auto traits = dtype_traits(*raw_type);
    if (!traits) return fail(fmt::format("tensor '{}' has unknown or unsupported type id {}", t.name, *raw_type));
    t.type = traits->type;
    if (t.dims[0] % traits->block_elements != 0) {
      return fail(fmt::format("tensor '{}' row length {} is not a multiple of the {} block size {}", t.name,
                              t.dims[0], traits->name, traits->block_elements));
    }
    auto bytes = row_bytes(t.type, static_cast<int64_t>(elements));
    if (!bytes) return fail(fmt::format("tensor '{}': {}", t.name, bytes.error().message));
    t.bytes = *bytes;
    auto offset = cursor_.read<uint64_t>();
    if (!offset) return truncated(fmt::format("offset of tensor '{}'", t.name));
    t.offset = *offset;
    return t;
  }

  Status check_tensor_placement(const ParsedHeader& out) {
    std::vector<std::pair<uint64_t, uint64_t>> ranges;  // [begin, end) within the data section
    ranges.reserve(out.tensors.size());
    const uint64_t data_bytes = size_ - std::min(size_, out.data_offset);
    for (const auto& t : out.tensors) {
      if (t.offset % out.alignment != 0) {
        return fail(fmt::format("tensor '{}' offset {} is not a multiple of the alignment {}", t.name, t.offset,
                                out.alignment));
      }
      auto end = checked_add(t.offset, t.bytes);
      if (!end || *end > data_bytes) {
        return fail(fmt::format("tensor '{}' data ({} bytes at offset {}) ends past the end of the file "
                                "(data section holds {} bytes)",
                                t.name, t.bytes, t.offset, data_bytes));
      }
      ranges.emplace_back(t.offset, *end);
    }
    std::sort(ranges.begin(), ranges.end());
    for (size_t i = 1; i < ranges.size(); ++i) {
      if (ranges[i].first < ranges[i - 1].second) {
        return fail(fmt::format("tensor data ranges overlap at offset {}", ranges[i].first));
      }
    }
    return {};
  }

  ByteCursor cursor_;
  uint64_t size_;
  const std::string& name_;
  const ReaderLimits& limits_;
  uint64_t metadata_bytes_ = 0;
};

}  // namespace

Result<ParsedHeader> parse_header(const uint8_t* data, uint64_t size, const std::string& name,
                                  const ReaderLimits& limits) {
  return HeaderParser(data, size, name, limits).parse();
}

}  // namespace hearth::gguf
