// The schema validator on small hand-written schemas.
#include <hearth/models/json_schema_lite.h>

#include <gtest/gtest.h>

namespace hearth::models {
namespace {

using nlohmann::json;

TEST(JsonSchemaLite, TypesRequiredAndNesting) {
  const json schema = json::parse(R"({
    "type": "object", "required": ["a"], "additionalProperties": false,
    "properties": {
      "a": {"type": "integer", "minimum": 1, "maximum": 3},
      "b": {"type": ["string", "null"], "pattern": "^x+$"},
      "c": {"type": "array", "minItems": 2, "items": {"$ref": "#/$defs/item"}, "uniqueKeys": "k"}
    },
    "$defs": {"item": {"type": "object", "properties": {"k": {"enum": ["p", "q"]}}}}
  })");
  EXPECT_TRUE(validate_json_schema(schema, json::parse(R"({"a": 2})")).empty());
  EXPECT_TRUE(validate_json_schema(schema, json::parse(R"({"a": 2, "b": null})")).empty());
  EXPECT_TRUE(validate_json_schema(schema, json::parse(R"({"a": 2, "b": "xx", "c": [{"k": "p"}, {"k": "q"}]})")).empty());
  EXPECT_EQ(validate_json_schema(schema, json::parse(R"({})")).size(), 1u);
  EXPECT_EQ(validate_json_schema(schema, json::parse(R"({"a": 2.5})")).size(), 1u);
  EXPECT_EQ(validate_json_schema(schema, json::parse(R"({"a": 4})")).size(), 1u);
  EXPECT_EQ(validate_json_schema(schema, json::parse(R"({"a": 0})")).size(), 1u);
  EXPECT_EQ(validate_json_schema(schema, json::parse(R"({"a": 1, "b": "y"})")).size(), 1u);
  EXPECT_EQ(validate_json_schema(schema, json::parse(R"({"a": 1, "z": 0})")).size(), 1u);
  EXPECT_EQ(validate_json_schema(schema, json::parse(R"({"a": 1, "c": [{"k": "p"}]})")).size(), 1u);
  EXPECT_EQ(validate_json_schema(schema, json::parse(R"({"a": 1, "c": [{"k": "p"}, {"k": "p"}]})")).size(), 1u);
  const auto errors = validate_json_schema(schema, json::parse(R"({"a": 1, "c": [{"k": "p"}, {"k": "r"}]})"));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].rfind("/c/1/k:", 0), 0u) << errors[0];
}

TEST(JsonSchemaLite, UnsupportedKeywordsAreReportedNotIgnored) {
  const json schema = json::parse(R"({"type": "object", "oneOf": []})");
  const auto errors = validate_json_schema(schema, json::object());
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("oneOf"), std::string::npos);
}

}  // namespace
}  // namespace hearth::models
