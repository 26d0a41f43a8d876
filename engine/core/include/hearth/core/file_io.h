// Reading and writing files that come from (or go back to) the user: the one
// place that refuses FIFOs, devices and directories, caps sizes, and replaces
// files atomically. Every reader of an untrusted file goes through here, so a
// FIFO without a writer cannot block open() forever and /dev/zero cannot be
// read until memory runs out.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "hearth/core/result.h"

namespace hearth {

// "300 MiB", "12 KiB", "17 bytes": sizes in the units messages use.
std::string format_size(uint64_t bytes);

// What stat() says a file is ("a directory", "a FIFO", ...), for messages.
std::string file_kind(mode_t mode);

// A regular file opened read-only. It was checked with stat() before open()
// (so a FIFO is never opened) and opened with O_NONBLOCK and fstat()-checked
// again, so a file swapped for a FIFO between the two calls is refused too.
class RegularFile {
 public:
  static Result<RegularFile> open(const std::string& path);

  RegularFile(RegularFile&& other) noexcept;
  RegularFile& operator=(RegularFile&& other) noexcept;
  RegularFile(const RegularFile&) = delete;
  RegularFile& operator=(const RegularFile&) = delete;
  ~RegularFile();

  int fd() const { return fd_; }
  uint64_t size() const { return size_; }
  dev_t device() const { return device_; }
  ino_t inode() const { return inode_; }
  int64_t mtime_ns() const { return mtime_ns_; }

 private:
  RegularFile() = default;
  int fd_ = -1;
  uint64_t size_ = 0;
  dev_t device_ = 0;
  ino_t inode_ = 0;
  int64_t mtime_ns_ = 0;
};

// The whole of a regular file of at most `max_bytes`. `what` names the kind of
// file for the message ("message files"): "msgs.json: 300 MiB is larger than
// the 64 MiB limit for message files". A file that grows past the cap while it
// is read is refused as well.
Result<std::string> read_regular_file(const std::string& path, uint64_t max_bytes, std::string_view what);

// Whether two paths name the same file (same device and inode after following
// symlinks; hard links included). A path that does not exist is not the same.
bool same_file(const std::string& a, const std::string& b);

// A file written under a temporary name in the target's directory and renamed
// over the target only by commit(), after fsync; until then the old file (if
// any) is untouched. Without commit() the temporary file is removed.
class AtomicFile {
 public:
  static Result<AtomicFile> create(const std::string& target);

  AtomicFile(AtomicFile&& other) noexcept;
  AtomicFile& operator=(AtomicFile&& other) noexcept;
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  ~AtomicFile();

  // The temporary file's path, for writers that open it themselves.
  const std::string& temp_path() const { return temp_; }
  int fd() const { return fd_; }
  Status write(std::string_view bytes);
  // fsync, rename over the target, fsync the directory.
  Status commit();

 private:
  AtomicFile() = default;
  void discard();
  std::string target_;
  std::string temp_;
  int fd_ = -1;
};

// write + fsync + rename through AtomicFile, in one call.
Status write_file_atomically(const std::string& path, std::string_view bytes);

}  // namespace hearth
