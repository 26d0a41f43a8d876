#include "hearth/engine/backend/vulkan/device_selection.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

namespace hearth::vulkan {
namespace {

constexpr const char* kCpuSuffix = "; running on CPU";

int kind_rank(DeviceKind kind) {
  switch (kind) {
    case DeviceKind::Discrete: return 0;
    case DeviceKind::Integrated: return 1;
    case DeviceKind::Virtual: return 2;
    case DeviceKind::Other: return 3;
    case DeviceKind::Software: return 4;
  }
  return 5;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string mib(uint64_t bytes) { return fmt::format("{} MiB", bytes >> 20); }

// The first requirement the device fails, or nullopt when it is usable.
std::optional<RejectedDevice> check(const DeviceDescription& d, const DeviceRequirements& req,
                                    bool picked) {
  auto reject = [&](RejectReason reason, std::string detail) {
    return RejectedDevice{d.index, d.name, reason, fmt::format("{}: {}", d.name, detail)};
  };
  if (d.api_version < req.min_api_version) {
    return reject(RejectReason::ApiTooOld,
                  fmt::format("supports Vulkan {}, needs {}", format_api_version(d.api_version),
                              format_api_version(req.min_api_version)));
  }
  if (!d.has_compute_queue) return reject(RejectReason::NoComputeQueue, "no compute queue");
  if (!d.storage_16bit) return reject(RejectReason::No16BitStorage, "no 16-bit storage buffer access");
  if (d.device_local_bytes < req.min_device_memory_bytes) {
    return reject(RejectReason::TooLittleMemory,
                  fmt::format("{} of device memory, needs {}", mib(d.device_local_bytes),
                              mib(req.min_device_memory_bytes)));
  }
  if (d.kind == DeviceKind::Software && req.software == SoftwareDevices::Reject && !picked) {
    return reject(RejectReason::SoftwareDevice, "software renderer, slower than the CPU backend");
  }
  return std::nullopt;
}

// "no device with 16-bit storage" when every device failed for one reason.
std::string common_reason_phrase(RejectReason reason, const DeviceRequirements& req) {
  switch (reason) {
    case RejectReason::ApiTooOld:
      return fmt::format("no device supporting Vulkan {}", format_api_version(req.min_api_version));
    case RejectReason::NoComputeQueue: return "no device with a compute queue";
    case RejectReason::No16BitStorage: return "no device with 16-bit storage";
    case RejectReason::TooLittleMemory:
      return fmt::format("no device with {} of memory", mib(req.min_device_memory_bytes));
    case RejectReason::SoftwareDevice: return "only software devices found";
    case RejectReason::NotPicked: return "no device picked";
  }
  return "no usable device";
}

}  // namespace

const char* to_string(DeviceKind kind) {
  switch (kind) {
    case DeviceKind::Discrete: return "discrete";
    case DeviceKind::Integrated: return "integrated";
    case DeviceKind::Virtual: return "virtual";
    case DeviceKind::Software: return "software";
    case DeviceKind::Other: return "other";
  }
  return "?";
}

std::string format_api_version(uint32_t version) {
  return fmt::format("{}.{}", (version >> 22) & 0x7Fu, (version >> 12) & 0x3FFu);
}

DeviceChoice select_device(std::span<const DeviceDescription> devices,
                           const DeviceRequirements& requirements,
                           const DevicePreference& preference) {
  DeviceChoice choice;
  if (devices.empty()) {
    choice.fallback_reason = std::string("Vulkan: no devices found") + kCpuSuffix;
    return choice;
  }

  // The user's pick, if any, narrows the candidates to one device.
  std::optional<size_t> picked;
  if (preference.index || !preference.name.empty()) {
    const std::string wanted = lower(preference.name);
    for (size_t i = 0; i < devices.size(); ++i) {
      const bool match = preference.index ? devices[i].index == *preference.index
                                          : lower(devices[i].name).find(wanted) != std::string::npos;
      if (match) {
        picked = i;
        break;
      }
    }
    if (!picked) {
      const std::string what = preference.index ? fmt::format("index {}", *preference.index)
                                                : fmt::format("name '{}'", preference.name);
      for (const auto& d : devices) {
        choice.rejected.push_back({d.index, d.name, RejectReason::NotPicked,
                                   fmt::format("{}: not the picked device", d.name)});
      }
      choice.fallback_reason = fmt::format("Vulkan: no device with {} ({} found){}", what,
                                           devices.size(), kCpuSuffix);
      return choice;
    }
  }

  std::vector<size_t> usable;
  for (size_t i = 0; i < devices.size(); ++i) {
    if (picked && i != *picked) {
      choice.rejected.push_back({devices[i].index, devices[i].name, RejectReason::NotPicked,
                                 fmt::format("{}: not the picked device", devices[i].name)});
      continue;
    }
    if (auto r = check(devices[i], requirements, picked.has_value())) {
      choice.rejected.push_back(std::move(*r));
    } else {
      usable.push_back(i);
    }
  }

  if (usable.empty()) {
    if (picked) {
      const auto& r = choice.rejected.back();  // the picked device's own rejection
      choice.fallback_reason = fmt::format("Vulkan: picked device {}{}", r.detail, kCpuSuffix);
      return choice;
    }
    const RejectReason first = choice.rejected.front().reason;
    const bool same = std::all_of(choice.rejected.begin(), choice.rejected.end(),
                                  [&](const RejectedDevice& r) { return r.reason == first; });
    if (same) {
      choice.fallback_reason =
          fmt::format("Vulkan: {}{}", common_reason_phrase(first, requirements), kCpuSuffix);
    } else {
      std::string details;
      for (const auto& r : choice.rejected) details += (details.empty() ? "" : "; ") + r.detail;
      choice.fallback_reason = fmt::format("Vulkan: no usable device ({}){}", details, kCpuSuffix);
    }
    return choice;
  }

  const auto best = *std::min_element(usable.begin(), usable.end(), [&](size_t a, size_t b) {
    const auto& da = devices[a];
    const auto& db = devices[b];
    if (kind_rank(da.kind) != kind_rank(db.kind)) return kind_rank(da.kind) < kind_rank(db.kind);
    if (da.device_local_bytes != db.device_local_bytes) return da.device_local_bytes > db.device_local_bytes;
    return da.index < db.index;
  });
  choice.chosen = devices[best].index;
  return choice;
}

const char* to_string(MatvecPath path) {
  switch (path) {
    case MatvecPath::Auto: return "auto";
    case MatvecPath::Plain: return "plain";
    case MatvecPath::IntegerDot: return "int-dot";
  }
  return "?";
}

std::optional<MatvecPath> parse_matvec_path(std::string_view text) {
  for (auto p : {MatvecPath::Auto, MatvecPath::Plain, MatvecPath::IntegerDot}) {
    if (text == to_string(p)) return p;
  }
  return std::nullopt;
}

Result<MatvecPath> resolve_matvec_path(MatvecPath requested, const DeviceDescription& d) {
  switch (requested) {
    case MatvecPath::Auto: return d.integer_dot_accelerated ? MatvecPath::IntegerDot : MatvecPath::Plain;
    case MatvecPath::Plain: return MatvecPath::Plain;
    case MatvecPath::IntegerDot:
      if (!d.integer_dot) {
        return make_error(ErrorCode::Unsupported,
                          fmt::format("Vulkan: {} has no integer dot products (shaderIntegerDotProduct); the int-dot "
                                      "matvec path needs them",
                                      d.name));
      }
      return MatvecPath::IntegerDot;
  }
  return MatvecPath::Plain;
}

}  // namespace hearth::vulkan
