// hearth: the desktop app. Builds the Qt application and loads the main window.
#include <QGuiApplication>
#include <QQmlApplicationEngine>
#include <QQuickStyle>
#include <QtQml/qqmlextensionplugin.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <spdlog/spdlog.h>

#include "common/logging.h"
#include "common/version.h"
#include "ui_module.h"

Q_IMPORT_QML_PLUGIN(Hearth_UiPlugin)

namespace {

bool has_display_platform() {
  const char* platform = std::getenv("QT_QPA_PLATFORM");
  if (platform && *platform) return true;  // offscreen, xcb, wayland chosen explicitly
  const char* x11 = std::getenv("DISPLAY");
  const char* wayland = std::getenv("WAYLAND_DISPLAY");
  return (x11 && *x11) || (wayland && *wayland);
}

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--version") == 0) {
      std::printf("hearth %s (%s)\n", hearth::kVersion, hearth::kGitRevision);
      return 0;
    }
  }
  if (!has_display_platform()) {
    std::fprintf(stderr,
                 "hearth: no display found (neither DISPLAY nor WAYLAND_DISPLAY is set).\n"
                 "Start Hearth from a desktop session, or run it under Xvfb "
                 "(xvfb-run hearth), or use hearth-cli in a terminal.\n");
    return 3;
  }

  QGuiApplication app(argc, argv);
  QGuiApplication::setApplicationName("Hearth");
  QGuiApplication::setOrganizationName("Hearth");
  QGuiApplication::setApplicationVersion(hearth::kVersion);
  QQuickStyle::setStyle("Basic");

  hearth::app::LoggingOptions log_options;
  auto logger = hearth::app::make_logger("hearth", log_options);
  logger->info("Hearth {} ({}) starting", hearth::kVersion, hearth::kGitRevision);

  QQmlApplicationEngine engine;
  QObject::connect(
      &engine, &QQmlApplicationEngine::objectCreationFailed, &app,
      [] { QCoreApplication::exit(1); }, Qt::QueuedConnection);
  engine.load(QUrl(QString::fromUtf8(hearth::ui::kMainQmlUrl)));
  return QGuiApplication::exec();
}
