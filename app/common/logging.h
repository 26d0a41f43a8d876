// Logging for the executables: spdlog sinks (rotating file in the XDG state
// directory, console for the CLI) and the bridge that feeds engine log
// callbacks into them.
#pragma once

#include <hearth/core/log.h>

#include <filesystem>
#include <memory>
#include <optional>
#include <string>

namespace spdlog { class logger; }

namespace hearth::app {

enum class ConsoleSink { None, Stderr };
enum class FileSink { None, Rotating };

struct LoggingOptions {
  LogLevel level = LogLevel::Info;
  ConsoleSink console = ConsoleSink::Stderr;
  FileSink file = FileSink::Rotating;
  // Overrides the XDG state directory (tests use a temporary one).
  std::optional<std::filesystem::path> log_dir;
};

// $XDG_STATE_HOME/hearth/logs, or ~/.local/state/hearth/logs.
std::filesystem::path default_log_dir();

// Parses "trace|debug|info|warn|error"; nullopt for anything else.
std::optional<LogLevel> parse_log_level(const std::string& text);

// Builds the application logger. Never throws: when the log directory cannot
// be created the file sink is skipped and a warning goes to the console sink.
std::shared_ptr<spdlog::logger> make_logger(const std::string& name, const LoggingOptions& options);

// A Logger for engine components that forwards to `sink`.
Logger engine_logger(std::shared_ptr<spdlog::logger> sink, LogLevel min_level);

}  // namespace hearth::app
