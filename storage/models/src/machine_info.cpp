#include <hearth/models/machine_info.h>

#include <fmt/format.h>

#include <charconv>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace hearth::models {

std::optional<uint64_t> parse_meminfo_available(std::string_view text) {
  // Lines look like "MemAvailable:   12345678 kB".
  constexpr std::string_view kKey = "MemAvailable:";
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    if (line.substr(0, kKey.size()) != kKey) continue;
    line.remove_prefix(kKey.size());
    while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
    uint64_t value = 0;
    auto [ptr, ec] = std::from_chars(line.data(), line.data() + line.size(), value);
    if (ec != std::errc() || ptr == line.data()) return std::nullopt;
    std::string_view unit(ptr, static_cast<size_t>(line.data() + line.size() - ptr));
    while (!unit.empty() && unit.front() == ' ') unit.remove_prefix(1);
    while (!unit.empty() && (unit.back() == ' ' || unit.back() == '\r')) unit.remove_suffix(1);
    if (unit == "kB") return value * 1024;
    if (unit.empty()) return value;
    return std::nullopt;
  }
  return std::nullopt;
}

Result<uint64_t> available_ram_bytes() {
  std::ifstream in("/proc/meminfo");
  if (!in) return make_error(ErrorCode::Io, "cannot read /proc/meminfo");
  std::stringstream buffer;
  buffer << in.rdbuf();
  auto value = parse_meminfo_available(buffer.str());
  if (!value) return make_error(ErrorCode::InvalidFormat, "/proc/meminfo has no readable MemAvailable line");
  return *value;
}

Result<uint64_t> free_disk_bytes(const std::filesystem::path& path) {
  std::filesystem::path probe = path;
  std::error_code ec;
  while (!probe.empty() && !std::filesystem::exists(probe, ec)) probe = probe.parent_path();
  if (probe.empty()) probe = ".";
  auto info = std::filesystem::space(probe, ec);
  if (ec) {
    return make_error(ErrorCode::Io, fmt::format("cannot read free space of '{}': {}", probe.string(), ec.message()));
  }
  return static_cast<uint64_t>(info.available);
}

std::filesystem::path default_models_dir() {
  if (const char* xdg = std::getenv("XDG_DATA_HOME"); xdg && *xdg) {
    return std::filesystem::path(xdg) / "hearth" / "models";
  }
  const char* home = std::getenv("HOME");
  return std::filesystem::path(home && *home ? home : ".") / ".local" / "share" / "hearth" / "models";
}

}  // namespace hearth::models
