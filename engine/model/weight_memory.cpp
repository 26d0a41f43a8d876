#include "hearth/engine/model/weight_memory.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <hearth/core/file_io.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <string>
#include <utility>

namespace hearth::model {
Result<WeightMemory> parse_weight_memory(std::string_view text) {
  if (text == "auto") return WeightMemory::Auto;
  if (text == "mapped") return WeightMemory::Mapped;
  if (text == "copy") return WeightMemory::HugePageCopy;
  return make_error(ErrorCode::InvalidArgument,
                    fmt::format("weight memory '{}' is not one of auto, mapped, copy", text));
}

const char* to_string(WeightMemory m) {
  switch (m) {
    case WeightMemory::Auto: return "auto";
    case WeightMemory::Mapped: return "mapped";
    case WeightMemory::HugePageCopy: return "copy";
  }
  return "auto";
}

bool transparent_huge_pages_available(const std::filesystem::path& thp_enabled_path) {
  // The file reads like "always [madvise] never", the active mode bracketed.
  std::ifstream in(thp_enabled_path);
  std::string line;
  if (!in || !std::getline(in, line)) return false;
  return line.find("[always]") != std::string::npos || line.find("[madvise]") != std::string::npos;
}

WeightMemory resolve(WeightMemory requested) {
  if (requested != WeightMemory::Auto) return requested;
  return transparent_huge_pages_available() ? WeightMemory::HugePageCopy : WeightMemory::Mapped;
}

WeightMemory weights_for(WeightMemory requested, CpuComputes cpu) {
  if (requested == WeightMemory::Auto && cpu == CpuComputes::No) return WeightMemory::Mapped;
  return requested;
}

Result<HugePageBuffer> read_weights_file(const std::filesystem::path& path, uint64_t offset, uint64_t size,
                                         const WeightReadProgressFn& progress, const WeightReadOptions& options) {
  HEARTH_TRY(RegularFile file, RegularFile::open(path.string()));
  if (options.expect_inode != 0 &&
      (static_cast<uint64_t>(file.device()) != options.expect_device ||
       static_cast<uint64_t>(file.inode()) != options.expect_inode)) {
    return make_error(ErrorCode::Io, fmt::format("{}: the file was replaced while the model was loading; load it again",
                                                 path.string()));
  }
  // Read only what fstat() showed: a range past the end is refused here, and
  // a file truncated during the copy stops at the end it reached.
  if (offset > file.size() || size > file.size() - offset) {
    return make_error(ErrorCode::Io, fmt::format("{}: the file ends at byte {}, the weights reach byte {}",
                                                 path.string(), file.size(), offset + size));
  }
  auto buffer = HugePageBuffer::allocate(size);
  if (!buffer.ok()) {
    return make_error(ErrorCode::OutOfMemory, fmt::format("{}: weights: {}", path.string(), buffer.error().message));
  }
  HugePageBuffer out = std::move(buffer).value();
  const uint64_t chunk = std::max<uint64_t>(1, options.chunk_bytes);
  uint64_t done = 0;
  while (done < size) {
    if (options.stop && options.stop()) {
      return make_error(ErrorCode::Cancelled, fmt::format("{}: loading cancelled after {} of {} bytes", path.string(),
                                                          done, size));
    }
    const uint64_t want = std::min(chunk, size - done);
    const ssize_t n = ::pread(file.fd(), out.data() + done, want, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      return make_error(ErrorCode::Io, fmt::format("{}: cannot read at byte {}: {}", path.string(), offset + done,
                                                   std::strerror(errno)));
    }
    if (n == 0) {
      return make_error(ErrorCode::Io,
                        fmt::format("{}: the file was truncated at byte {} while it was read (it had {} bytes), the "
                                    "weights reach byte {}",
                                    path.string(), offset + done, file.size(), offset + size));
    }
    done += static_cast<uint64_t>(n);
    if (progress) progress(done);
  }
  return out;
}

}  // namespace hearth::model
