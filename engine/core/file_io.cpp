#include "hearth/core/file_io.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <utility>
#include <vector>

namespace hearth {
namespace {

Error os_error(const std::string& path, std::string_view what) {
  return make_error(ErrorCode::Io, fmt::format("{}: {}: {}", path, what, std::strerror(errno)));
}

// Unsupported rather than InvalidArgument: the path names something real that
// Hearth does not read (callers map InvalidArgument to a usage error).
Error not_regular(const std::string& path, mode_t mode) {
  return make_error(ErrorCode::Unsupported, fmt::format("{}: is {}, not a regular file", path, file_kind(mode)));
}

int64_t mtime_of(const struct stat& st) {
  return static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
}

std::string directory_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

}  // namespace

std::string format_size(uint64_t bytes) {
  constexpr uint64_t kKiB = 1024, kMiB = kKiB * 1024, kGiB = kMiB * 1024;
  const auto in = [&](uint64_t unit) { return static_cast<double>(bytes) / static_cast<double>(unit); };
  if (bytes >= kGiB) return fmt::format("{:.1f} GiB", in(kGiB));
  if (bytes >= kMiB) return bytes % kMiB == 0 ? fmt::format("{} MiB", bytes / kMiB) : fmt::format("{:.1f} MiB", in(kMiB));
  if (bytes >= kKiB) return bytes % kKiB == 0 ? fmt::format("{} KiB", bytes / kKiB) : fmt::format("{:.1f} KiB", in(kKiB));
  return fmt::format("{} bytes", bytes);
}

std::string file_kind(mode_t mode) {
  if (S_ISREG(mode)) return "a regular file";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a file";
}

Result<RegularFile> RegularFile::open(const std::string& path) {
  // stat() first: open() on a FIFO without a writer would block, and on some
  // devices open() itself has effects.
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return os_error(path, "cannot open");
  if (!S_ISREG(st.st_mode)) return not_regular(path, st.st_mode);
  // O_NONBLOCK and fstat() close the race with a file swapped in between.
  RegularFile out;
  out.fd_ = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (out.fd_ < 0) return os_error(path, "cannot open");
  if (::fstat(out.fd_, &st) != 0) return os_error(path, "cannot stat");
  if (!S_ISREG(st.st_mode)) return not_regular(path, st.st_mode);
  // Regular files ignore O_NONBLOCK for reads, but clear it all the same so
  // the descriptor behaves like any other.
  const int flags = ::fcntl(out.fd_, F_GETFL);
  if (flags >= 0) (void)::fcntl(out.fd_, F_SETFL, flags & ~O_NONBLOCK);
  out.size_ = static_cast<uint64_t>(st.st_size);
  out.device_ = st.st_dev;
  out.inode_ = st.st_ino;
  out.mtime_ns_ = mtime_of(st);
  return out;
}

RegularFile::RegularFile(RegularFile&& other) noexcept { *this = std::move(other); }

RegularFile& RegularFile::operator=(RegularFile&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
    size_ = other.size_;
    device_ = other.device_;
    inode_ = other.inode_;
    mtime_ns_ = other.mtime_ns_;
  }
  return *this;
}

RegularFile::~RegularFile() {
  if (fd_ >= 0) ::close(fd_);
}

Result<std::string> read_regular_file(const std::string& path, uint64_t max_bytes, std::string_view what) {
  HEARTH_TRY(RegularFile file, RegularFile::open(path));
  const auto too_large = [&](uint64_t size) {
    return make_error(ErrorCode::LimitExceeded, fmt::format("{}: {} is larger than the {} limit for {}", path,
                                                            format_size(size), format_size(max_bytes), what));
  };
  if (file.size() > max_bytes) return too_large(file.size());
  std::string out;
  out.resize(static_cast<size_t>(file.size()));
  size_t done = 0;
  // One byte past the size fstat() showed tells a file that grew since.
  char probe[1];
  for (;;) {
    char* dst = done < out.size() ? out.data() + done : probe;
    const size_t want = done < out.size() ? out.size() - done : sizeof probe;
    const ssize_t n = ::read(file.fd(), dst, want);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return os_error(path, fmt::format("cannot read at byte {}", done));
    if (n == 0) break;
    if (dst == probe) {
      // The file grew: append what follows, within the cap.
      out.push_back(probe[0]);
      if (out.size() > max_bytes) return too_large(out.size());
      done = out.size();
      out.resize(std::min<uint64_t>(max_bytes + 1, out.size() * 2));
      continue;
    }
    done += static_cast<size_t>(n);
    if (done > max_bytes) return too_large(done);
  }
  out.resize(done);
  return out;
}

bool same_file(const std::string& a, const std::string& b) {
  struct stat sa {}, sb {};
  if (::stat(a.c_str(), &sa) != 0 || ::stat(b.c_str(), &sb) != 0) return false;
  return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

Result<AtomicFile> AtomicFile::create(const std::string& target) {
  struct stat st {};
  if (::stat(target.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) return not_regular(target, st.st_mode);
  AtomicFile out;
  out.target_ = target;
  const size_t slash = target.rfind('/');
  const std::string base = slash == std::string::npos ? target : target.substr(slash + 1);
  std::string pattern = directory_of(target) + "/." + base + ".tmp-XXXXXX";
  std::vector<char> name(pattern.begin(), pattern.end());
  name.push_back('\0');
  out.fd_ = ::mkostemp(name.data(), O_CLOEXEC);
  if (out.fd_ < 0) return os_error(target, "cannot create a temporary file next to it");
  out.temp_ = name.data();
  (void)::fchmod(out.fd_, 0644);
  return out;
}

AtomicFile::AtomicFile(AtomicFile&& other) noexcept { *this = std::move(other); }

AtomicFile& AtomicFile::operator=(AtomicFile&& other) noexcept {
  if (this != &other) {
    discard();
    target_ = std::move(other.target_);
    temp_ = std::exchange(other.temp_, std::string());
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

AtomicFile::~AtomicFile() { discard(); }

void AtomicFile::discard() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  if (!temp_.empty()) ::unlink(temp_.c_str());
  temp_.clear();
}

Status AtomicFile::write(std::string_view bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd_, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return os_error(target_, "cannot write");
    done += static_cast<size_t>(n);
  }
  return {};
}

Status AtomicFile::commit() {
  if (::fsync(fd_) != 0) return os_error(target_, "cannot flush");
  const int fd = std::exchange(fd_, -1);
  if (::close(fd) != 0) return os_error(target_, "cannot close");
  if (::rename(temp_.c_str(), target_.c_str()) != 0) return os_error(target_, "cannot replace");
  temp_.clear();
  // The rename is durable only once the directory is.
  const int dir = ::open(directory_of(target_).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir >= 0) {
    (void)::fsync(dir);
    ::close(dir);
  }
  return {};
}

Status write_file_atomically(const std::string& path, std::string_view bytes) {
  HEARTH_TRY(AtomicFile file, AtomicFile::create(path));
  HEARTH_CHECK(file.write(bytes));
  return file.commit();
}

}  // namespace hearth
