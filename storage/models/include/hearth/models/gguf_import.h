// Adds a local .gguf to the picker: reads the file's header for the same
// fields the catalog gives (architecture, shape, context length, parameter
// count, quant) so the memory fit works for it too.
#pragma once

#include <hearth/models/catalog.h>

#include <hearth/core/result.h>

#include <filesystem>

namespace hearth::models {

// A one-variant CatalogModel describing the file. Errors name the file and
// the metadata key at fault.
Result<CatalogModel> describe_gguf(const std::filesystem::path& path);

}  // namespace hearth::models
