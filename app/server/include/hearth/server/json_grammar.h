// response_format json_object / json_schema: grammar-constrained sampling.
// The schema (a subset of JSON Schema, listed in docs/server.md) compiles to
// a small tree of nodes; a character-level pushdown recognizer follows the
// output, and before each draw every token whose text would leave the
// grammar is masked out. End-of-generation is allowed only once the root
// object is closed, and nothing but it may follow.
#pragma once

#include <hearth/engine/tokenizer/tokenizer.h>
#include <hearth/server/backend.h>
#include <hearth/server/openai_request.h>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <variant>
#include <vector>

namespace hearth::server {

// One node of a compiled schema.
struct SchemaNode {
  enum Type : unsigned { Object = 1, Array = 2, String = 4, Number = 8, Integer = 16, Boolean = 32, Null = 64 };
  static constexpr unsigned kAny = 127;
  unsigned types = kAny;
  // Objects: with properties, only these keys, each at most once, the
  // required ones before '}'; without, any keys with any values.
  bool closed = false;
  std::vector<std::string> keys;
  std::vector<int> key_nodes;
  std::vector<bool> required;
  // Arrays.
  int items = -1;  // -1: any values
  int64_t min_items = 0;
  int64_t max_items = INT64_MAX;
  // Strings: when non-empty, the string must be one of these.
  std::vector<std::string> enum_strings;
};

struct JsonGrammar {
  std::vector<SchemaNode> nodes;  // nodes[0] is the root
};

// json_object: any JSON object. json_schema: the schema's subset; an
// unsupported keyword or shape is an ApiError naming it.
std::variant<JsonGrammar, ApiError> compile_grammar(ResponseFormat format, const nlohmann::json& schema);

// The recognizer: feeds text, says whether it still fits and whether it is
// a complete document. Copyable, so a mask can try every token from one state.
class JsonRecognizer {
 public:
  explicit JsonRecognizer(std::shared_ptr<const JsonGrammar> grammar);
  bool feed(std::string_view text);  // false (state unspecified) when the text leaves the grammar
  bool complete() const;

  // One open construct. Objects and arrays wait in a phase; strings,
  // numbers and literals collect their characters.
  struct Frame {
    enum class Kind { Value, Object, Array, String, Key, Number, Literal } kind = Kind::Value;
    int node = -1;       // -1: any value
    int phase = 0;       // Object / Array / Number / String escape state
    std::string text;    // String, Key, Number: characters so far; Literal: what is left to type
    std::vector<bool> seen;  // closed objects: keys given
    int64_t count = 0;       // arrays: items; objects: the key being read (index) or -1
  };

 private:
  bool feed_char(char c);
  std::shared_ptr<const JsonGrammar> grammar_;
  std::vector<Frame> stack_;
  bool done_ = false;
  int whitespace_run_ = 0;
  int newline_in_gap_ = 0;
};

std::variant<std::unique_ptr<TokenConstraint>, ApiError> make_json_constraint(ResponseFormat format,
                                                                             const nlohmann::json& schema,
                                                                             const tokenizer::Tokenizer& tokenizer);

}  // namespace hearth::server
