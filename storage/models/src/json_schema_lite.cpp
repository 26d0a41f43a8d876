#include <hearth/models/json_schema_lite.h>

#include <fmt/format.h>

#include <regex>
#include <set>

namespace hearth::models {
namespace {

using nlohmann::json;

// Keywords that only document (title, description, ...) and need no check.
const std::set<std::string>& annotation_keywords() {
  static const std::set<std::string> kSet = {"$schema", "$id", "title", "description", "$defs",
                                             "$comment", "examples", "default"};
  return kSet;
}

bool matches_type(const json& value, const std::string& type) {
  if (type == "object") return value.is_object();
  if (type == "array") return value.is_array();
  if (type == "string") return value.is_string();
  if (type == "boolean") return value.is_boolean();
  if (type == "null") return value.is_null();
  if (type == "integer") {
    return value.is_number_integer() ||
           (value.is_number_float() && value.get<double>() == static_cast<double>(static_cast<int64_t>(value.get<double>())));
  }
  if (type == "number") return value.is_number();
  return false;
}

class Validator {
 public:
  explicit Validator(const json& root) : root_(root) {}

  void check(const json& schema, const json& value, const std::string& path) {
    if (!schema.is_object()) {
      fail(path, "schema node is not an object");
      return;
    }
    if (auto ref = schema.find("$ref"); ref != schema.end()) {
      const json* target = resolve(ref->get<std::string>());
      if (!target) {
        fail(path, fmt::format("unresolvable $ref '{}'", ref->get<std::string>()));
        return;
      }
      check(*target, value, path);
    }
    for (const auto& [key, arg] : schema.items()) {
      if (key == "$ref" || annotation_keywords().count(key)) continue;
      if (key == "type") {
        check_type(arg, value, path);
      } else if (key == "enum") {
        bool found = false;
        for (const auto& option : arg) found = found || option == value;
        if (!found) fail(path, fmt::format("value {} is not one of {}", value.dump(), arg.dump()));
      } else if (key == "required") {
        if (!value.is_object()) continue;
        for (const auto& name : arg) {
          if (!value.contains(name.get<std::string>())) {
            fail(path, fmt::format("missing required property '{}'", name.get<std::string>()));
          }
        }
      } else if (key == "properties") {
        if (!value.is_object()) continue;
        for (const auto& [name, sub] : arg.items()) {
          if (auto it = value.find(name); it != value.end()) check(sub, *it, path + "/" + name);
        }
      } else if (key == "additionalProperties") {
        if (!value.is_object() || !arg.is_boolean() || arg.get<bool>()) continue;
        const json& props = schema.contains("properties") ? schema["properties"] : json::object();
        for (const auto& [name, sub] : value.items()) {
          (void)sub;
          if (!props.contains(name)) fail(path, fmt::format("property '{}' is not allowed", name));
        }
      } else if (key == "items") {
        if (!value.is_array()) continue;
        for (size_t i = 0; i < value.size(); ++i) check(arg, value[i], fmt::format("{}/{}", path, i));
      } else if (key == "minItems") {
        if (value.is_array() && value.size() < arg.get<size_t>()) {
          fail(path, fmt::format("{} items, fewer than {}", value.size(), arg.get<size_t>()));
        }
      } else if (key == "uniqueKeys") {
        check_unique(arg.get<std::string>(), value, path);
      } else if (key == "minLength") {
        if (value.is_string() && value.get<std::string>().size() < arg.get<size_t>()) {
          fail(path, fmt::format("string shorter than {}", arg.get<size_t>()));
        }
      } else if (key == "pattern") {
        if (value.is_string() &&
            !std::regex_search(value.get<std::string>(), std::regex(arg.get<std::string>(), std::regex::ECMAScript))) {
          fail(path, fmt::format("'{}' does not match /{}/", value.get<std::string>(), arg.get<std::string>()));
        }
      } else if (key == "minimum") {
        if (value.is_number() && value.get<double>() < arg.get<double>()) {
          fail(path, fmt::format("{} is below the minimum {}", value.dump(), arg.dump()));
        }
      } else if (key == "maximum") {
        if (value.is_number() && value.get<double>() > arg.get<double>()) {
          fail(path, fmt::format("{} is above the maximum {}", value.dump(), arg.dump()));
        }
      } else {
        fail(path, fmt::format("schema keyword '{}' is not supported by this validator", key));
      }
    }
  }

  std::vector<std::string> errors;

 private:
  void fail(const std::string& path, const std::string& message) {
    errors.push_back(fmt::format("{}: {}", path.empty() ? "/" : path, message));
  }

  void check_type(const json& arg, const json& value, const std::string& path) {
    if (arg.is_string()) {
      if (!matches_type(value, arg.get<std::string>())) {
        fail(path, fmt::format("expected {}, found {}", arg.get<std::string>(), value.type_name()));
      }
      return;
    }
    for (const auto& option : arg) {
      if (matches_type(value, option.get<std::string>())) return;
    }
    fail(path, fmt::format("expected one of {}, found {}", arg.dump(), value.type_name()));
  }

  void check_unique(const std::string& key, const json& value, const std::string& path) {
    if (!value.is_array()) return;
    std::set<std::string> seen;
    for (const auto& item : value) {
      if (!item.is_object() || !item.contains(key)) continue;
      const std::string text = item[key].dump();
      if (!seen.insert(text).second) fail(path, fmt::format("'{}' = {} appears twice", key, text));
    }
  }

  const json* resolve(const std::string& ref) const {
    static const std::string kPrefix = "#/$defs/";
    if (ref.rfind(kPrefix, 0) != 0) return nullptr;
    auto defs = root_.find("$defs");
    if (defs == root_.end()) return nullptr;
    auto it = defs->find(ref.substr(kPrefix.size()));
    return it == defs->end() ? nullptr : &*it;
  }

  const json& root_;
};

}  // namespace

std::vector<std::string> validate_json_schema(const json& schema, const json& instance) {
  Validator validator(schema);
  validator.check(schema, instance, "");
  return std::move(validator.errors);
}

}  // namespace hearth::models
