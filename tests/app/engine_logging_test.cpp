// The engine's log messages reach the app's log: main() builds the log with
// make_logger() and hands the engine a Logger bridged to it through
// AppOptions. Here the same wiring writes to a log file in a temporary
// directory, and the GPU probe that show() starts (the real engine's Vulkan
// device choice) must leave its report there.
#include <QQmlApplicationEngine>
#include <QSignalSpy>
#include <QTemporaryDir>

#include <gtest/gtest.h>
#include <spdlog/spdlog.h>

#include <fstream>
#include <sstream>
#include <string>

#include "common/logging.h"
#include "gui/app_context.h"

namespace hearth::app {
namespace {

std::string slurp(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

LoggingOptions file_only(const QTemporaryDir& dir) {
  LoggingOptions options;
  options.level = LogLevel::Debug;
  options.console = ConsoleSink::None;
  options.file = FileSink::Rotating;
  options.log_dir = std::filesystem::path(dir.path().toStdString()) / "logs";
  return options;
}

// What an engine component reports at warning level arrives in the file
// with its level.
TEST(EngineLogging, EngineWarningsReachTheAppLogWithTheirLevel) {
  QTemporaryDir dir;
  ASSERT_TRUE(dir.isValid());
  const LoggingOptions options = file_only(dir);
  auto sink = make_logger("engine-warn", options);
  const Logger engine = engine_logger(sink, LogLevel::Info);
  engine.warn("{}: unknown pre-tokenizer '{}'", "model.gguf", "mystery");
  engine.debug("below the level: dropped");
  sink->flush();
  const std::string log = slurp(*options.log_dir / "engine-warn.log");
  EXPECT_NE(log.find("[warning] model.gguf: unknown pre-tokenizer 'mystery'"), std::string::npos) << log;
  EXPECT_EQ(log.find("below the level"), std::string::npos) << log;
}

// The app wires it: the engine's Vulkan device report (a device it uses, or
// each one it does not use and why, as for CI's software device) lands in
// the app's log.
TEST(EngineLogging, AppContextGivesTheEngineTheAppsLog) {
  QTemporaryDir dir;
  ASSERT_TRUE(dir.isValid());
  const LoggingOptions log_options = file_only(dir);
  auto sink = make_logger("hearth", log_options);
  AppOptions options;
  options.data_dir = dir.path() + QStringLiteral("/data");
  options.engine_logger = engine_logger(sink, LogLevel::Debug);
  {
    AppContext context(options);
    QQmlApplicationEngine qml;
    QSignalSpy probed(&context, &AppContext::gpuProbed);
    ASSERT_TRUE(context.show(qml));
    ASSERT_TRUE(probed.count() > 0 || probed.wait(30000));
  }
  sink->flush();
  const std::string log = slurp(*log_options.log_dir / "hearth.log");
  const bool reported = log.find("Vulkan: using ") != std::string::npos ||
                        log.find("Vulkan: not using ") != std::string::npos;
  EXPECT_TRUE(reported) << "the engine's device report is not in the app's log:\n" << log;
}

}  // namespace
}  // namespace hearth::app
