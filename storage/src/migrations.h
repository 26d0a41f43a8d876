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

// Brings the database to Database::kSchemaVersion in one transaction. Refuses a
// newer schema and a non-Hearth database (tables but user_version 0).
Status migrate(DatabaseImpl& impl);

}  // namespace hearth::storage
