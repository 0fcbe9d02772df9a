// The audit trail: one JSON line per decision, to a file or to stderr.
//
// Where it goes (cli/run.cc picks): --audit FILE, --audit - (stderr), the
// user config's audit.trail, else corral's state directory
// (<state>/audit.jsonl, InDirectory). Runs of one user share that file:
// each record is one write(2) on an O_APPEND descriptor, so records from
// concurrent runs never interleave, and the size cap is applied under a
// lock (<state>/audit.lock) when a trail is opened: a file of
// kAuditFileCap bytes or more is renamed to audit.1.jsonl (replacing the
// previous one) and a new one started. A run keeps writing to the file it
// opened, wherever a later rotation renames it.
//
// Every run writes `spawned` (before the clone, with the policy fingerprint,
// grant counts, network mode and enforcement level), then exactly one of
// `exited` (the command's code) or `failed` (a reason from FailureReason's
// closed set). Other decisions (a mechanism dropped under --best-effort, a
// protected path quarantined) get their own records. Records carry metadata
// only: never the command's output and never an environment value.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "base/result.h"
#include "base/unique_fd.h"

namespace corral {

// The stable `reason` labels of a `failed` record.
enum class FailureReason {
  kUnsupported, kNamespace, kMount, kHardening, kLandlock, kSeccomp,
  kUsage, kConfig, kPolicy, kPinMismatch, kExec, kNotFound, kTimeout, kLost, kDenied, kInternal,
};
std::string_view FailureReasonName(FailureReason reason);
FailureReason FailureReasonFor(ErrorKind kind);

class AuditEvent {
 public:
  explicit AuditEvent(std::string_view event);
  AuditEvent(AuditEvent&&) noexcept;
  AuditEvent& operator=(AuditEvent&&) noexcept;
  ~AuditEvent();

  AuditEvent& Set(std::string_view key, std::string_view value);
  AuditEvent& Set(std::string_view key, const char* value) { return Set(key, std::string_view(value)); }
  AuditEvent& Set(std::string_view key, int64_t value);
  AuditEvent& Set(std::string_view key, int value) { return Set(key, static_cast<int64_t>(value)); }
  AuditEvent& Set(std::string_view key, bool value);
  AuditEvent& Set(std::string_view key, const std::vector<std::string>& values);
  AuditEvent& Set(std::string_view key, const std::string& value) { return Set(key, std::string_view(value)); }
  AuditEvent& SetJson(std::string_view key, const nlohmann::json& value);

  const nlohmann::json& json() const { return *json_; }

 private:
  std::unique_ptr<nlohmann::json> json_;
};

// The one `failed` record, whoever refuses or ends the run (the gate, the
// CLI, RunConfined): source "corral", the reason label, the error's text,
// its code when it has one, and the policy's fingerprint when a policy was
// built (empty: none yet).
AuditEvent FailedEvent(const Error& error, std::string_view policy_fingerprint = {});

// The size at which the state directory's trail is rotated.
inline constexpr int64_t kAuditFileCap = int64_t{4} << 20;
inline constexpr char kAuditFileName[] = "audit.jsonl";
inline constexpr char kAuditRotatedName[] = "audit.1.jsonl";
inline constexpr char kAuditLockName[] = "audit.lock";

// A trail destination as --audit or audit.trail names it: "-" (stderr) or an
// absolute path; anything else is refused (code audit_file_refused), as a
// relative grant path is.
Status CheckAuditTrailName(const std::string& name);

class AuditTrail {
 public:
  // A trail writing to stderr (fd 2).
  static AuditTrail ToStderr();
  // Appends to `path` (created 0600; an existing one is made 0600). Refused
  // (code audit_file_refused) when `path` is relative (as a grant path is),
  // is a symlink, or what it opens is not a regular file, has more than one
  // hard link or is not the caller's: checked on the open file, so no rename
  // between check and use changes the answer. The file is named
  // afterwards by its canonical path (file()), so it can be kept out of a
  // sandbox's reach however `path` was spelled (relative, through a
  // symlinked directory): a run refuses a trail inside one of its writable
  // grants (gate/admit.h).
  static Result<AuditTrail> ToFile(const std::string& path);
  // Appends to kAuditFileName in the directory `dir` (a descriptor the
  // caller opened without symlinks: the state directory), named `dir_path`,
  // rotating it at kAuditFileCap under the lock (see the top). The names are
  // opened with openat and O_NOFOLLOW, and the file checked as ToFile checks
  // it; a refusal has code audit_file_refused.
  static Result<AuditTrail> InDirectory(int dir, const std::string& dir_path);
  // A trail that writes nowhere (for tests and embedders with their own sink).
  static AuditTrail Discard();

  // Identifies this run across processes writing to one file.
  const std::string& run_id() const { return run_id_; }

  // The canonical path of the file written to, if any.
  const std::optional<std::string>& file() const { return file_; }

  // Adds `ts` and `run`, then writes one line: to a file with a single
  // write(2); to stderr that is not a file (a pipe, a socket, a terminal)
  // through WriteToStream (base/stream_write.h), so a reader that stopped
  // draining it holds the run only until the user stops corral: then the
  // rest of that line and every later record are not written, and the run
  // goes on to act on the signal.
  void Record(const AuditEvent& event) const;
  // Whether Record writes nowhere (Discard): a caller may skip building an
  // event no one reads.
  bool discards() const { return fd_ < 0; }

 private:
  enum class Destination { kFile, kStream };
  AuditTrail(int fd, UniqueFd owned);
  int fd_ = -1;
  UniqueFd owned_;
  std::optional<std::string> file_;
  std::string run_id_;
  Destination destination_ = Destination::kFile;
};

}  // namespace corral
