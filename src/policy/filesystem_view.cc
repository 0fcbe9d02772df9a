#include "policy/filesystem_view.h"

#include <string>

#include "policy/forbid.h"

namespace corral {
namespace {

// A forbid_read pattern matches the path or one of its ancestors.
bool Forbidden(const Policy& policy, std::string_view path) {
  if (policy.forbid_patterns().empty()) return false;
  std::string prefix(path);
  while (!prefix.empty()) {
    for (const std::string& pattern : policy.forbid_patterns()) {
      if (MatchesForbidPattern(pattern, prefix)) return true;
    }
    size_t slash = prefix.rfind('/');
    if (slash == 0 || slash == std::string::npos) break;
    prefix.resize(slash);
  }
  return false;
}

}  // namespace

std::string_view PathViewName(PathView view) {
  switch (view) {
    case PathView::kHidden: return "hidden";
    case PathView::kReadOnly: return "read-only";
    case PathView::kWritable: return "writable";
    case PathView::kProtected: return "protected";
  }
  return "hidden";
}

PathView ViewOf(const Policy& policy, std::string_view path) {
  if (policy.unconfined()) return PathView::kWritable;
  for (const MaskedPath& mask : policy.masks()) {
    if (IsWithin(path, mask.path)) return PathView::kHidden;
  }
  if (Forbidden(policy, path)) return PathView::kHidden;
  const PathGrant* grant = policy.GrantFor(path);
  if (grant == nullptr || !Has(grant->access, Access::kRead)) return PathView::kHidden;
  if (!Has(grant->access, Access::kWrite)) return PathView::kReadOnly;
  for (const ProtectedPath& entry : policy.protected_paths().paths) {
    if (IsWithin(path, entry.path)) return PathView::kProtected;
  }
  return PathView::kWritable;
}

}  // namespace corral
