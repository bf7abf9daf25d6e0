// Helpers shared by the store's .cpp files. Each runs on a connection the
// caller already holds under Store's mutex, inside or outside a transaction.
#pragma once

#include <sqlite3.h>

#include <optional>
#include <string>

#include "base/result.h"
#include "store/store.h"

namespace o4s::store::internal {

// The scope of an existing frame (root frame's project wins), or nullopt
// when there is no such frame.
Result<std::optional<FrameScope>> lookup_frame_scope(sqlite3* db, const std::string& frame_id);

Result<std::optional<std::string>> read_setting(sqlite3* db, const std::string& key);
Status write_setting(sqlite3* db, const std::string& key, const std::string& value,
                     std::int64_t now);

}  // namespace o4s::store::internal
