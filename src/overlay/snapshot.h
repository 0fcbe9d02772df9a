// The copied snapshot: `--overlay --best-effort` on a host whose kernel or
// state filesystem refuses overlayfs. The real tree is copied into the run's
// directory (`<layer>/snapshot`), the sandbox binds the copy over the tree,
// and when the run ends the copy is turned into the upper layer overlayfs
// would have written, so changes, diff, apply and discard read it unchanged.
//
//   CORRAL_ASSIGN_OR_RETURN(UniqueFd layer, run.LayerDir(i));
//   CORRAL_ASSIGN_OR_RETURN(UniqueFd real, run.OpenRoot(i));
//   CORRAL_ASSIGN_OR_RETURN(Snapshot copy, Snapshot::Take(real.get(), layer.get(), masked, limits));
//   ... the sandbox binds run.LayerPath(i) + "/snapshot" (pinned to copy.id()) over the tree ...
//   CORRAL_TRY(copy.ToUpper(layer.get()));   // then ScanChanges reads upper/ as ever
//
// Take walks the real tree on pinned descriptors (each name opened with
// O_NOFOLLOW below its parent's fd, never by path, never climbing), and
// makes the copy 0700 first, each directory given its real mode only once
// filled. It copies directories, regular files (their bytes) and symlinks
// (their text, never followed). It never copies a FIFO, a socket or a
// device node, and never a set-user-ID or set-group-ID bit: a file keeps
// only its permission bits and the sticky bit. A masked path (a secret the
// run may not read) is copied as an empty placeholder of its type, mode
// 0, whose identity is returned so the mask lands on it. Past `limits`
// (bytes or entries) it stops and is refused, naming the limit.
//
// Each copied entry's (inode, ctime) is recorded; the command cannot set a
// ctime back. ToUpper then moves into upper/ every entry whose inode or
// ctime changed and every new one (a directory the run never had, whole),
// makes a whiteout (a character device 0:0, which Linux lets anyone make)
// where a copied entry is gone, keeps a directory in upper/ only where
// something below it (or its mode) changed, and removes what is left of
// the copy. Nothing in the copy is trusted: the command chose every name
// and type in it.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "base/file_identity.h"
#include "base/result.h"

namespace corral {

struct SnapshotLimits {
  uint64_t bytes = uint64_t{1} << 30;  // the regular files' bytes (1 GiB)
  uint64_t entries = 200000;
};

// The default limits; a test build (CORRAL_HOST_SIMULATION) takes
// CORRAL_TEST_SNAPSHOT_LIMIT_BYTES from the environment.
SnapshotLimits DefaultSnapshotLimits();

inline constexpr char kSnapshotDir[] = "snapshot";

class Snapshot {
 public:
  // Copies the real tree `real_root` (a pinned directory fd) into a new
  // directory kSnapshotDir in `layer_dir`. `masked`: paths relative to the
  // tree copied as empty placeholders.
  static Result<Snapshot> Take(int real_root, int layer_dir, const std::vector<std::string>& masked,
                               const SnapshotLimits& limits);

  // The copy's root (for the bind's pin).
  FileIdentity id() const { return id_; }
  // Each masked path's placeholder, by its path relative to the tree.
  const std::map<std::string, FileIdentity>& placeholders() const { return placeholders_; }
  uint64_t bytes() const { return bytes_; }
  uint64_t entries() const { return entries_; }

  // Turns the copy in `layer_dir` into the changes in its (empty) upper/,
  // then removes the copy.
  Result<void> ToUpper(int layer_dir) const;

 private:
  struct Entry {
    ino_t ino = 0;
    int64_t ctime_ns = 0;
    mode_t mode = 0;       // the copy's
    mode_t real_mode = 0;  // the real entry's
    bool placeholder = false;  // a masked path's: the command cannot reach it
  };
  class Copier;
  class Converter;
  FileIdentity id_;
  std::map<std::string, FileIdentity> placeholders_;
  // By the directory's path relative to the tree ("" for the tree), then
  // by name: what each copied entry was when the copy was made.
  std::map<std::string, std::map<std::string, Entry>> manifest_;
  uint64_t bytes_ = 0;
  uint64_t entries_ = 0;
};

}  // namespace corral
