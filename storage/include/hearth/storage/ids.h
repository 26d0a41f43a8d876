// Strong id types: a ConversationId cannot be passed where a MessageId is expected.
// Ids are SQLite rowids (positive); a default-constructed id is "none".
#pragma once

#include <compare>
#include <cstddef>
#include <cstdint>
#include <functional>

namespace hearth::storage {

template <typename Tag>
class Id {
 public:
  constexpr Id() = default;
  constexpr explicit Id(std::int64_t value) : value_(value) {}

  constexpr std::int64_t value() const { return value_; }
  constexpr bool valid() const { return value_ > 0; }

  friend constexpr auto operator<=>(Id, Id) = default;

 private:
  std::int64_t value_ = 0;
};

using ConversationId = Id<struct ConversationTag>;
using MessageId = Id<struct MessageTag>;
using ContextEventId = Id<struct ContextEventTag>;
using PresetId = Id<struct PresetTag>;
using ModelId = Id<struct ModelTag>;
using PrefixCacheId = Id<struct PrefixCacheTag>;

}  // namespace hearth::storage

template <typename Tag>
struct std::hash<hearth::storage::Id<Tag>> {
  std::size_t operator()(hearth::storage::Id<Tag> id) const noexcept {
    return std::hash<std::int64_t>{}(id.value());
  }
};
