#include "hearth/documents/vector_index.h"

#include <algorithm>
#include <cmath>

namespace hearth::documents {

QuantizedVector quantize_vector(std::span<const float> values) {
  QuantizedVector q;
  float max_abs = 0;
  for (float v : values) max_abs = std::max(max_abs, std::fabs(v));
  q.scale = max_abs > 0 ? max_abs / 127.0f : 0.0f;
  q.values.resize(values.size());
  const float inverse = max_abs > 0 ? 127.0f / max_abs : 0.0f;
  for (std::size_t i = 0; i < values.size(); ++i) {
    q.values[i] = static_cast<std::int8_t>(std::lround(std::clamp(values[i] * inverse, -127.0f, 127.0f)));
  }
  return q;
}

// Plain C++ the compiler vectorises (16-bit products summed pairwise into 32 bits);
// the AVX2 clone is chosen at run time on CPUs that have it, the default runs
// everywhere else.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("avx2", "default")))
#endif
std::int32_t dot_int8(const std::int8_t* a, const std::int8_t* b, std::int64_t n) {
  std::int32_t sum = 0;
  for (std::int64_t i = 0; i < n; ++i) sum += static_cast<std::int16_t>(a[i]) * static_cast<std::int16_t>(b[i]);
  return sum;
}

Result<VectorIndex> VectorIndex::load(storage::Libraries& libraries, storage::LibraryId library) {
  HEARTH_TRY(storage::Library info, libraries.get(library));
  VectorIndex index(info.embedding_dim);
  HEARTH_CHECK(libraries.for_each_vector(library, [&](storage::ChunkId chunk, float scale,
                                                      std::span<const std::int8_t> values) {
    index.add(chunk, scale, values);
  }));
  return index;
}

void VectorIndex::add(storage::ChunkId chunk, float scale, std::span<const std::int8_t> values) {
  chunks_.push_back(chunk);
  scales_.push_back(scale);
  values_.insert(values_.end(), values.begin(), values.end());
}

Result<std::vector<VectorHit>> VectorIndex::search(std::span<const float> query, std::int64_t k) const {
  if (static_cast<std::int64_t>(query.size()) != dim_) {
    return make_error(ErrorCode::InvalidArgument, "vector search: the query has " + std::to_string(query.size()) +
                                                      " components, the library's vectors " + std::to_string(dim_));
  }
  std::vector<VectorHit> hits;
  if (k <= 0 || chunks_.empty()) return hits;
  const QuantizedVector q = quantize_vector(query);
  const auto keep = static_cast<std::size_t>(std::min<std::int64_t>(k, size()));
  // A heap of the best `keep` so far whose front is the worst of them (a heap by
  // `better` keeps the element no other beats on top): one pass, no full sort.
  auto better = [](const VectorHit& a, const VectorHit& b) {
    return a.similarity > b.similarity || (a.similarity == b.similarity && a.chunk < b.chunk);
  };
  hits.reserve(keep + 1);
  for (std::size_t row = 0; row < chunks_.size(); ++row) {
    const std::int32_t dot = dot_int8(values_.data() + row * static_cast<std::size_t>(dim_), q.values.data(), dim_);
    const float similarity = static_cast<float>(dot) * scales_[row] * q.scale;
    if (hits.size() < keep) {
      hits.push_back({chunks_[row], similarity});
      std::push_heap(hits.begin(), hits.end(), better);
    } else if (better(VectorHit{chunks_[row], similarity}, hits.front())) {
      std::pop_heap(hits.begin(), hits.end(), better);
      hits.back() = {chunks_[row], similarity};
      std::push_heap(hits.begin(), hits.end(), better);
    }
  }
  std::sort_heap(hits.begin(), hits.end(), better);
  return hits;
}

}  // namespace hearth::documents
