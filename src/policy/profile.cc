#include "policy/profile.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "base/json_bytes.h"
#include "base/sha256.h"
#include "policy/path.h"
#include "policy/path_text.h"

namespace corral {
namespace {

Error ProfileError(std::string message, std::string code) {
  return Error(ErrorKind::kUsage, "profile: " + std::move(message)).WithCode(std::move(code));
}

// Sorted, without duplicates and without roots nested inside another root.
std::vector<std::string> MinimalRoots(std::vector<std::string> roots) {
  std::sort(roots.begin(), roots.end());
  roots.erase(std::unique(roots.begin(), roots.end()), roots.end());
  // An ancestor is a prefix of its descendants, so it sorts first.
  std::vector<std::string> kept;
  for (const std::string& root : roots) {
    bool covered = std::any_of(kept.begin(), kept.end(), [&](const std::string& k) { return IsWithin(root, k); });
    if (!covered) kept.push_back(root);
  }
  return kept;
}

bool CoveredBy(const std::string& path, const std::vector<std::string>& roots) {
  return std::any_of(roots.begin(), roots.end(), [&](const std::string& root) { return IsWithin(path, root); });
}

// The paths covered by both lists, as a minimal root list.
std::vector<std::string> IntersectRoots(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  std::vector<std::string> both;
  for (const std::string& x : a) {
    for (const std::string& y : b) {
      if (IsWithin(x, y)) both.push_back(x);
      else if (IsWithin(y, x)) both.push_back(y);
    }
  }
  return MinimalRoots(std::move(both));
}

Result<std::string> CanonicalRoot(const std::string& given, std::string_view field) {
  Result<std::string> canonical = CanonicalAbsolutePath(given);
  if (!canonical.ok()) {
    return ProfileError(std::string(field) + " \"" + given + "\": " + canonical.error().message(), "profile_bad_path");
  }
  return canonical;
}

Result<std::vector<std::string>> CanonicalRoots(const std::vector<std::string>& given, std::string_view field) {
  std::vector<std::string> roots;
  for (const std::string& root : given) {
    CORRAL_ASSIGN_OR_RETURN(std::string canonical, CanonicalRoot(root, field));
    roots.push_back(std::move(canonical));
  }
  return MinimalRoots(std::move(roots));
}

// Writing implies reading: refused, never raised.
Status CheckWriteWithinRead(Access3 write, Access3 read, std::string_view area) {
  if (write <= read) return Ok();
  std::string w = std::string(area) + "_write";
  std::string r = std::string(area) + "_read";
  return ProfileError(w + " = " + std::string(Access3Name(write)) + " exceeds " + r + " = " +
                          std::string(Access3Name(read)) + ": writing implies reading; raise " + r + " or lower " + w,
                      "profile_write_without_read");
}

// A host dimension above Deny needs canonical, non-empty roots.
Status CanonicalHostRoots(Access3 level, std::string_view dimension, std::vector<std::string>& roots) {
  if (level == Access3::kDeny) return Ok();
  std::string field = std::string(dimension) + "_roots";
  CORRAL_ASSIGN_OR_RETURN(roots, CanonicalRoots(roots, field));
  if (roots.empty()) {
    return ProfileError(std::string(dimension) + " = " + std::string(Access3Name(level)) + " needs at least one " +
                            field + " entry",
                        "profile_missing_roots");
  }
  return Ok();
}

// Clears what a Deny level makes irrelevant, so equal authority is equal data.
void Canonicalize(ProfileConfig& config) {
  if (config.workspace_root.empty()) config.workspace_read = config.workspace_write = Access3::kDeny;
  if (config.workspace_read == Access3::kDeny) config.workspace_root.clear();
  if (config.host_read_roots.empty()) config.host_read = Access3::kDeny;
  if (config.host_read == Access3::kDeny) config.host_read_roots.clear();
  if (config.host_write_roots.empty()) config.host_write = Access3::kDeny;
  if (config.host_write == Access3::kDeny) config.host_write_roots.clear();
  if (config.isolation == Isolation::kSandboxed) config.acknowledge_unconfined = false;
}

std::string MeetWorkspace(const std::string& a, const std::string& b) {
  if (a.empty() || b.empty()) return {};
  if (IsWithin(a, b)) return a;
  if (IsWithin(b, a)) return b;
  return {};
}

bool AllWithin(const std::vector<std::string>& narrower, const std::vector<std::string>& wider) {
  return std::all_of(narrower.begin(), narrower.end(), [&](const std::string& p) { return CoveredBy(p, wider); });
}

Error NotExpressible(std::string message) {
  return Error(ErrorKind::kPolicy, "profile: " + std::move(message)).WithCode("profile_not_expressible");
}

}  // namespace

std::string_view Access3Name(Access3 access) {
  switch (access) {
    case Access3::kDeny: return "deny";
    case Access3::kGated: return "gated";
    case Access3::kAllow: return "allow";
  }
  return "deny";
}

std::optional<Access3> ParseAccess3(std::string_view text) {
  if (text == "deny") return Access3::kDeny;
  if (text == "gated") return Access3::kGated;
  if (text == "allow") return Access3::kAllow;
  return std::nullopt;
}

std::string_view IsolationName(Isolation isolation) {
  return isolation == Isolation::kUnconfined ? "unconfined" : "sandboxed";
}

std::optional<Isolation> ParseIsolation(std::string_view text) {
  if (text == "sandboxed") return Isolation::kSandboxed;
  if (text == "unconfined") return Isolation::kUnconfined;
  return std::nullopt;
}

std::string_view DimensionName(Dimension dimension) {
  switch (dimension) {
    case Dimension::kWorkspaceRead: return "workspace_read";
    case Dimension::kWorkspaceWrite: return "workspace_write";
    case Dimension::kHostRead: return "host_read";
    case Dimension::kHostWrite: return "host_write";
    case Dimension::kNetwork: return "network";
    case Dimension::kCommand: return "command";
  }
  return "command";
}

Access3 Profile::access(Dimension dimension) const {
  switch (dimension) {
    case Dimension::kWorkspaceRead: return config_.workspace_read;
    case Dimension::kWorkspaceWrite: return config_.workspace_write;
    case Dimension::kHostRead: return config_.host_read;
    case Dimension::kHostWrite: return config_.host_write;
    case Dimension::kNetwork: return config_.network;
    case Dimension::kCommand: return config_.command;
  }
  return Access3::kDeny;
}

Result<Profile> NewProfile(const ProfileConfig& given) {
  ProfileConfig config = given;
  CORRAL_TRY(CheckWriteWithinRead(config.workspace_write, config.workspace_read, "workspace"));
  CORRAL_TRY(CheckWriteWithinRead(config.host_write, config.host_read, "host"));
  if (config.workspace_read != Access3::kDeny) {
    if (config.workspace_root.empty()) {
      return ProfileError("workspace_read = " + std::string(Access3Name(config.workspace_read)) +
                              " needs a workspace_root",
                          "profile_missing_workspace_root");
    }
    CORRAL_ASSIGN_OR_RETURN(config.workspace_root, CanonicalRoot(config.workspace_root, "workspace_root"));
  }
  CORRAL_TRY(CanonicalHostRoots(config.host_read, "host_read", config.host_read_roots));
  CORRAL_TRY(CanonicalHostRoots(config.host_write, "host_write", config.host_write_roots));
  if (config.host_write != Access3::kDeny) {
    for (const std::string& root : config.host_write_roots) {
      if (!CoveredBy(root, config.host_read_roots)) {
        return ProfileError("host_write_roots entry " + root +
                                " lies outside every host_read_roots entry: writing implies reading; add it "
                                "(or a parent) to host_read_roots",
                            "profile_write_without_read");
      }
    }
  }
  if (config.isolation == Isolation::kUnconfined && !config.acknowledge_unconfined) {
    return ProfileError("isolation = unconfined runs commands with no sandbox at all; set "
                        "acknowledge_unconfined = true to accept that, or use isolation = sandboxed",
                        "unconfined_not_acknowledged");
  }
  Canonicalize(config);
  return Profile(std::move(config));
}

Profile Restrict(const Profile& base, const Profile& ceiling) {
  const ProfileConfig& a = base.config_;
  const ProfileConfig& b = ceiling.config_;
  ProfileConfig meet;
  meet.workspace_root = MeetWorkspace(a.workspace_root, b.workspace_root);
  meet.workspace_read = std::min(a.workspace_read, b.workspace_read);
  meet.workspace_write = std::min(a.workspace_write, b.workspace_write);
  meet.host_read = std::min(a.host_read, b.host_read);
  meet.host_write = std::min(a.host_write, b.host_write);
  meet.host_read_roots = IntersectRoots(a.host_read_roots, b.host_read_roots);
  meet.host_write_roots = IntersectRoots(a.host_write_roots, b.host_write_roots);
  meet.network = std::min(a.network, b.network);
  meet.command = std::min(a.command, b.command);
  meet.home = (a.home == HomeMode::kReal && b.home == HomeMode::kReal) ? HomeMode::kReal : HomeMode::kIsolated;
  meet.isolation = (a.isolation == Isolation::kUnconfined && b.isolation == Isolation::kUnconfined)
                       ? Isolation::kUnconfined
                       : Isolation::kSandboxed;
  meet.acknowledge_unconfined = a.acknowledge_unconfined && b.acknowledge_unconfined;
  // Both inputs satisfy every NewProfile rule and each rule is preserved by
  // taking minima and intersections, so only the Deny clean-up is needed.
  Canonicalize(meet);
  return Profile(std::move(meet));
}

bool IsNarrowerOrEqual(const Profile& narrower, const Profile& wider) {
  const ProfileConfig& n = narrower.config();
  const ProfileConfig& w = wider.config();
  for (Dimension dimension : kAllDimensions) {
    if (narrower.access(dimension) > wider.access(dimension)) return false;
  }
  if (n.home == HomeMode::kReal && w.home != HomeMode::kReal) return false;
  if (n.isolation == Isolation::kUnconfined && w.isolation != Isolation::kUnconfined) return false;
  if (!n.workspace_root.empty() && (w.workspace_root.empty() || !IsWithin(n.workspace_root, w.workspace_root))) {
    return false;
  }
  return AllWithin(n.host_read_roots, w.host_read_roots) && AllWithin(n.host_write_roots, w.host_write_roots);
}

std::string CanonicalProfileJson(const Profile& profile) {
  const ProfileConfig& c = profile.config();
  nlohmann::json json = nlohmann::json::object();
  json["version"] = 1;
  for (Dimension dimension : kAllDimensions) {
    json[std::string(DimensionName(dimension))] = Access3Name(profile.access(dimension));
  }
  json["workspace_root"] = c.workspace_root;
  json["home"] = HomeModeName(c.home);
  json["isolation"] = IsolationName(c.isolation);
  json["acknowledge_unconfined"] = c.acknowledge_unconfined;
  json["host_read_roots"] = c.host_read_roots;
  json["host_write_roots"] = c.host_write_roots;
  return EncodeBytes(json).dump();  // exact, whatever the bytes (json_bytes.h)
}

std::string Fingerprint(const Profile& profile) { return Sha256Hex(CanonicalProfileJson(profile)); }

Result<ProfileSpec> ToPolicySpec(const Profile& profile) {
  const ProfileConfig& c = profile.config();
  if (c.command == Access3::kDeny) {
    return Error(ErrorKind::kPolicy, "profile: command = deny: this profile admits no child process at all")
        .WithCode("command_denied");
  }
  ProfileSpec out;
  PolicySpec& spec = out.spec;
  for (Dimension dimension : kAllDimensions) {
    if (profile.access(dimension) == Access3::kGated) out.gated.push_back(dimension);
  }
  auto above_deny = [&](Dimension dimension) { return profile.access(dimension) != Access3::kDeny; };
  if (c.isolation == Isolation::kUnconfined) {
    for (Dimension dimension : kAllDimensions) {
      if (!above_deny(dimension)) {
        return NotExpressible("isolation = unconfined runs the command with no sandbox, so " +
                              std::string(DimensionName(dimension)) +
                              " = deny cannot be enforced; allow (or gate) every dimension, or use "
                              "isolation = sandboxed");
      }
    }
    spec.mode = Mode::kDangerFullAccess;
    spec.acknowledge_danger = true;
  } else if (above_deny(Dimension::kWorkspaceWrite) || above_deny(Dimension::kHostWrite)) {
    if (above_deny(Dimension::kWorkspaceRead) && !above_deny(Dimension::kWorkspaceWrite)) {
      return NotExpressible(
          "a read-only workspace with host_write above deny cannot be expressed: read-only mode would also "
          "drop the host writes, and the workspace may not be widened. Deny the workspace, or allow "
          "workspace_write too");
    }
    spec.mode = Mode::kWorkspaceWrite;
  } else {
    spec.mode = Mode::kReadOnly;
  }
  if (above_deny(Dimension::kWorkspaceRead)) {
    spec.workspace = c.workspace_root;
  } else {
    spec.no_workspace = true;
  }
  if (above_deny(Dimension::kHostRead)) spec.allow_read = c.host_read_roots;
  if (above_deny(Dimension::kHostWrite)) spec.allow_write = c.host_write_roots;
  spec.network = above_deny(Dimension::kNetwork) ? NetworkMode::kAll : NetworkMode::kNone;
  spec.home = c.home;
  return out;
}

}  // namespace corral
