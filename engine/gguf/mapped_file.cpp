#include "mapped_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

namespace hearth::gguf {
namespace {

// Closes a descriptor on every return path.
struct FdGuard {
  int fd;
  ~FdGuard() {
    if (fd >= 0) ::close(fd);
  }
};

Error io_error(const std::filesystem::path& path, const char* what) {
  return make_error(ErrorCode::Io,
                    fmt::format("{}: {}: {}", path.string(), what, std::strerror(errno)));
}

}  // namespace

FileBytes::FileBytes(FileBytes&& other) noexcept { *this = std::move(other); }

FileBytes& FileBytes::operator=(FileBytes&& other) noexcept {
  if (this != &other) {
    release();
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    mapping_ = std::exchange(other.mapping_, nullptr);
    buffer_ = std::move(other.buffer_);
    if (!mapping_ && !buffer_.empty()) data_ = buffer_.data();
  }
  return *this;
}

FileBytes::~FileBytes() { release(); }

void FileBytes::release() {
  if (mapping_) ::munmap(mapping_, size_);
  mapping_ = nullptr;
  data_ = nullptr;
  size_ = 0;
  buffer_.clear();
}

Result<FileBytes> FileBytes::open(const std::filesystem::path& path, Mode mode) {
  FdGuard guard{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  if (guard.fd < 0) return io_error(path, "cannot open");
  struct stat st {};
  if (::fstat(guard.fd, &st) != 0) return io_error(path, "cannot stat");
  if (!S_ISREG(st.st_mode)) {
    return make_error(ErrorCode::InvalidArgument, fmt::format("{}: not a regular file", path.string()));
  }
  const auto size = static_cast<uint64_t>(st.st_size);
  if (size == 0) {
    return make_error(ErrorCode::InvalidFormat, fmt::format("{}: file is empty", path.string()));
  }
  FileBytes out;
  out.size_ = size;
  if (mode == Mode::Map) {
    void* p = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, guard.fd, 0);
    if (p == MAP_FAILED) return io_error(path, "cannot map");
    out.mapping_ = p;
    out.data_ = static_cast<const uint8_t*>(p);
    return out;
  }
  out.buffer_.resize(size);
  uint64_t done = 0;
  while (done < size) {
    const ssize_t n = ::read(guard.fd, out.buffer_.data() + done, size - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return io_error(path, "cannot read");
    done += static_cast<uint64_t>(n);
  }
  out.data_ = out.buffer_.data();
  return out;
}

FileBytes FileBytes::copy_of(const uint8_t* data, uint64_t size) {
  FileBytes out;
  out.buffer_.assign(data, data + size);
  out.size_ = size;
  out.data_ = out.buffer_.data();
  return out;
}

}  // namespace hearth::gguf
