// Device choice and fallback reasons over fake device lists (no Vulkan needed).
#include <gtest/gtest.h>
#include <hearth/engine/backend/vulkan/device_selection.h>

#include <vector>

namespace hearth::vulkan {
namespace {

constexpr uint32_t kV13 = (1u << 22) | (3u << 12);
constexpr uint32_t kV11 = (1u << 22) | (1u << 12);
constexpr uint64_t kGiB = 1ull << 30;

DeviceDescription good(uint32_t index, std::string name, DeviceKind kind, uint64_t mem) {
  DeviceDescription d;
  d.index = index;
  d.name = std::move(name);
  d.kind = kind;
  d.api_version = kV13;
  d.device_local_bytes = mem;
  d.has_compute_queue = true;
  d.storage_16bit = true;
  return d;
}

TEST(DeviceSelection, PrefersDiscreteOverIntegratedEvenWithLessMemory) {
  const std::vector<DeviceDescription> devs = {good(0, "iGPU", DeviceKind::Integrated, 16 * kGiB),
                                               good(1, "dGPU", DeviceKind::Discrete, 8 * kGiB)};
  const auto c = select_device(devs, {}, {});
  ASSERT_TRUE(c.chosen);
  EXPECT_EQ(*c.chosen, 1u);
  EXPECT_TRUE(c.fallback_reason.empty());
  EXPECT_TRUE(c.rejected.empty());
}

TEST(DeviceSelection, AmongSameKindPrefersMoreMemory) {
  const std::vector<DeviceDescription> devs = {good(0, "small", DeviceKind::Discrete, 4 * kGiB),
                                               good(1, "big", DeviceKind::Discrete, 12 * kGiB),
                                               good(2, "mid", DeviceKind::Discrete, 8 * kGiB)};
  const auto c = select_device(devs, {}, {});
  ASSERT_TRUE(c.chosen);
  EXPECT_EQ(*c.chosen, 1u);
}

TEST(DeviceSelection, HonoursPickedIndexOverBetterDevice) {
  const std::vector<DeviceDescription> devs = {good(0, "dGPU", DeviceKind::Discrete, 8 * kGiB),
                                               good(1, "iGPU", DeviceKind::Integrated, 2 * kGiB)};
  DevicePreference pick;
  pick.index = 1;
  const auto c = select_device(devs, {}, pick);
  ASSERT_TRUE(c.chosen);
  EXPECT_EQ(*c.chosen, 1u);
  ASSERT_EQ(c.rejected.size(), 1u);
  EXPECT_EQ(c.rejected[0].index, 0u);
  EXPECT_EQ(c.rejected[0].reason, RejectReason::NotPicked);
}

TEST(DeviceSelection, HonoursPickedNameCaseInsensitive) {
  const std::vector<DeviceDescription> devs = {good(0, "AMD Radeon RX 7600", DeviceKind::Discrete, 8 * kGiB),
                                               good(1, "Intel(R) Iris Xe", DeviceKind::Integrated, 2 * kGiB)};
  DevicePreference pick;
  pick.name = "iris";
  const auto c = select_device(devs, {}, pick);
  ASSERT_TRUE(c.chosen);
  EXPECT_EQ(*c.chosen, 1u);
}

TEST(DeviceSelection, PickedDeviceMissingIsReportedNotReplaced) {
  const std::vector<DeviceDescription> devs = {good(0, "dGPU", DeviceKind::Discrete, 8 * kGiB)};
  DevicePreference pick;
  pick.index = 3;
  const auto c = select_device(devs, {}, pick);
  EXPECT_FALSE(c.chosen);
  EXPECT_EQ(c.fallback_reason, "Vulkan: no device with index 3 (1 found); running on CPU");
}

TEST(DeviceSelection, UnusablePickedDeviceFallsBackToCpuWithItsReason) {
  auto weak = good(1, "old iGPU", DeviceKind::Integrated, 2 * kGiB);
  weak.storage_16bit = false;
  const std::vector<DeviceDescription> devs = {good(0, "dGPU", DeviceKind::Discrete, 8 * kGiB), weak};
  DevicePreference pick;
  pick.index = 1;
  const auto c = select_device(devs, {}, pick);
  EXPECT_FALSE(c.chosen);
  EXPECT_EQ(c.fallback_reason,
            "Vulkan: picked device old iGPU: no 16-bit storage buffer access; running on CPU");
}

TEST(DeviceSelection, ReportsEveryRejectedDeviceWithItsReason) {
  auto no_compute = good(0, "A", DeviceKind::Discrete, 8 * kGiB);
  no_compute.has_compute_queue = false;
  auto no16 = good(1, "B", DeviceKind::Discrete, 8 * kGiB);
  no16.storage_16bit = false;
  auto small = good(2, "C", DeviceKind::Integrated, 64ull << 20);
  auto old = good(3, "D", DeviceKind::Discrete, 8 * kGiB);
  old.api_version = kV11;
  auto fine = good(4, "E", DeviceKind::Integrated, 4 * kGiB);
  const std::vector<DeviceDescription> devs = {no_compute, no16, small, old, fine};
  const auto c = select_device(devs, {}, {});
  ASSERT_TRUE(c.chosen);
  EXPECT_EQ(*c.chosen, 4u);
  ASSERT_EQ(c.rejected.size(), 4u);
  EXPECT_EQ(c.rejected[0].reason, RejectReason::NoComputeQueue);
  EXPECT_EQ(c.rejected[0].detail, "A: no compute queue");
  EXPECT_EQ(c.rejected[1].reason, RejectReason::No16BitStorage);
  EXPECT_EQ(c.rejected[2].reason, RejectReason::TooLittleMemory);
  EXPECT_EQ(c.rejected[2].detail, "C: 64 MiB of device memory, needs 256 MiB");
  EXPECT_EQ(c.rejected[3].reason, RejectReason::ApiTooOld);
  EXPECT_EQ(c.rejected[3].detail, "D: supports Vulkan 1.1, needs 1.2");
}

TEST(DeviceSelection, CommonReasonGivesTheShortFallbackLine) {
  auto a = good(0, "A", DeviceKind::Discrete, 8 * kGiB);
  auto b = good(1, "B", DeviceKind::Integrated, 8 * kGiB);
  a.storage_16bit = b.storage_16bit = false;
  const std::vector<DeviceDescription> devs = {a, b};
  const auto c = select_device(devs, {}, {});
  EXPECT_FALSE(c.chosen);
  EXPECT_EQ(c.fallback_reason, "Vulkan: no device with 16-bit storage; running on CPU");
  EXPECT_EQ(c.rejected.size(), 2u);
}

TEST(DeviceSelection, MixedReasonsAreAllListed) {
  auto a = good(0, "A", DeviceKind::Discrete, 8 * kGiB);
  a.has_compute_queue = false;
  auto b = good(1, "B", DeviceKind::Integrated, 8 * kGiB);
  b.storage_16bit = false;
  const std::vector<DeviceDescription> devs = {a, b};
  const auto c = select_device(devs, {}, {});
  EXPECT_FALSE(c.chosen);
  EXPECT_EQ(c.fallback_reason,
            "Vulkan: no usable device (A: no compute queue; B: no 16-bit storage buffer access); running on CPU");
}

TEST(DeviceSelection, SoftwareDeviceRejectedUnlessAllowedOrPicked) {
  const std::vector<DeviceDescription> devs = {good(0, "llvmpipe", DeviceKind::Software, 8 * kGiB)};
  const auto rejected = select_device(devs, {}, {});
  EXPECT_FALSE(rejected.chosen);
  EXPECT_EQ(rejected.fallback_reason, "Vulkan: only software devices found; running on CPU");

  DeviceRequirements allow;
  allow.software = SoftwareDevices::Allow;
  EXPECT_TRUE(select_device(devs, allow, {}).chosen);

  DevicePreference pick;
  pick.name = "llvmpipe";
  EXPECT_TRUE(select_device(devs, {}, pick).chosen);
}

TEST(DeviceSelection, SoftwareRanksBelowAnyGpu) {
  DeviceRequirements allow;
  allow.software = SoftwareDevices::Allow;
  const std::vector<DeviceDescription> devs = {good(0, "llvmpipe", DeviceKind::Software, 64 * kGiB),
                                               good(1, "iGPU", DeviceKind::Integrated, 2 * kGiB)};
  const auto c = select_device(devs, allow, {});
  ASSERT_TRUE(c.chosen);
  EXPECT_EQ(*c.chosen, 1u);
}

TEST(DeviceSelection, NoDevicesAtAll) {
  const auto c = select_device({}, {}, {});
  EXPECT_FALSE(c.chosen);
  EXPECT_EQ(c.fallback_reason, "Vulkan: no devices found; running on CPU");
}

// The matvec path: automatic takes integer dot products only where the
// device accelerates them; forcing them needs the feature, and the refusal
// names the device.
TEST(MatvecPathChoice, AutoFollowsAccelerationAndForcingNeedsTheFeature) {
  DeviceDescription none = good(0, "Old GPU", DeviceKind::Discrete, 4 * kGiB);
  DeviceDescription emulated = none;
  emulated.integer_dot = true;
  DeviceDescription fast = emulated;
  fast.integer_dot_accelerated = true;
  EXPECT_EQ(*resolve_matvec_path(MatvecPath::Auto, none), MatvecPath::Plain);
  EXPECT_EQ(*resolve_matvec_path(MatvecPath::Auto, emulated), MatvecPath::Plain);
  EXPECT_EQ(*resolve_matvec_path(MatvecPath::Auto, fast), MatvecPath::IntegerDot);
  EXPECT_EQ(*resolve_matvec_path(MatvecPath::Plain, fast), MatvecPath::Plain);
  EXPECT_EQ(*resolve_matvec_path(MatvecPath::IntegerDot, emulated), MatvecPath::IntegerDot);
  const auto refused = resolve_matvec_path(MatvecPath::IntegerDot, none);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, ErrorCode::Unsupported);
  EXPECT_NE(refused.error().message.find("Old GPU"), std::string::npos) << refused.error().message;
  for (auto p : {MatvecPath::Auto, MatvecPath::Plain, MatvecPath::IntegerDot}) {
    EXPECT_EQ(parse_matvec_path(to_string(p)), p);
  }
  EXPECT_FALSE(parse_matvec_path("int8"));
}

}  // namespace
}  // namespace hearth::vulkan
