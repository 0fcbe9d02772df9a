// AbsentNames: one listing of a directory that proves many names absent.
//
// Discovery and the sweep look for dozens of fixed names (.bashrc, .vscode,
// lefthook.yml, ...) directly under each writable root, and nearly all of
// them are absent. One getdents64 pass over the root answers "certainly
// absent" for all of them at once, where a stat each costs a path walk each.
//
// Contract: AbsentNames::Read(dir) lists "." beneath the descriptor `dir`
// (an O_PATH one too; nothing is resolved by path). CertainlyAbsent(name)
// is true only when the listing proves that a lookup of `name` there would
// have found nothing at the time of the listing:
//   - the directory was read to its end, within kMaxListingBytes of
//     entries (about 2,000 names; a larger one costs more to list than the
//     lookups it saves, and is not read when its size already says so);
//   - it lies on a local filesystem whose listing and lookups agree
//     (ext2/3/4, xfs, btrfs, tmpfs, overlayfs, f2fs, bcachefs); a network or
//     FUSE filesystem may list from a stale cache, and is never trusted;
//   - no entry equals `name` ignoring ASCII case (a case-insensitive
//     directory finds ".GIT" for ".git"), and no entry has a byte outside
//     ASCII (Unicode case folding maps some, like the Kelvin sign, onto
//     ASCII letters).
// Otherwise it is false, and the caller looks the name up as before: the
// listing only ever saves a lookup, never decides that something exists.
// A listing is a snapshot, as each lookup it replaces was; callers that
// race other runs keep their own checks on what they do find.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace corral {

class AbsentNames {
 public:
  static constexpr size_t kMaxListingBytes = 64 * 1024;

  // A listing that proves nothing: every name is looked up.
  AbsentNames() = default;
  static AbsentNames Read(int dir);

  bool CertainlyAbsent(std::string_view name) const;
  // Whether the listing can prove anything at all.
  bool complete() const { return complete_; }

 private:
  bool complete_ = false;
  std::vector<std::string> folded_;  // every entry's name, ASCII lower-cased, sorted
};

}  // namespace corral
