#include "downloads/part_file.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <utility>

namespace hearth::models {
namespace {

Error io_error(const std::filesystem::path& path, const char* what, int err) {
  if (err == ENOSPC || err == EDQUOT) {
    return make_error(ErrorCode::Io, fmt::format("'{}': the disk is full ({}); the partial file is kept",
                                                 path.string(), what));
  }
  return make_error(ErrorCode::Io, fmt::format("'{}': {} failed: {}", path.string(), what, std::strerror(err)));
}

}  // namespace

PartFile::PartFile(PartFile&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)),
      size_(other.size_),
      path_(std::move(other.path_)),
      size_limit_(other.size_limit_) {}

PartFile& PartFile::operator=(PartFile&& other) noexcept {
  if (this != &other) {
    close();
    fd_ = std::exchange(other.fd_, -1);
    size_ = other.size_;
    path_ = std::move(other.path_);
    size_limit_ = other.size_limit_;
  }
  return *this;
}

PartFile::~PartFile() { close(); }

Result<PartFile> PartFile::open(const std::filesystem::path& path, PartOpenMode mode) {
  int flags = O_WRONLY | O_CREAT | O_CLOEXEC;
  if (mode == PartOpenMode::Truncate) flags |= O_TRUNC;
  const int fd = ::open(path.c_str(), flags, 0644);
  if (fd < 0) return io_error(path, "open", errno);
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    return io_error(path, "stat", err);
  }
  if (::lseek(fd, 0, SEEK_END) < 0) {
    const int err = errno;
    ::close(fd);
    return io_error(path, "seek", err);
  }
  PartFile file;
  file.fd_ = fd;
  file.size_ = static_cast<uint64_t>(st.st_size);
  file.path_ = path;
  return file;
}

Status PartFile::append(std::span<const uint8_t> data, uint64_t* written) {
  *written = 0;
  if (fd_ < 0) return make_error(ErrorCode::Internal, fmt::format("'{}' is not open", path_.string()));
  size_t allowed = data.size();
  bool limited = false;
  if (size_limit_) {
    const uint64_t room = *size_limit_ > size_ ? *size_limit_ - size_ : 0;
    if (room < allowed) {
      allowed = static_cast<size_t>(room);
      limited = true;
    }
  }
  size_t done = 0;
  while (done < allowed) {
    const ssize_t n = ::write(fd_, data.data() + done, allowed - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      *written = done;
      size_ += done;
      return io_error(path_, "write", err);
    }
    if (n == 0) {
      *written = done;
      size_ += done;
      return io_error(path_, "write", ENOSPC);
    }
    done += static_cast<size_t>(n);
  }
  *written = done;
  size_ += done;
  if (limited) return io_error(path_, "write", ENOSPC);
  return {};
}

Status PartFile::truncate_to_zero() {
  if (::ftruncate(fd_, 0) != 0) return io_error(path_, "truncate", errno);
  if (::lseek(fd_, 0, SEEK_SET) < 0) return io_error(path_, "seek", errno);
  size_ = 0;
  return {};
}

Status PartFile::reserve(uint64_t total_bytes) {
  if (total_bytes <= size_) return {};
#ifdef __linux__
  const int rc = ::fallocate(fd_, FALLOC_FL_KEEP_SIZE, static_cast<off_t>(size_),
                             static_cast<off_t>(total_bytes - size_));
  if (rc != 0) {
    const int err = errno;
    if (err == ENOSPC || err == EDQUOT) return io_error(path_, "reserve space", err);
    // EOPNOTSUPP and friends: the file system cannot reserve; writes are
    // still checked one by one.
  }
#endif
  return {};
}

Status PartFile::sync() {
  if (::fsync(fd_) != 0) return io_error(path_, "fsync", errno);
  return {};
}

void PartFile::close() {
  if (fd_ >= 0) {
    ::close(fd_);
    fd_ = -1;
  }
}

Status commit_part_file(const std::filesystem::path& part, const std::filesystem::path& destination) {
  const int fd = ::open(part.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return io_error(part, "open for fsync", errno);
  const int rc = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  if (rc != 0) return io_error(part, "fsync", err);
  if (::rename(part.c_str(), destination.c_str()) != 0) return io_error(destination, "rename", errno);
  const std::filesystem::path folder = destination.has_parent_path() ? destination.parent_path() : ".";
  const int dir = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) return io_error(folder, "open folder for fsync", errno);
  const int drc = ::fsync(dir);
  const int derr = errno;
  ::close(dir);
  if (drc != 0) return io_error(folder, "fsync folder", derr);
  return {};
}

}  // namespace hearth::models
