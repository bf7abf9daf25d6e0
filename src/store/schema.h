// The store's schema and its migrations, tracked in PRAGMA user_version.
#pragma once

#include <sqlite3.h>

#include "base/result.h"

namespace o4s::store {

// Bump together with a new entry in schema.cpp's migration steps.
inline constexpr int kSchemaVersion = 2;

// Brings the open database to kSchemaVersion in one transaction: a fresh file
// gets the current schema directly; an older one runs each step newer than
// its user_version, then gains any table, column or index it still lacks. A
// file from a newer build is refused (kUnsupported) rather than guessed at.
Status migrate(sqlite3* db);

Result<int> user_version(sqlite3* db);

}  // namespace o4s::store
