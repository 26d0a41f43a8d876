#include "logging.h"

#include <spdlog/sinks/rotating_file_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <cstdlib>
#include <system_error>
#include <vector>

namespace hearth::app {
namespace {

spdlog::level::level_enum to_spdlog(LogLevel level) {
  switch (level) {
    case LogLevel::Trace: return spdlog::level::trace;
    case LogLevel::Debug: return spdlog::level::debug;
    case LogLevel::Info: return spdlog::level::info;
    case LogLevel::Warn: return spdlog::level::warn;
    case LogLevel::Error: return spdlog::level::err;
  }
  return spdlog::level::info;
}

constexpr size_t kMaxLogFileBytes = 5 * 1024 * 1024;
constexpr size_t kMaxLogFiles = 3;

}  // namespace

std::filesystem::path default_log_dir() {
  if (const char* state = std::getenv("XDG_STATE_HOME"); state && *state) {
    return std::filesystem::path(state) / "hearth" / "logs";
  }
  const char* home = std::getenv("HOME");
  return std::filesystem::path(home ? home : ".") / ".local" / "state" / "hearth" / "logs";
}

std::optional<LogLevel> parse_log_level(const std::string& text) {
  if (text == "trace") return LogLevel::Trace;
  if (text == "debug") return LogLevel::Debug;
  if (text == "info") return LogLevel::Info;
  if (text == "warn" || text == "warning") return LogLevel::Warn;
  if (text == "error") return LogLevel::Error;
  return std::nullopt;
}

std::shared_ptr<spdlog::logger> make_logger(const std::string& name, const LoggingOptions& options) {
  std::vector<spdlog::sink_ptr> sinks;
  if (options.console == ConsoleSink::Stderr) {
    sinks.push_back(std::make_shared<spdlog::sinks::stderr_color_sink_mt>());
  }
  std::string file_problem;
  if (options.file == FileSink::Rotating) {
    const auto dir = options.log_dir.value_or(default_log_dir());
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) {
      file_problem = "cannot create log directory " + dir.string() + ": " + ec.message();
    } else {
      try {
        sinks.push_back(std::make_shared<spdlog::sinks::rotating_file_sink_mt>(
            (dir / (name + ".log")).string(), kMaxLogFileBytes, kMaxLogFiles));
      } catch (const spdlog::spdlog_ex& e) {
        file_problem = std::string("cannot open log file: ") + e.what();
      }
    }
  }
  auto logger = std::make_shared<spdlog::logger>(name, sinks.begin(), sinks.end());
  logger->set_level(to_spdlog(options.level));
  logger->set_pattern("%Y-%m-%d %H:%M:%S.%e [%l] %v");
  logger->flush_on(spdlog::level::warn);
  if (!file_problem.empty()) logger->warn("{}", file_problem);
  return logger;
}

Logger engine_logger(std::shared_ptr<spdlog::logger> sink, LogLevel min_level) {
  return Logger(
      [sink = std::move(sink)](LogLevel level, std::string_view message) {
        sink->log(to_spdlog(level), "{}", message);
      },
      min_level);
}

}  // namespace hearth::app
