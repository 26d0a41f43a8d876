// Where a loaded model's weights live while it runs.
//
// Decode streams every weight once per token, so the page size under the
// weights matters: a file mapping uses 4 KiB pages (page-cache files are
// not mapped with huge pages on common file systems), and the many short
// row streams of the decode kernels then pay a TLB walk every few KB. A
// copy in anonymous memory advised for 2 MiB transparent huge pages
// measured 8-22 % faster generation on a 2-core AVX-512 machine, at the
// same resident size (the copy replaces the mapped pages, which are never
// touched). The copy costs one read of the file at load, about what
// faulting the mapping in costs.
#pragma once

#include <hearth/core/huge_page_buffer.h>
#include <hearth/core/result.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string_view>

namespace hearth::model {

enum class WeightMemory {
  Auto,          // HugePageCopy where the kernel offers transparent huge pages, else Mapped
  Mapped,        // the file's read-only mapping, used in place
  HugePageCopy,  // read into anonymous memory advised for transparent huge pages
};

// "auto", "mapped", "copy" (flags, settings); InvalidArgument naming the text otherwise.
Result<WeightMemory> parse_weight_memory(std::string_view text);
const char* to_string(WeightMemory m);

// Whether the kernel hands out transparent huge pages to memory that asks
// for them ("always" or "madvise" in `thp_enabled_path`).
bool transparent_huge_pages_available(
    const std::filesystem::path& thp_enabled_path = "/sys/kernel/mm/transparent_hugepage/enabled");

// Auto resolved for this machine.
WeightMemory resolve(WeightMemory requested);

enum class CpuComputes { No, Yes };
// Auto for a model whose layers all run on a GPU: the weights are uploaded
// once and the CPU never reads them again, so Auto keeps the mapping (clean
// file pages the kernel can drop under memory pressure) rather than a copy
// that would hold the model's size in RAM. Other requests are kept.
WeightMemory weights_for(WeightMemory requested, CpuComputes cpu);

using hearth::HugePageBuffer;

// How read_weights_file reads.
struct WeightReadOptions {
  uint64_t chunk_bytes = uint64_t{64} << 20;  // progress is reported per chunk
  // When non-zero, the path must still name this file (the one whose header
  // was parsed); a file replaced in between is an error.
  uint64_t expect_device = 0;
  uint64_t expect_inode = 0;
  // Asked between chunks: true ends the read with ErrorCode::Cancelled.
  std::function<bool()> stop;
};

// Bytes [offset, offset + size) of a regular file in a huge-page buffer.
// Never reads past the size fstat() showed. Errors: Io naming the file and
// the offset that failed (including a file shorter than offset + size, or
// one truncated during the copy), Cancelled, OutOfMemory.
using WeightReadProgressFn = std::function<void(uint64_t done_bytes)>;
Result<HugePageBuffer> read_weights_file(const std::filesystem::path& path, uint64_t offset, uint64_t size,
                                         const WeightReadProgressFn& progress = {},
                                         const WeightReadOptions& options = {});

}  // namespace hearth::model
