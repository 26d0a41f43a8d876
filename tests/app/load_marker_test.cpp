#include "common/load_marker.h"

#include <QTemporaryDir>

#include <gtest/gtest.h>

namespace hearth::app {
namespace {

TEST(LoadMarker, BeginLeavesPathUntilEnd) {
  QTemporaryDir dir;
  const std::string file = dir.filePath(QStringLiteral("sub/marker")).toStdString();
  LoadMarker marker(file);
  EXPECT_FALSE(marker.interrupted_model());
  ASSERT_TRUE(marker.begin("/models/ä b.gguf"));
  // A second process (the next start) sees it.
  EXPECT_EQ(LoadMarker(file).interrupted_model().value_or(""), "/models/ä b.gguf");
  marker.end();
  EXPECT_FALSE(LoadMarker(file).interrupted_model());
}

TEST(LoadMarker, UnwritableDirectoryReportsFailure) {
  LoadMarker marker("/proc/hearth-cannot-write-here/marker");
  EXPECT_FALSE(marker.begin("/m.gguf"));
}

}  // namespace
}  // namespace hearth::app
