#include "hearth/engine/quant/types.h"

#include <fmt/format.h>

#include <array>
#include <cctype>

#include "hearth/core/checked_math.h"

namespace hearth {
namespace {

constexpr int64_t QK = 32;    // elements per block of the legacy formats
constexpr int64_t QK_K = 256; // elements per super-block of the K-quants

// Layouts (bytes per block) follow the reference engine's block structs.
constexpr std::array kTraits = {
    DTypeTraits{DType::F32, "F32", 1, 4, false},
    DTypeTraits{DType::F16, "F16", 1, 2, false},
    DTypeTraits{DType::Q4_0, "Q4_0", QK, 2 + QK / 2, true},
    DTypeTraits{DType::Q4_1, "Q4_1", QK, 4 + QK / 2, true},
    DTypeTraits{DType::Q5_0, "Q5_0", QK, 2 + 4 + QK / 2, true},
    DTypeTraits{DType::Q5_1, "Q5_1", QK, 4 + 4 + QK / 2, true},
    DTypeTraits{DType::Q8_0, "Q8_0", QK, 2 + QK, true},
    DTypeTraits{DType::Q8_1, "Q8_1", QK, 4 + QK, true},
    DTypeTraits{DType::Q2_K, "Q2_K", QK_K, QK_K / 16 + QK_K / 4 + 2 + 2, true},
    DTypeTraits{DType::Q3_K, "Q3_K", QK_K, QK_K / 8 + QK_K / 4 + 12 + 2, true},
    DTypeTraits{DType::Q4_K, "Q4_K", QK_K, 2 + 2 + 12 + QK_K / 2, true},
    DTypeTraits{DType::Q5_K, "Q5_K", QK_K, 2 + 2 + 12 + QK_K / 8 + QK_K / 2, true},
    DTypeTraits{DType::Q6_K, "Q6_K", QK_K, QK_K / 2 + QK_K / 4 + QK_K / 16 + 2, true},
    DTypeTraits{DType::Q8_K, "Q8_K", QK_K, 4 + QK_K + QK_K / 16 * 2, true},
    DTypeTraits{DType::IQ4_NL, "IQ4_NL", QK, 2 + QK / 2, true},
    DTypeTraits{DType::IQ4_XS, "IQ4_XS", QK_K, 2 + 2 + QK_K / 64 + QK_K / 2, true},
    DTypeTraits{DType::I8, "I8", 1, 1, false},
    DTypeTraits{DType::I16, "I16", 1, 2, false},
    DTypeTraits{DType::I32, "I32", 1, 4, false},
    DTypeTraits{DType::I64, "I64", 1, 8, false},
    DTypeTraits{DType::F64, "F64", 1, 8, false},
    DTypeTraits{DType::BF16, "BF16", 1, 2, false},
    DTypeTraits{DType::MXFP4, "MXFP4", QK, 1 + QK / 2, true},
};

}  // namespace

std::optional<DTypeTraits> dtype_traits(uint32_t type_id) {
  for (const auto& t : kTraits) {
    if (static_cast<uint32_t>(t.type) == type_id) return t;
  }
  return std::nullopt;
}

const DTypeTraits& traits(DType type) {
  for (const auto& t : kTraits) {
    if (t.type == type) return t;
  }
  return kTraits[0];  // unreachable for valid enum values
}

std::optional<DType> dtype_from_name(std::string_view name) {
  for (const auto& t : kTraits) {
    if (t.name.size() != name.size()) continue;
    bool same = true;
    for (size_t i = 0; i < name.size() && same; ++i) {
      same = std::toupper(static_cast<unsigned char>(name[i])) == t.name[i];
    }
    if (same) return t.type;
  }
  return std::nullopt;
}

Result<uint64_t> row_bytes(DType type, int64_t elements) {
  const auto& t = traits(type);
  if (elements < 0 || elements % t.block_elements != 0) {
    return make_error(ErrorCode::InvalidFormat,
                      fmt::format("{} elements is not a multiple of the {} block size {}",
                                  elements, t.name, t.block_elements));
  }
  auto bytes = checked_mul(static_cast<uint64_t>(elements / t.block_elements), t.block_bytes);
  if (!bytes) {
    return make_error(ErrorCode::InvalidFormat,
                      fmt::format("{} elements of {} overflow 64 bits", elements, t.name));
  }
  return *bytes;
}

}  // namespace hearth
