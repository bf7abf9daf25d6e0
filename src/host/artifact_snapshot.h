// An artifact's bytes kept in the host's content store: one file per
// distinct content (named by its SHA-256), copied with its holes kept, within
// a byte limit. The cell decides what a file holds, so nothing it writes may
// cost the host more than the limit says.
#pragma once

#include <cstdint>
#include <string>

#include "base/result.h"

namespace o4s::host {

struct StagedSnapshot {
  std::string staged_path;  // a private file in the store; unlinked unless committed
  std::string checksum;     // hex SHA-256 of the logical bytes
  std::int64_t size_bytes = 0;
};

// Copies the open file (borrowed fd, read from offset 0) into a staging file
// under `objects_dir`, data segments only where the filesystem reports holes
// (SEEK_DATA/SEEK_HOLE), hashing every logical byte. More than `max_bytes`
// (the file's size, or what a growing file turns out to hold) is a
// kInvalidArgument naming the limit; nothing is left behind.
Result<StagedSnapshot> stage_snapshot(int from_fd, const std::string& objects_dir,
                                      const std::string& label, std::int64_t max_bytes);

// Moves a staged copy to its content address, or drops it when those bytes
// are already stored; returns the object's path either way.
Result<std::string> commit_snapshot(const StagedSnapshot& staged, const std::string& objects_dir);

// Unlinks a staged copy that will not be committed.
void discard_snapshot(const StagedSnapshot& staged);

}  // namespace o4s::host
