#include "gui/command_line.h"

#include <gtest/gtest.h>

namespace hearth::app {
namespace {

CommandLine parse(QStringList args) {
  args.prepend(QStringLiteral("hearth"));
  return parse_command_line(args);
}

TEST(CommandLine, ModelAndDataDirInBothForms) {
  const auto a = parse({"--model", "/m/x.gguf", "--data-dir=/tmp/d"});
  EXPECT_EQ(a.action, CommandLine::Action::Run);
  EXPECT_EQ(a.model_path, QStringLiteral("/m/x.gguf"));
  EXPECT_EQ(a.data_dir, QStringLiteral("/tmp/d"));
}

TEST(CommandLine, VersionAndHelp) {
  EXPECT_EQ(parse({"--version"}).action, CommandLine::Action::PrintVersion);
  EXPECT_EQ(parse({"-h"}).action, CommandLine::Action::PrintHelp);
}

TEST(CommandLine, MissingValueAndUnknownOptionAreUsageErrors) {
  const auto a = parse({"--model"});
  EXPECT_EQ(a.action, CommandLine::Action::UsageError);
  EXPECT_TRUE(a.error.contains(QStringLiteral("--model")));
  EXPECT_EQ(parse({"--frobnicate"}).action, CommandLine::Action::UsageError);
}

TEST(CommandLine, QtOptionsPassThrough) {
  EXPECT_EQ(parse({"-platform", "offscreen"}).action, CommandLine::Action::Run);
}

}  // namespace
}  // namespace hearth::app
