#include "mapped_file.h"

#include "mapping_guard.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <hearth/core/file_io.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

namespace hearth::gguf {
namespace {

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
    fd_ = std::exchange(other.fd_, -1);
    guard_slot_ = std::exchange(other.guard_slot_, -1);
    device_ = other.device_;
    inode_ = other.inode_;
    mtime_ns_ = other.mtime_ns_;
  }
  return *this;
}

FileBytes::~FileBytes() { release(); }

void FileBytes::release() {
  detail::unregister_mapping(guard_slot_);
  guard_slot_ = -1;
  if (mapping_) ::munmap(mapping_, size_);
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  mapping_ = nullptr;
  data_ = nullptr;
  size_ = 0;
  buffer_.clear();
}

Result<FileBytes> FileBytes::open(const std::filesystem::path& path, Mode mode) {
  // RegularFile refuses FIFOs, devices and directories before open(), so a
  // FIFO given as a model cannot block and /dev/zero cannot be mapped.
  HEARTH_TRY(RegularFile file, RegularFile::open(path.string()));
  const uint64_t size = file.size();
  if (size == 0) {
    return make_error(ErrorCode::InvalidFormat, fmt::format("{}: file is empty", path.string()));
  }
  FileBytes out;
  out.size_ = size;
  out.device_ = static_cast<uint64_t>(file.device());
  out.inode_ = static_cast<uint64_t>(file.inode());
  out.mtime_ns_ = file.mtime_ns();
  if (mode == Mode::Map) {
    void* p = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, file.fd(), 0);
    if (p == MAP_FAILED) return io_error(path, "cannot map");
    out.mapping_ = p;
    out.data_ = static_cast<const uint8_t*>(p);
    out.fd_ = ::dup(file.fd());
    out.guard_slot_ = detail::register_mapping(p, size);
    return out;
  }
  out.buffer_.resize(size);
  uint64_t done = 0;
  while (done < size) {
    const ssize_t n = ::read(file.fd(), out.buffer_.data() + done, size - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return io_error(path, "cannot read");
    if (n == 0) {
      return make_error(ErrorCode::Io, fmt::format("{}: the file ends at byte {}, {} bytes when it was opened",
                                                   path.string(), done, size));
    }
    done += static_cast<uint64_t>(n);
  }
  out.data_ = out.buffer_.data();
  return out;
}

Status FileBytes::check_unchanged(const std::filesystem::path& path) const {
  if (!mapping_ || fd_ < 0) return {};
  if (detail::mapping_faulted(guard_slot_)) {
    return make_error(ErrorCode::Io, fmt::format("{}: the file was cut short while the model was reading it; load it "
                                                 "again",
                                                 path.string()));
  }
  struct stat st {};
  if (::fstat(fd_, &st) != 0) return io_error(path, "cannot stat");
  const auto now = static_cast<uint64_t>(st.st_size);
  if (now < size_) {
    return make_error(ErrorCode::Io, fmt::format("{}: the file shrank from {} to {} bytes while the model was in "
                                                 "use; load it again",
                                                 path.string(), size_, now));
  }
  const int64_t mtime = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  if (now != size_ || mtime != mtime_ns_) {
    return make_error(ErrorCode::Io, fmt::format("{}: the file was modified while the model was in use; load it "
                                                 "again",
                                                 path.string()));
  }
  return {};
}

FileBytes FileBytes::copy_of(const uint8_t* data, uint64_t size) {
  FileBytes out;
  out.buffer_.assign(data, data + size);
  out.size_ = size;
  out.data_ = out.buffer_.data();
  return out;
}

}  // namespace hearth::gguf
