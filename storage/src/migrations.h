// Internal: the schema, as an ordered list of migrations. Migration N takes a
// database from user_version N-1 to N. Released migrations are never edited; a
// schema change is a new migration appended here (and a fixture database of the
// previous version under tests/data/storage/).
#pragma once

#include <span>

#include "database_impl.h"

namespace hearth::storage {

struct Migration {
  int version;      // user_version after this migration
  const char* sql;  // constant DDL, run as one script
};

std::span<const Migration> migrations();

// Reads user_version into impl.report and refuses, before anything is written, a
// newer schema, a non-Hearth database (tables but user_version 0) and, for a
// read-only connection, a schema that needs migrating.
Status check_schema(DatabaseImpl& impl);
// Brings the database from the version check_schema found to
// Database::kSchemaVersion in one transaction.
Status migrate(DatabaseImpl& impl);

}  // namespace hearth::storage
