// read_regular_file / AtomicFile against real files, FIFOs, devices and
// directories. Nothing here may block: a FIFO is refused before open().
#include <gtest/gtest.h>
#include <hearth/core/file_io.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace hearth {
namespace {

namespace fs = std::filesystem;

struct TempDir {
  fs::path dir;
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "hearth_file_io_XXXXXX").string();
    dir = ::mkdtemp(pattern.data());
  }
  ~TempDir() { fs::remove_all(dir); }
  std::string file(const std::string& name, const std::string& content) const {
    const fs::path p = dir / name;
    std::ofstream(p, std::ios::binary) << content;
    return p.string();
  }
};

TEST(ReadRegularFile, ReadsWithinTheCap) {
  TempDir t;
  const std::string p = t.file("a.txt", "hello\nworld");
  auto r = read_regular_file(p, 11, "test files");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(*r, "hello\nworld");
  auto empty = read_regular_file(t.file("e.txt", ""), 0, "test files");
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(*empty, "");
}

TEST(ReadRegularFile, RefusesAFileOverTheCapNamingFileAndCap) {
  TempDir t;
  const std::string p = t.file("msgs.json", std::string(3 * 1024 * 1024, 'x'));
  auto r = read_regular_file(p, 2 * 1024 * 1024, "message files");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::LimitExceeded);
  EXPECT_EQ(r.error().message, p + ": 3 MiB is larger than the 2 MiB limit for message files");
}

TEST(ReadRegularFile, RefusesAFifoWithoutOpeningIt) {
  TempDir t;
  const std::string p = (t.dir / "fifo").string();
  ASSERT_EQ(::mkfifo(p.c_str(), 0600), 0);
  // Without a writer, a plain open() would never return.
  auto r = read_regular_file(p, 1024, "test files");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::Unsupported);
  EXPECT_EQ(r.error().message, p + ": is a FIFO, not a regular file");
}

TEST(ReadRegularFile, RefusesDevicesAndDirectories) {
  auto zero = read_regular_file("/dev/zero", 1024, "test files");
  ASSERT_FALSE(zero.ok());
  EXPECT_EQ(zero.error().message, "/dev/zero: is a character device, not a regular file");
  TempDir t;
  auto dir = read_regular_file(t.dir.string(), 1024, "test files");
  ASSERT_FALSE(dir.ok());
  EXPECT_EQ(dir.error().message, t.dir.string() + ": is a directory, not a regular file");
  auto missing = read_regular_file((t.dir / "nope").string(), 1024, "test files");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("nope: cannot open: No such file"), std::string::npos);
}

TEST(FormatSize, Units) {
  EXPECT_EQ(format_size(17), "17 bytes");
  EXPECT_EQ(format_size(4096), "4 KiB");
  EXPECT_EQ(format_size(64ull << 20), "64 MiB");
  EXPECT_EQ(format_size(3ull << 29), "1.5 GiB");
}

TEST(SameFile, HardLinksAndSymlinks) {
  TempDir t;
  const std::string a = t.file("a", "x");
  const std::string b = t.file("b", "x");
  const std::string hard = (t.dir / "hard").string();
  const std::string soft = (t.dir / "soft").string();
  fs::create_hard_link(a, hard);
  fs::create_symlink(a, soft);
  EXPECT_TRUE(same_file(a, hard));
  EXPECT_TRUE(same_file(a, soft));
  EXPECT_TRUE(same_file(a, t.dir.string() + "/./a"));
  EXPECT_FALSE(same_file(a, b));
  EXPECT_FALSE(same_file(a, (t.dir / "missing").string()));
}

TEST(AtomicFile, ReplacesOnlyOnCommit) {
  TempDir t;
  const std::string p = t.file("out.txt", "old");
  {
    auto f = AtomicFile::create(p);
    ASSERT_TRUE(f.ok()) << f.error().message;
    ASSERT_TRUE(f->write("new content").ok());
    EXPECT_EQ(*read_regular_file(p, 100, "t"), "old");
    // No commit: the old file stays and the temporary is removed.
  }
  EXPECT_EQ(*read_regular_file(p, 100, "t"), "old");
  EXPECT_EQ(std::distance(fs::directory_iterator(t.dir), fs::directory_iterator()), 1);
  ASSERT_TRUE(write_file_atomically(p, "new content").ok());
  EXPECT_EQ(*read_regular_file(p, 100, "t"), "new content");
  EXPECT_EQ(std::distance(fs::directory_iterator(t.dir), fs::directory_iterator()), 1);
  auto onto_dir = write_file_atomically(t.dir.string(), "x");
  ASSERT_FALSE(onto_dir.ok());
  EXPECT_EQ(onto_dir.error().message, t.dir.string() + ": is a directory, not a regular file");
}

}  // namespace
}  // namespace hearth
