#include <hearth/server/json_grammar.h>

#include <fmt/format.h>

#include <algorithm>

namespace hearth::server {
namespace {

using Frame = JsonRecognizer::Frame;
using Kind = Frame::Kind;

constexpr size_t kMaxSchemaNodes = 512;
constexpr int kMaxSchemaDepth = 16;
constexpr size_t kMaxStackDepth = 64;       // nesting of generated values
constexpr int kMaxWhitespaceRun = 16;
constexpr size_t kMaxNumberChars = 32;

// Object phases.
enum ObjectPhase { kObjOpen, kObjAfterKey, kObjAfterValue, kObjAfterComma };
// Array phases.
enum ArrayPhase { kArrOpen, kArrAfterValue, kArrAfterComma };

ApiError schema_error(const std::string& where, std::string message) {
  ApiError e;
  e.message = fmt::format("response_format.json_schema.schema{}: {}", where, message);
  e.param = "response_format";
  return e;
}

// Keywords that describe without constraining; everything else unknown is refused.
bool descriptive(const std::string& key) {
  static const char* const kKeys[] = {"title", "description", "$schema", "$id", "default", "examples", "$comment",
                                      "format", "strict", "name"};
  return std::any_of(std::begin(kKeys), std::end(kKeys), [&](const char* k) { return key == k; });
}

unsigned type_bit(const std::string& t) {
  if (t == "object") return SchemaNode::Object;
  if (t == "array") return SchemaNode::Array;
  if (t == "string") return SchemaNode::String;
  if (t == "number") return SchemaNode::Number | SchemaNode::Integer;
  if (t == "integer") return SchemaNode::Integer;
  if (t == "boolean") return SchemaNode::Boolean;
  if (t == "null") return SchemaNode::Null;
  return 0;
}

std::optional<ApiError> compile_node(const nlohmann::json& s, const std::string& where, int depth, JsonGrammar& g,
                                     int& out) {
  if (depth > kMaxSchemaDepth) return schema_error(where, fmt::format("nested deeper than {}", kMaxSchemaDepth));
  if (g.nodes.size() >= kMaxSchemaNodes) return schema_error(where, fmt::format("more than {} schemas", kMaxSchemaNodes));
  if (!s.is_object()) return schema_error(where, "a schema must be an object");
  out = static_cast<int>(g.nodes.size());
  g.nodes.emplace_back();
  for (const auto& [key, value] : s.items()) {
    if (descriptive(key) || key == "type" || key == "properties" || key == "required" || key == "items" ||
        key == "minItems" || key == "maxItems" || key == "enum" || key == "const" || key == "additionalProperties") {
      continue;
    }
    return schema_error(where, fmt::format("the keyword '{}' is not supported (see the server's JSON-schema subset)", key));
  }
  SchemaNode node;
  if (auto t = s.find("type"); t != s.end()) {
    node.types = 0;
    std::vector<nlohmann::json> list = t->is_array() ? t->get<std::vector<nlohmann::json>>() : std::vector<nlohmann::json>{*t};
    for (const auto& one : list) {
      const unsigned bit = one.is_string() ? type_bit(one.get<std::string>()) : 0;
      if (bit == 0) return schema_error(where + ".type", fmt::format("'{}' is not a JSON type", one.dump()));
      node.types |= bit;
    }
  }
  std::vector<nlohmann::json> enums;
  if (auto e = s.find("enum"); e != s.end()) {
    if (!e->is_array() || e->empty()) return schema_error(where + ".enum", "must be a non-empty array");
    enums = e->get<std::vector<nlohmann::json>>();
  }
  if (auto c = s.find("const"); c != s.end()) enums = {*c};
  for (const auto& v : enums) {
    if (!v.is_string()) return schema_error(where + ".enum", "only string values are supported in enum and const");
    const std::string text = v.get<std::string>();
    if (text.find_first_of("\"\\") != std::string::npos ||
        std::any_of(text.begin(), text.end(), [](char ch) { return static_cast<unsigned char>(ch) < 0x20; })) {
      return schema_error(where + ".enum", "enum strings with quotes, backslashes or control characters are not supported");
    }
    node.enum_strings.push_back(text);
  }
  if (!enums.empty()) node.types = SchemaNode::String;
  if (auto p = s.find("properties"); p != s.end()) {
    if (!p->is_object()) return schema_error(where + ".properties", "must be an object");
    if (auto ap = s.find("additionalProperties"); ap != s.end() && !(ap->is_boolean() && !ap->get<bool>())) {
      return schema_error(where + ".additionalProperties", "only false is supported next to properties");
    }
    node.closed = true;
    for (const auto& [key, sub] : p->items()) {
      if (key.empty() || key.find_first_of("\"\\") != std::string::npos) {
        return schema_error(where + ".properties", fmt::format("the property name '{}' is not supported", key));
      }
      int child = -1;
      if (auto err = compile_node(sub, where + ".properties." + key, depth + 1, g, child)) return err;
      node.keys.push_back(key);
      node.key_nodes.push_back(child);
    }
    node.required.assign(node.keys.size(), false);
    if (auto r = s.find("required"); r != s.end()) {
      if (!r->is_array()) return schema_error(where + ".required", "must be an array of property names");
      for (const auto& name : *r) {
        auto it = name.is_string() ? std::find(node.keys.begin(), node.keys.end(), name.get<std::string>()) : node.keys.end();
        if (it == node.keys.end()) return schema_error(where + ".required", fmt::format("{} is not a listed property", name.dump()));
        node.required[static_cast<size_t>(it - node.keys.begin())] = true;
      }
    }
  } else if (s.contains("required")) {
    return schema_error(where + ".required", "needs 'properties'");
  }
  if (auto it = s.find("items"); it != s.end()) {
    int child = -1;
    if (auto err = compile_node(*it, where + ".items", depth + 1, g, child)) return err;
    node.items = child;
  }
  for (const char* k : {"minItems", "maxItems"}) {
    if (auto it = s.find(k); it != s.end()) {
      if (!it->is_number_unsigned()) return schema_error(where + "." + k, "must be a non-negative integer");
      (std::string(k) == "minItems" ? node.min_items : node.max_items) = static_cast<int64_t>(it->get<uint64_t>());
    }
  }
  if (node.min_items > node.max_items) return schema_error(where, "minItems is larger than maxItems");
  g.nodes[static_cast<size_t>(out)] = std::move(node);
  return std::nullopt;
}

bool is_ws(char c) { return c == ' ' || c == '\n' || c == '\t' || c == '\r'; }

}  // namespace

std::variant<JsonGrammar, ApiError> compile_grammar(ResponseFormat format, const nlohmann::json& schema) {
  JsonGrammar g;
  if (format == ResponseFormat::JsonObject) {
    SchemaNode root;
    root.types = SchemaNode::Object;
    g.nodes.push_back(root);
    return g;
  }
  int root = -1;
  if (auto err = compile_node(schema, "", 0, g, root)) return *err;
  if (g.nodes[0].types != SchemaNode::Object) return schema_error("", "the root schema must be of type object");
  return g;
}

JsonRecognizer::JsonRecognizer(std::shared_ptr<const JsonGrammar> grammar) : grammar_(std::move(grammar)) {
  Frame root;
  root.kind = Kind::Value;
  root.node = 0;
  stack_.push_back(root);
}

bool JsonRecognizer::complete() const { return done_; }

bool JsonRecognizer::feed(std::string_view text) {
  for (char c : text) {
    if (!feed_char(c)) return false;
  }
  return true;
}

// One character. A frame that ends without consuming it (a number meets its
// delimiter) pops and the parent sees the same character.
bool JsonRecognizer::feed_char(char c) {
  // Between two tokens of JSON: at most one line break and a bounded run,
  // as a pretty-printer writes; a model cannot pad forever.
  if (is_ws(c)) {
    if (++whitespace_run_ > kMaxWhitespaceRun) return false;
    if (c == '\n' && newline_in_gap_++ > 0) return false;
  } else {
    whitespace_run_ = 0;
    newline_in_gap_ = 0;
  }
  if (done_) return false;  // after the root closes only end-of-generation may come
  const auto& nodes = grammar_->nodes;
  auto node_of = [&](int n) -> const SchemaNode* { return n < 0 ? nullptr : &nodes[static_cast<size_t>(n)]; };
  auto allows = [&](int n, unsigned bit) { return n < 0 || (nodes[static_cast<size_t>(n)].types & bit) != 0; };
  // A value ended: the parent moves on (or the document is done).
  auto pop = [&] {
    stack_.pop_back();
    if (stack_.empty()) done_ = true;
  };
  while (true) {
    if (stack_.empty()) return false;
    Frame& f = stack_.back();
    switch (f.kind) {
      case Kind::Value: {
        if (is_ws(c)) return true;
        const int n = f.node;
        if (stack_.size() > kMaxStackDepth) return false;
        if (c == '{' && allows(n, SchemaNode::Object)) {
          f.kind = Kind::Object;
          f.phase = kObjOpen;
          if (const auto* sn = node_of(n); sn && sn->closed) f.seen.assign(sn->keys.size(), false);
          return true;
        }
        if (c == '[' && allows(n, SchemaNode::Array)) {
          f.kind = Kind::Array;
          f.phase = kArrOpen;
          f.count = 0;
          return true;
        }
        if (c == '"' && allows(n, SchemaNode::String)) {
          f.kind = Kind::String;
          f.phase = 0;
          return true;
        }
        if ((c == '-' || (c >= '0' && c <= '9')) && allows(n, SchemaNode::Integer)) {
          f.kind = Kind::Number;
          f.text.assign(1, c);
          return true;
        }
        const char* literal = c == 't' ? "rue" : c == 'f' ? "alse" : c == 'n' ? "ull" : nullptr;
        const unsigned bit = c == 'n' ? SchemaNode::Null : SchemaNode::Boolean;
        if (literal != nullptr && allows(n, bit)) {
          f.kind = Kind::Literal;
          f.text = literal;
          return true;
        }
        return false;
      }
      case Kind::Literal:
        if (f.text.empty() || c != f.text.front()) return false;
        f.text.erase(0, 1);
        if (f.text.empty()) pop();
        return true;
      case Kind::Number: {
        // Phases by the last character class: digits, '.', 'e', sign of exponent.
        const SchemaNode* sn = node_of(f.node);
        const bool integer_only = sn != nullptr && (sn->types & SchemaNode::Number) == 0;
        const std::string& t = f.text;
        const char last = t.back();
        const bool has_dot = t.find('.') != std::string::npos;
        const bool has_exp = t.find_first_of("eE") != std::string::npos;
        const bool leading_zero = (t == "0" || t == "-0");
        if (t.size() >= kMaxNumberChars) return false;
        if (c >= '0' && c <= '9') {
          if (leading_zero) return false;  // no "01"
          f.text.push_back(c);
          return true;
        }
        const bool complete_number = last >= '0' && last <= '9';
        if (c == '.' && !integer_only && !has_dot && !has_exp && complete_number) {
          f.text.push_back(c);
          return true;
        }
        if ((c == 'e' || c == 'E') && !integer_only && !has_exp && complete_number) {
          f.text.push_back(c);
          return true;
        }
        if ((c == '-' || c == '+') && (last == 'e' || last == 'E')) {
          f.text.push_back(c);
          return true;
        }
        if (!complete_number) return false;
        pop();
        continue;  // the delimiter goes to the parent
      }
      case Kind::String:
      case Kind::Key: {
        if (f.phase == 1) {  // after a backslash
          if (f.kind == Kind::Key || std::string_view("\"\\/bfnrtu").find(c) == std::string_view::npos) return false;
          f.phase = c == 'u' ? 2 : 0;
          return true;
        }
        if (f.phase >= 2) {  // \uXXXX digits
          if (!std::isxdigit(static_cast<unsigned char>(c))) return false;
          f.phase = f.phase == 5 ? 0 : f.phase + 1;
          return true;
        }
        if (static_cast<unsigned char>(c) < 0x20) return false;
        // Enum strings and the keys of a closed object: the text must stay a
        // prefix of an allowed value (and equal one at the closing quote).
        const std::vector<std::string>* allowed = nullptr;
        std::vector<std::string> open_keys;
        if (f.kind == Kind::Key) {
          const Frame& obj = stack_[stack_.size() - 2];
          if (const auto* on = node_of(obj.node); on && on->closed) {
            for (size_t i = 0; i < on->keys.size(); ++i) {
              if (!obj.seen[i]) open_keys.push_back(on->keys[i]);
            }
            allowed = &open_keys;
          }
        } else if (const auto* sn = node_of(f.node); sn && !sn->enum_strings.empty()) {
          allowed = &sn->enum_strings;
        }
        if (c == '"') {
          if (allowed != nullptr && std::find(allowed->begin(), allowed->end(), f.text) == allowed->end()) return false;
          if (f.kind == Kind::Key) {
            Frame& obj = stack_[stack_.size() - 2];
            if (const auto* on = node_of(obj.node); on && on->closed) {
              const auto idx = std::find(on->keys.begin(), on->keys.end(), f.text) - on->keys.begin();
              obj.seen[static_cast<size_t>(idx)] = true;
              obj.count = idx;
            } else {
              obj.count = -1;
            }
            stack_.pop_back();
          } else {
            pop();
          }
          return true;
        }
        if (c == '\\') {
          if (allowed != nullptr) return false;
          f.phase = 1;
          return true;
        }
        f.text.push_back(c);
        if (allowed != nullptr) {
          const bool prefix = std::any_of(allowed->begin(), allowed->end(),
                                          [&](const std::string& a) { return a.compare(0, f.text.size(), f.text) == 0; });
          if (!prefix) return false;
        } else if (f.text.size() > 4096) {
          f.text.erase(0, 2048);  // only enum and key strings need their text
        }
        return true;
      }
      case Kind::Object: {
        if (is_ws(c)) return true;
        const SchemaNode* sn = node_of(f.node);
        const bool closed = sn != nullptr && sn->closed;
        auto all_required = [&] {
          if (!closed) return true;
          for (size_t i = 0; i < sn->keys.size(); ++i) {
            if (sn->required[i] && !f.seen[i]) return false;
          }
          return true;
        };
        auto any_left = [&] { return !closed || std::find(f.seen.begin(), f.seen.end(), false) != f.seen.end(); };
        switch (f.phase) {
          case kObjOpen:
          case kObjAfterComma:
            if (c == '}' && f.phase == kObjOpen && all_required()) {
              pop();
              return true;
            }
            if (c != '"' || !any_left()) return false;
            f.phase = kObjAfterKey;
            stack_.push_back(Frame{Kind::Key, -1, 0, {}, {}, 0});
            return true;
          case kObjAfterKey: {
            if (c != ':') return false;
            f.phase = kObjAfterValue;
            const int child = closed && f.count >= 0 ? sn->key_nodes[static_cast<size_t>(f.count)] : -1;
            stack_.push_back(Frame{Kind::Value, child, 0, {}, {}, 0});
            return true;
          }
          case kObjAfterValue:
            if (c == ',' && any_left()) {
              f.phase = kObjAfterComma;
              return true;
            }
            if (c == '}' && all_required()) {
              pop();
              return true;
            }
            return false;
          default:
            return false;
        }
      }
      case Kind::Array: {
        if (is_ws(c)) return true;
        const SchemaNode* sn = node_of(f.node);
        const int64_t min = sn ? sn->min_items : 0;
        const int64_t max = sn ? sn->max_items : INT64_MAX;
        const int item = sn ? sn->items : -1;
        if (c == ']' && f.phase != kArrAfterComma && f.count >= min) {
          pop();
          return true;
        }
        if (f.phase == kArrAfterValue) {
          if (c != ',' || f.count >= max) return false;
          f.phase = kArrAfterComma;
          return true;
        }
        if (f.count >= max) return false;
        ++f.count;
        f.phase = kArrAfterValue;
        stack_.push_back(Frame{Kind::Value, item, 0, {}, {}, 0});
        continue;  // the value's first character
      }
    }
  }
}

namespace {

class JsonConstraint final : public TokenConstraint {
 public:
  JsonConstraint(std::shared_ptr<const JsonGrammar> grammar, const tokenizer::Tokenizer& tokenizer)
      : state_(std::move(grammar)) {
    const auto n = static_cast<int32_t>(tokenizer.vocab().size());
    pieces_.reserve(static_cast<size_t>(n));
    for (int32_t t = 0; t < n; ++t) pieces_.push_back(tokenizer.token_to_piece(t));
  }

  void mask(std::vector<bool>& allowed, const std::vector<int32_t>& end_of_generation) const override {
    const size_t n = std::min(allowed.size(), pieces_.size());
    for (size_t t = 0; t < allowed.size(); ++t) {
      if (t >= n || pieces_[t].empty()) {
        allowed[t] = false;  // control tokens and empty pieces would never advance the grammar
        continue;
      }
      JsonRecognizer trial = state_;
      allowed[t] = trial.feed(pieces_[t]);
    }
    for (int32_t e : end_of_generation) {
      if (e >= 0 && static_cast<size_t>(e) < allowed.size()) allowed[static_cast<size_t>(e)] = state_.complete();
    }
  }
  void accept(int32_t token) override {
    if (token >= 0 && static_cast<size_t>(token) < pieces_.size()) state_.feed(pieces_[static_cast<size_t>(token)]);
  }
  bool complete() const override { return state_.complete(); }

 private:
  JsonRecognizer state_;
  std::vector<std::string> pieces_;
};

}  // namespace

std::variant<std::unique_ptr<TokenConstraint>, ApiError> make_json_constraint(ResponseFormat format,
                                                                             const nlohmann::json& schema,
                                                                             const tokenizer::Tokenizer& tokenizer) {
  auto compiled = compile_grammar(format, schema);
  if (auto* e = std::get_if<ApiError>(&compiled)) return *e;
  auto grammar = std::make_shared<const JsonGrammar>(std::move(std::get<JsonGrammar>(compiled)));
  return std::unique_ptr<TokenConstraint>(std::make_unique<JsonConstraint>(grammar, tokenizer));
}

}  // namespace hearth::server
