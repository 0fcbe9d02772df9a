#include "policy/policy_file.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "base/json_bytes.h"
#include "base/mutant.h"
#include "base/replace_file.h"
#include "base/sha256.h"
#include "base/unique_fd.h"
#include "policy/spec_json.h"

namespace corral {
namespace {

constexpr const char* kFormat = "corral-compiled-policy/2";

Error Refused(const std::string& why) {
  return Error(ErrorKind::kPolicy, "compiled policy: " + why + "; the command was not run");
}

Result<Policy> LoadPolicyFileUnchecked(const std::string& text, const std::vector<std::string>& argv,
                                       const HostContext& here);

}  // namespace

std::string CanonicalCommand(std::span<const std::string> argv) {
  std::string text;
  for (const std::string& arg : argv) {
    text += std::to_string(arg.size());
    text += ':';
    text += arg;
  }
  return text;
}

std::string ArgvDigest(const std::vector<std::string>& argv) { return Sha256Hex(CanonicalCommand(argv)); }

std::string SerializePolicyFile(const Policy& policy, const std::vector<std::string>& argv) {
  nlohmann::json out;
  out["format"] = kFormat;
  out["fingerprint"] = policy.fingerprint();
  out["command_sha256"] = ArgvDigest(argv);
  const HostContext& host = policy.host();
  out["host"] = {{"cwd", host.cwd},       {"home", host.home}, {"passwd_home", host.passwd_home},
                 {"uid", host.uid},       {"gid", host.gid}};
  out["spec"] = SpecToJson(policy.spec());
  nlohmann::json pins = nlohmann::json::array();
  for (const PathGrant& grant : policy.grants()) {
    pins.push_back({{"path", grant.path.path},
                    {"dev", static_cast<uint64_t>(grant.path.id.dev)},
                    {"ino", static_cast<uint64_t>(grant.path.id.ino)}});
  }
  out["pins"] = std::move(pins);
  // Paths are bytes: a name that is not UTF-8 is kept exactly (json_bytes.h).
  return EncodeBytes(out).dump(2) + "\n";
}

Result<Policy> LoadPolicyFile(const std::string& text, const std::vector<std::string>& argv, const HostContext& here) {
  try {
    return LoadPolicyFileUnchecked(text, argv, here);
  } catch (const nlohmann::json::exception&) {
    return Refused("malformed: a field has the wrong type");
  }
}

namespace {

Result<Policy> LoadPolicyFileUnchecked(const std::string& text, const std::vector<std::string>& argv,
                                       const HostContext& here) {
  nlohmann::json parsed = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded() || !parsed.is_object()) return Refused("not valid JSON");
  nlohmann::json in = DecodeBytes(parsed);
  if (in.value("format", "") != kFormat) return Refused("unknown format (expected " + std::string(kFormat) + ")");
  // The approval gate judged one command when `corral wrap` wrote this file.
  if ((!in["command_sha256"].is_string() || in["command_sha256"].get<std::string>() != ArgvDigest(argv)) &&
      !MutantActive(Mutant::kPolicyFileCommand)) {
    return Refused("it was compiled for another command (wrap this one)");
  }
  const nlohmann::json& host_json = in["host"];
  if (!host_json.is_object() || !host_json["cwd"].is_string() || !host_json["home"].is_string() ||
      !host_json["passwd_home"].is_string() || !host_json["uid"].is_number_unsigned() ||
      !host_json["gid"].is_number_unsigned()) {
    return Refused("missing or malformed host context");
  }
  HostContext host;
  host.cwd = host_json["cwd"].get<std::string>();
  host.home = host_json["home"].get<std::string>();
  host.passwd_home = host_json["passwd_home"].get<std::string>();
  host.uid = host_json["uid"].get<uid_t>();
  host.gid = host_json["gid"].get<gid_t>();
  if (host.uid != here.uid || host.gid != here.gid) {
    return Refused("it was compiled for uid " + std::to_string(host.uid) + " gid " + std::to_string(host.gid) +
                   ", not for this user");
  }
  // The home decides which credential stores are masked and where corral's
  // own state is: a file compiled for another home (or edited to name one)
  // would leave this home's unmasked.
  if ((host.home != here.home || host.passwd_home != here.passwd_home) && !MutantActive(Mutant::kPolicyFileHome)) {
    return host.home != here.home
               ? Refused("it was compiled for the home " + host.home + ", not for this one (" + here.home + ")")
               : Refused("it was compiled for the passwd home " + host.passwd_home + ", not for this one (" +
                         here.passwd_home + ")");
  }
  CORRAL_ASSIGN_OR_RETURN(PolicySpec spec, SpecFromJson(in["spec"]));
  // corral wrap never compiles danger-full-access: a file that asks for it
  // was written by hand, and runs nothing.
  if (spec.mode == Mode::kDangerFullAccess) return Refused("it asks for danger-full-access, which is never compiled");
  CORRAL_ASSIGN_OR_RETURN(Policy policy, BuildPolicy(host, spec));
  if (policy.fingerprint() != in.value("fingerprint", "")) {
    return Refused("the policy it describes no longer builds to the same fingerprint");
  }
  const nlohmann::json& pins = in["pins"];
  if (!pins.is_array() || pins.size() != policy.grants().size()) return Refused("the grants changed");
  for (const auto& pin : pins) {
    if (!pin.is_object() || !pin["path"].is_string() || !pin["dev"].is_number_unsigned() ||
        !pin["ino"].is_number_unsigned()) {
      return Refused("malformed pin");
    }
    const PathGrant* grant = policy.GrantFor(pin["path"].get<std::string>());
    FileIdentity id{static_cast<dev_t>(pin["dev"].get<uint64_t>()), static_cast<ino_t>(pin["ino"].get<uint64_t>())};
    if (grant == nullptr || grant->path.path != pin["path"].get<std::string>() || grant->path.id != id) {
      return Refused(pin["path"].get<std::string>() + " is no longer the file it was when the policy was compiled");
    }
  }
  return policy;
}

}  // namespace

namespace {

// Creates `dir` (one level) 0700 if missing, then opens it without following
// a symlink and insists it is a real directory that only the caller owns and
// can write: another user must not be able to swap a compiled policy between
// `corral wrap` and the spawn. Everything after goes through the descriptor.
Result<UniqueFd> PrivateDirectory(const std::string& dir) {
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    return Error::FromErrno(ErrorKind::kIo, "cannot create " + dir, "mkdir", errno);
  }
  UniqueFd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  struct stat st;
  if (!fd || ::fstat(fd.get(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != ::getuid() ||
      (st.st_mode & 022) != 0) {
    return Error(ErrorKind::kIo, "cannot use " + dir +
                                     " for compiled policies: it must be a directory you own that no one else "
                                     "can write (chmod 700 " + dir + ")");
  }
  return fd;
}

// <64 hex>-<16 hex>.json, or a temporary of ReplaceFileAt's: the names
// WritePolicyFile makes, the only ones the clean-up removes.
bool IsPolicyFileName(std::string_view name) {
  auto hex = [](std::string_view text) {
    return text.find_first_not_of("0123456789abcdef") == std::string_view::npos;
  };
  if (IsReplaceFileTemporary(name)) return true;
  return name.size() == 64 + 1 + 16 + 5 && hex(name.substr(0, 64)) && name[64] == '-' && hex(name.substr(65, 16)) &&
         name.substr(81) == ".json";
}

}  // namespace

void PruneStalePolicyFiles(int dir) {
  UniqueFd listing(::openat(dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!listing) return;
  DIR* stream = ::fdopendir(listing.get());
  if (stream == nullptr) return;
  (void)listing.Release();  // the stream owns it now
  struct timespec now;
  ::clock_gettime(CLOCK_REALTIME, &now);
  std::vector<std::string> stale;
  while (const struct dirent* entry = ::readdir(stream)) {
    if (!IsPolicyFileName(entry->d_name)) continue;
    struct stat st;
    if (::fstatat(::dirfd(stream), entry->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode)) continue;
    if (now.tv_sec - st.st_mtime > kPolicyFileMaxAge.count()) stale.push_back(entry->d_name);
  }
  for (const std::string& name : stale) ::unlinkat(::dirfd(stream), name.c_str(), 0);
  ::closedir(stream);
}

Result<std::string> WritePolicyFile(const Policy& policy, const std::vector<std::string>& argv,
                                    const std::string& dir) {
  if (dir.empty() || dir.front() != '/') {
    return Error(ErrorKind::kUsage, "compiled policies need an absolute directory, not \"" + dir + "\"");
  }
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  CORRAL_ASSIGN_OR_RETURN(UniqueFd target, PrivateDirectory(dir));
  PruneStalePolicyFiles(target.get());
  // One file per policy and command: a second command wrapped under the same
  // policy gets its own file, and never replaces the first one's.
  std::string name = policy.fingerprint() + "-" + ArgvDigest(argv).substr(0, 16) + ".json";
  std::string path = dir + "/" + name;
  CORRAL_TRY(ReplaceFileAt(target.get(), name, SerializePolicyFile(policy, argv), 0600, Durability::kUnsynced,
                           "cannot write " + path));
  return path;
}

}  // namespace corral
