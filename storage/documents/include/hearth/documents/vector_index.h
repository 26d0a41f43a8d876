// A library's chunk vectors in memory for brute-force nearest-neighbour search.
// Vectors are L2-normalised embeddings stored as int8 components with one scale
// each (a quarter of float32's memory, ~1e-3 cosine error); a query is quantised
// the same way so the inner loop is an integer dot product. Brute force reads
// every vector per query: at 384 dimensions, 100k chunks is 38 MB, a few tens of
// milliseconds on one core. An approximate index (HNSW, IVF) starts to pay beyond
// a few hundred thousand chunks or with much longer vectors.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "hearth/core/result.h"
#include "hearth/storage/libraries.h"

namespace hearth::documents {

struct QuantizedVector {
  float scale = 0;                  // component i is values[i] * scale
  std::vector<std::int8_t> values;  // [dim]
};

// Symmetric int8 quantisation: scale = max |x| / 127.
QuantizedVector quantize_vector(std::span<const float> values);

struct VectorHit {
  storage::ChunkId chunk;
  float similarity = 0;  // cosine for normalised vectors
};

class VectorIndex {
 public:
  explicit VectorIndex(std::int64_t dim) : dim_(dim) {}
  // Every vector stored for `library`.
  static Result<VectorIndex> load(storage::Libraries& libraries, storage::LibraryId library);

  void add(storage::ChunkId chunk, float scale, std::span<const std::int8_t> values);
  std::int64_t dim() const { return dim_; }
  std::int64_t size() const { return static_cast<std::int64_t>(chunks_.size()); }

  // The `k` most similar chunks, best first. `query` must have dim() components.
  Result<std::vector<VectorHit>> search(std::span<const float> query, std::int64_t k) const;

 private:
  std::int64_t dim_;
  std::vector<storage::ChunkId> chunks_;
  std::vector<float> scales_;
  std::vector<std::int8_t> values_;  // [size()][dim_], row-major
};

// Sum of a[i] * b[i] over n int8 components (SIMD where the CPU has it).
std::int32_t dot_int8(const std::int8_t* a, const std::int8_t* b, std::int64_t n);

}  // namespace hearth::documents
