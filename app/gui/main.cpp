// hearth: the desktop app. Parses the command line, sets up logging and hands
// over to AppContext, which builds the window.
#include <QDir>
#include <QApplication>
#include <QIcon>
#include <QQmlApplicationEngine>
#include <QQuickStyle>

#include <cstdio>
#include <cstdlib>

#include <spdlog/spdlog.h>

#include "common/logging.h"
#include "common/version.h"
#include "gui/app_context.h"
#include "gui/command_line.h"
#include "gui/data_paths.h"

namespace {

bool has_display_platform() {
  const char* platform = std::getenv("QT_QPA_PLATFORM");
  if (platform && *platform) return true;  // offscreen, xcb, wayland chosen explicitly
  const char* x11 = std::getenv("DISPLAY");
  const char* wayland = std::getenv("WAYLAND_DISPLAY");
  return (x11 && *x11) || (wayland && *wayland);
}

QStringList raw_arguments(int argc, char** argv) {
  QStringList out;
  for (int i = 0; i < argc; ++i) out << QString::fromLocal8Bit(argv[i]);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  using hearth::app::CommandLine;
  // Parsed before QApplication so --version and --help work without a display.
  const CommandLine cli = hearth::app::parse_command_line(raw_arguments(argc, argv));
  switch (cli.action) {
    case CommandLine::Action::PrintVersion:
      std::printf("hearth %s (%s)\n", hearth::kVersion, hearth::kGitRevision);
      return 0;
    case CommandLine::Action::PrintHelp:
      std::fputs(hearth::app::command_line_help().toLocal8Bit().constData(), stdout);
      return 0;
    case CommandLine::Action::UsageError:
      std::fprintf(stderr, "hearth: %s\n%s", cli.error.toLocal8Bit().constData(),
                   hearth::app::command_line_help().toLocal8Bit().constData());
      return 1;
    case CommandLine::Action::Run: break;
  }
  if (!has_display_platform()) {
    std::fprintf(stderr,
                 "hearth: no display found (neither DISPLAY nor WAYLAND_DISPLAY is set).\n"
                 "Start Hearth from a desktop session, or run it under Xvfb "
                 "(xvfb-run hearth), or use hearth-cli in a terminal.\n");
    return 3;
  }

  // QApplication, not QGuiApplication: Compare levels draws its chart with Qt
  // Charts, which is built on Graphics View (Qt Widgets).
  QApplication app(argc, argv);
  QGuiApplication::setApplicationName(QStringLiteral("Hearth"));
  QGuiApplication::setOrganizationName(QStringLiteral("Hearth"));
  QGuiApplication::setApplicationVersion(QString::fromLatin1(hearth::kVersion));
  QGuiApplication::setDesktopFileName(QStringLiteral("hearth"));
  QGuiApplication::setWindowIcon(QIcon(QStringLiteral(":/Hearth/Ui/resources/icons/hearth.svg")));
  QQuickStyle::setStyle(QStringLiteral("Basic"));

  hearth::app::LoggingOptions log_options;
  if (!cli.log_level.isEmpty()) {
    if (auto level = hearth::app::parse_log_level(cli.log_level.toStdString())) {
      log_options.level = *level;
    }
  }
  auto logger = hearth::app::make_logger("hearth", log_options);
  logger->info("Hearth {} ({}) starting", hearth::kVersion, hearth::kGitRevision);

  hearth::app::AppOptions options;
  options.data_dir = cli.data_dir.isEmpty() ? hearth::app::default_data_dir()
                                            : QDir(cli.data_dir).absolutePath();
  options.model_path = cli.model_path;
  options.demo_model_path = hearth::app::find_demo_model();
  options.engine_logger = hearth::app::engine_logger(logger, log_options.level);
  logger->info("data directory {}", options.data_dir.toStdString());

  // The context outlives the QML engine: bindings reference its controllers.
  hearth::app::AppContext context(options);
  QQmlApplicationEngine qml;
  if (!context.show(qml)) {
    logger->error("the main window could not be created");
    return 1;
  }
  return QApplication::exec();
}
