#include <hearth/models/machine_info.h>

#include <gtest/gtest.h>

namespace hearth::models {
namespace {

TEST(MachineInfo, ParsesMemAvailable) {
  const char* text =
      "MemTotal:       32768000 kB\n"
      "MemFree:         1000000 kB\n"
      "MemAvailable:   20000000 kB\n"
      "Buffers:          123456 kB\n";
  EXPECT_EQ(parse_meminfo_available(text), 20000000ull * 1024);
  EXPECT_FALSE(parse_meminfo_available("MemTotal: 1 kB\n").has_value());
  EXPECT_FALSE(parse_meminfo_available("MemAvailable: lots\n").has_value());
  EXPECT_FALSE(parse_meminfo_available("MemAvailable: 12 MB\n").has_value());
}

TEST(MachineInfo, ThisMachineReportsSomething) {
  auto ram = available_ram_bytes();
  ASSERT_TRUE(ram.ok()) << ram.error().message;
  EXPECT_GT(*ram, 0u);
  auto disk = free_disk_bytes("/nonexistent-folder/below/it");  // falls back to "/"
  ASSERT_TRUE(disk.ok());
  EXPECT_GT(*disk, 0u);
}

}  // namespace
}  // namespace hearth::models
