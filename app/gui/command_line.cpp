#include "gui/command_line.h"

#include <QCoreApplication>

namespace hearth::app {

CommandLine parse_command_line(const QStringList& arguments) {
  CommandLine out;
  // Value options accept both "--opt VALUE" and "--opt=VALUE".
  auto take_value = [&](qsizetype& i, const QString& name, QString* value) -> bool {
    const QString& arg = arguments[i];
    if (arg.startsWith(name + QLatin1Char('='))) {
      *value = arg.mid(name.size() + 1);
      return true;
    }
    if (arg != name) return false;
    if (i + 1 >= arguments.size()) {
      out.action = CommandLine::Action::UsageError;
      out.error = QStringLiteral("%1 needs a value").arg(name);
      return true;
    }
    *value = arguments[++i];
    return true;
  };
  for (qsizetype i = 1; i < arguments.size(); ++i) {
    const QString& arg = arguments[i];
    if (arg == QLatin1String("--version")) {
      out.action = CommandLine::Action::PrintVersion;
      return out;
    }
    if (arg == QLatin1String("--help") || arg == QLatin1String("-h")) {
      out.action = CommandLine::Action::PrintHelp;
      return out;
    }
    if (take_value(i, QStringLiteral("--model"), &out.model_path)) continue;
    if (take_value(i, QStringLiteral("--data-dir"), &out.data_dir)) continue;
    if (take_value(i, QStringLiteral("--log-level"), &out.log_level)) continue;
    if (arg.startsWith(QLatin1String("--"))) {
      out.action = CommandLine::Action::UsageError;
      out.error = QStringLiteral("unknown option %1").arg(arg);
      return out;
    }
  }
  return out;
}

QString command_line_help() {
  return QStringLiteral(
      "Usage: hearth [--model PATH] [--data-dir DIR] [--log-level LEVEL]\n"
      "Private, offline chat with language models on your own machine.\n\n"
      "  --model PATH      load this GGUF model at start\n"
      "  --data-dir DIR    keep settings and conversations in DIR\n"
      "                    (default: $XDG_DATA_HOME/hearth)\n"
      "  --log-level L     trace, debug, info, warn or error\n"
      "  --version         print the version and exit\n"
      "  --help            print this help and exit\n");
}

}  // namespace hearth::app
