// ViewOf: what a confined command sees at one host path, as one answer.
//
// The spawned sandbox (confine/mount_plan.cc decides each grant's bind from
// it) and the in-process file tools' fence (tools/fence.h) both ask this one
// function, so the two cannot drift apart; filesystem_view_test.cc checks
// that the mount plan and ViewOf agree on a table of paths.
//
//   kHidden     not in any grant, under a mask (an /etc secret, a credential
//               store), or matching a forbid_read pattern: the sandbox shows
//               nothing of the host's file there
//   kReadOnly   in a grant without write (every grant under read-only mode)
//   kWritable   in a writable grant, and no protected path
//   kProtected  at or below a protected path (policy/protected.h) inside a
//               writable grant: bound read-only, or swept after the run
//
// `path` must be absolute and canonical (no symlink, `.` or `..`): the fence
// resolves a path with openat2 first and asks about what it reached.
// Under danger-full-access everything is kWritable: nothing is confined.
#pragma once

#include <string_view>

#include "policy/policy.h"

namespace corral {

enum class PathView { kHidden, kReadOnly, kWritable, kProtected };

// "hidden", "read-only", "writable", "protected".
std::string_view PathViewName(PathView view);

PathView ViewOf(const Policy& policy, std::string_view path);

}  // namespace corral
