// Importance matrices: for every weight matrix a model multiplies, the sum of
// the squared input activations of each column and how many input rows were
// summed (for a stack of MoE experts, per expert, counting only the tokens
// routed to it). The quantizer weighs each weight's rounding error by the
// mean of its column (quant/weighted.h).
//
// Files are the reference engine's: the GGUF form it writes (general.type
// "imatrix"; tensors "<name>.in_sum2" F32 {cols, n_mat} and "<name>.counts"
// F32 {1, n_mat}; keys imatrix.datasets (string array), imatrix.chunk_count
// and imatrix.chunk_size (u32)) and the older binary ".dat" layout it still
// reads (little-endian: int32 entry count; per entry int32 name length, the
// name, int32 ncall, int32 value count, that many float32 holding
// sum / count * ncall; then optionally int32 chunk count, int32 length and a
// dataset name). Hearth reads both and writes the GGUF form.
#pragma once

#include <hearth/core/result.h>

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace hearth::imatrix {

struct ImportanceEntry {
  // {cols * n_mat}: matrix m's column c at [m * cols + c]; sums of x^2.
  std::vector<double> sums;
  // {n_mat}: input rows summed into each matrix (per expert for MoE stacks).
  std::vector<double> counts;

  int64_t n_mat() const { return static_cast<int64_t>(counts.size()); }
  int64_t cols() const { return counts.empty() ? 0 : static_cast<int64_t>(sums.size()) / n_mat(); }
};

struct ImportanceMatrix {
  std::map<std::string, ImportanceEntry> entries;  // by weight name ("blk.0.attn_q.weight")
  std::vector<std::string> datasets;                // texts it was collected on
  uint32_t chunk_count = 0;                         // chunks of chunk_size tokens run
  uint32_t chunk_size = 0;                          // 0 when unknown (legacy files)
  bool legacy = false;                              // read from the binary .dat layout
};

// Reads either layout (GGUF by its magic, else the legacy one). Every error
// names the file and what is wrong: truncation, sizes that do not add up, a
// missing half of a sums/counts pair, a non-F32 tensor, NaN, infinity or a
// negative sum or count.
Result<ImportanceMatrix> read_importance(const std::filesystem::path& path);

// Writes the GGUF form (tensors in name order, sums then counts), through a
// temporary file renamed into place.
Status write_importance(const ImportanceMatrix& matrix, const std::filesystem::path& path);

// Per weight name, the quantizer's weights: each column's mean x^2
// ({cols * n_mat}). A matrix no row reached gets 1 for every column (no
// preference), as the reference does.
std::map<std::string, std::vector<float>> quant_weights(const ImportanceMatrix& matrix);

}  // namespace hearth::imatrix
