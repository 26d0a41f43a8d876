#include "common/load_marker.h"

#include <cstdio>
#include <fstream>
#include <iterator>
#include <system_error>

#include <fcntl.h>
#include <unistd.h>

namespace hearth::app {

LoadMarker::LoadMarker(std::filesystem::path marker_file) : file_(std::move(marker_file)) {}

std::optional<std::string> LoadMarker::interrupted_model() const {
  std::ifstream in(file_, std::ios::binary);
  if (!in) return std::nullopt;
  std::string path((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return path;
}

bool LoadMarker::begin(const std::string& model_path) const {
  std::error_code ec;
  std::filesystem::create_directories(file_.parent_path(), ec);
  // POSIX I/O so the write can be fsync'ed: a marker still in the page cache
  // would be lost in exactly the crash it exists for (a kernel OOM kill is fine,
  // but a power loss or a hard hang during a huge mmap is not).
  const int fd = ::open(file_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  const char* data = model_path.data();
  size_t left = model_path.size();
  bool ok = true;
  while (left > 0) {
    const ssize_t n = ::write(fd, data, left);
    if (n <= 0) { ok = false; break; }
    data += n;
    left -= static_cast<size_t>(n);
  }
  ok = (::fsync(fd) == 0) && ok;
  ::close(fd);
  return ok;
}

void LoadMarker::end() const {
  std::error_code ec;
  std::filesystem::remove(file_, ec);
}

}  // namespace hearth::app
