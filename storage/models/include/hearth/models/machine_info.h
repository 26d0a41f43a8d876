// What this machine offers: available RAM (from /proc/meminfo), free disk
// space, and the default folder for downloaded models.
#pragma once

#include <hearth/core/result.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string_view>

namespace hearth::models {

// MemAvailable from the text of /proc/meminfo, in bytes; nullopt when absent
// or malformed.
std::optional<uint64_t> parse_meminfo_available(std::string_view meminfo_text);

// MemAvailable of this machine; an error when /proc/meminfo is unreadable.
Result<uint64_t> available_ram_bytes();

// Bytes an unprivileged process can still write on the file system holding
// `path` (the nearest existing parent when `path` does not exist yet).
Result<uint64_t> free_disk_bytes(const std::filesystem::path& path);

// $XDG_DATA_HOME/hearth/models, or ~/.local/share/hearth/models.
std::filesystem::path default_models_dir();

}  // namespace hearth::models
