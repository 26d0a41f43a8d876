// Whole-model quantization (`hearth-cli quantize`): reads an F32/F16/BF16
// GGUF file through mmap, converts one tensor at a time on several threads
// (rows split between them) and streams the result through GgufWriter, so at
// most one output tensor is held in memory besides the mapped input.
#pragma once

#include <hearth/core/result.h>
#include <hearth/engine/quant/types.h>
#include <hearth/engine/tools/quant_mix.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace hearth::tools {

// Whether to dequantize every row again to measure the error it introduced
// (costs about a fifth of the quantization time).
enum class ErrorReport { Compute, Skip };

struct TensorReport {
  std::string name;
  DType source_type = DType::F32;
  DType type = DType::F32;   // type written
  int64_t elements = 0;
  uint64_t bytes = 0;        // bytes written
  double rms_error = 0.0;    // sqrt(mean((dequantized - source)^2)); 0 when skipped
  double rms_source = 0.0;   // sqrt(mean(source^2))
  double relative_error() const { return rms_source > 0.0 ? rms_error / rms_source : 0.0; }
};

using TensorReportFn = std::function<void(const TensorReport&)>;

// Importance data for the block searches (imatrix/importance.h,
// quant_weights()): per weight name, each column's mean squared activation,
// {cols * n_expert} for a stack of experts (expert e's at [e * cols, (e+1) *
// cols)). Formats that take weights (quant/weighted.h) weigh each value's
// error by them; a tensor without an entry quantizes as without.
struct QuantImportance {
  std::map<std::string, std::vector<float>> weights;
  std::string file;     // recorded as quantize.imatrix.file
  std::string dataset;  // quantize.imatrix.dataset (first dataset), may be empty
  uint32_t chunks = 0;  // quantize.imatrix.chunks_count
};

struct QuantizeOptions {
  QuantTarget target = QuantTarget::Q8_0;
  int threads = 2;  // rows of each tensor are split between this many threads
  ErrorReport error_report = ErrorReport::Compute;
  TensorReportFn on_tensor;  // called after each tensor is written (progress, stderr report)
  // Null: plain quantization. Otherwise also changes the per-tensor mix as
  // the reference does with an importance matrix (IQ4 ffn_down, Q4_0/Q5_0).
  std::shared_ptr<const QuantImportance> importance;
};

struct QuantizeReport {
  std::vector<TensorReport> tensors;  // in output order
  uint64_t input_bytes = 0;           // tensor data read
  uint64_t output_bytes = 0;          // tensor data written
};

// Quantizes `input` into `output` (overwritten). Metadata is copied, with
// general.file_type set to the reference's value for the target and
// general.quantization_version to 2. Tensors are written in the reference's
// order (global tensors by name, then layer by layer). Errors name the file
// and tensor at fault: a source tensor that is not F32/F16/BF16, an
// unreadable file, a failed write, importance data whose size is not the
// tensor's columns times its experts.
Result<QuantizeReport> quantize_model(const std::filesystem::path& input, const std::filesystem::path& output,
                                      const QuantizeOptions& options);

// Error statistics of a stored tensor against float reference values:
// dequantizes `data` (rows of `row_length` values of `type`) and compares.
struct ErrorStats {
  double rms_error = 0.0;
  double rms_source = 0.0;
};
Result<ErrorStats> tensor_error(DType type, const uint8_t* data, const float* reference, int64_t row_length,
                                int64_t rows);

}  // namespace hearth::tools
