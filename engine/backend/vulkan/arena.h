// A bump allocator over one Vulkan buffer (the Vulkan backend's activation
// and input arenas); offsets keep the descriptor alignment.
#pragma once

#include <hearth/core/checked_math.h>
#include <hearth/core/result.h>
#include <hearth/engine/backend/vulkan/buffer.h>

#include <algorithm>
#include <cstdint>

namespace hearth::vulkan {

struct Arena {
  Buffer buffer;
  uint64_t used = 0;
  Result<BufferView> take(uint64_t bytes, uint64_t alignment) {
    const uint64_t start = *checked_align_up(used, alignment);
    const uint64_t size = std::max<uint64_t>(bytes, 4);
    if (!buffer.valid() || start + size > buffer.size()) {
      return make_error(ErrorCode::Internal, "Vulkan: activation arena overflow");
    }
    used = start + size;
    return BufferView{&buffer, start, size};
  }
};

}  // namespace hearth::vulkan
