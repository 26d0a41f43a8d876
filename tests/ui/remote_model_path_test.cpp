// The "remote:<endpoint id>/<model id>" names of remote models: built and read
// back, model ids with slashes kept whole, local paths and malformed names refused.
#include <gtest/gtest.h>

#include "engine/remote_model_path.h"

namespace hearth::ui {
namespace {

TEST(RemoteModelPath, RoundTripsAModelIdWithSlashes) {
  const QString path = remote_model_path(QStringLiteral("6f1c2a"), QStringLiteral("meta-llama/Llama-3.1-70B"));
  EXPECT_EQ(path, QStringLiteral("remote:6f1c2a/meta-llama/Llama-3.1-70B"));
  ASSERT_TRUE(is_remote_model_path(path));
  const auto ref = parse_remote_model_path(path);
  ASSERT_TRUE(ref.has_value());
  EXPECT_EQ(ref->endpoint_id, QStringLiteral("6f1c2a"));
  EXPECT_EQ(ref->model, QStringLiteral("meta-llama/Llama-3.1-70B"));
}

TEST(RemoteModelPath, LocalPathsAndMalformedNamesAreNotRemoteModels) {
  EXPECT_FALSE(is_remote_model_path(QStringLiteral("/models/remote:x/y.gguf")));
  EXPECT_FALSE(parse_remote_model_path(QStringLiteral("/models/stories260K.gguf")).has_value());
  EXPECT_FALSE(parse_remote_model_path(QStringLiteral("remote:")).has_value());
  EXPECT_FALSE(parse_remote_model_path(QStringLiteral("remote:/model")).has_value());
  EXPECT_FALSE(parse_remote_model_path(QStringLiteral("remote:endpoint")).has_value());
  EXPECT_FALSE(parse_remote_model_path(QStringLiteral("remote:endpoint/")).has_value());
}

}  // namespace
}  // namespace hearth::ui
