// hearth's command line: --model PATH, --data-dir DIR, --log-level LEVEL,
// --version, --help. Qt's own options (-platform, ...) pass through.
#pragma once

#include <QString>
#include <QStringList>

namespace hearth::app {

struct CommandLine {
  enum class Action { Run, PrintVersion, PrintHelp, UsageError };
  Action action = Action::Run;
  QString model_path;   // load this model at start instead of the last one
  QString data_dir;     // settings, database and markers live here
  QString log_level;    // empty: from settings
  QString error;        // for UsageError
};

CommandLine parse_command_line(const QStringList& arguments);
QString command_line_help();

}  // namespace hearth::app
