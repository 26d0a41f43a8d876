// A validator for the subset of JSON Schema (draft 2020-12) that Hearth's own
// schemas use: type, properties, required, additionalProperties (boolean),
// items, enum, pattern, minimum, maximum, minLength, minItems, local $ref
// ("#/$defs/NAME") and the extension uniqueKeys (a property whose value must
// differ across the items of an array). Any other keyword in a schema is
// reported as unsupported, so the schema cannot silently promise more than is
// checked.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace hearth::models {

// Returns one message per violation, each starting with the JSON pointer of
// the offending value ("/models/3/variants/0/url: ..."). Empty when valid.
std::vector<std::string> validate_json_schema(const nlohmann::json& schema,
                                              const nlohmann::json& instance);

}  // namespace hearth::models
