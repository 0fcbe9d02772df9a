// The session event log on disk: one append-only JSONL file per session.
//
// A session is a conversation or agent run that outlives one process. Its
// events (session_events.h) live at $XDG_STATE_HOME/corral/sessions/<id>.jsonl
// (default ~/.local/state/corral/sessions/<id>.jsonl).
//
//   CORRAL_ASSIGN_OR_RETURN(SessionStore store, SessionStore::OpenDefault());
//   CORRAL_ASSIGN_OR_RETURN(Session session, store.Create(id, "/src/app"));
//   CORRAL_TRY(session.RecordMode(Mode::kReadOnly, ModeSource::kUser));
//   ... later, in another process ...
//   CORRAL_ASSIGN_OR_RETURN(Session again, store.Load(id));  // again.mode() == read-only
//
// Load reads the whole log strictly (ParseSessionLog) and never changes the
// file. A torn last line (bytes after the last '\n') is dropped; a complete
// line that is not a valid event, the last one included, refuses the
// session, naming file and line. Each append is one write(2) of one whole
// line on an O_APPEND descriptor under an exclusive flock: it first cuts a
// torn tail back to the last '\n', so the new line starts fresh, and a
// failed or short write is cut back off (best effort) and reported.
//
// Security: the log decides how much a later command may touch, so it must
// be the user's alone. The directory is created 0700 and each file 0600; a
// directory or file that another user can write (group or other write bit)
// or that another uid owns is refused, as is a symlink, and the error says
// the chmod/chown that fixes it. Session ids are checked (ValidateSessionId),
// so an id can never name a path outside the directory. The log holds
// working directories, mode changes and the approval classes allowed for the
// session only, never command output or a command's arguments.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "base/unique_fd.h"
#include "state/session_events.h"
#include "policy/mode.h"

namespace corral {

// [A-Za-z0-9._-]{1,64} without a leading dot. ErrorKind::kUsage, code
// "session_id_invalid".
Status ValidateSessionId(std::string_view id);
// A fresh random id (24 hex digits).
Result<std::string> NewSessionId();

// $XDG_STATE_HOME/corral/sessions when XDG_STATE_HOME is absolute, else
// $HOME/.local/state/corral/sessions. The arguments are the variables'
// values (nullopt when unset); DefaultSessionDir reads the environment.
Result<std::string> SessionDirFor(std::optional<std::string_view> xdg_state_home,
                                  std::optional<std::string_view> home);
Result<std::string> DefaultSessionDir();

// One open session log. Move-only; appends go through its descriptor.
class Session {
 public:
  Session(Session&&) noexcept = default;
  Session& operator=(Session&&) noexcept = default;

  const std::string& id() const { return id_; }
  const std::string& path() const { return path_; }
  // The working directory from session/start.
  const std::string& cwd() const;
  const std::vector<SessionEvent>& events() const { return events_; }
  // The last sandbox/mode event's mode, if the session has one.
  std::optional<Mode> mode() const;

  // The class keys the session allows for a run in `mode` with workspace
  // root `workspace` ("" for none): SessionAllowedClasses.
  std::vector<std::string> allowed_classes(Mode mode, std::string_view workspace) const;

  // Appends an approval/allow event (a class that is not
  // IsSessionApprovalClass, or a workspace that is neither "" nor absolute,
  // is ErrorKind::kUsage), as RecordMode appends.
  Status RecordApproval(ApprovalAllowData approval);

  // Appends a sandbox/mode event (one write(2) on an O_APPEND descriptor,
  // after cutting any torn tail). On a failed or short write the file is cut
  // back to its last complete line, best effort, and an ErrorKind::kIo
  // error is returned; the event is not recorded.
  Status RecordMode(Mode mode, ModeSource source);

 private:
  friend class SessionStore;
  Session(std::string id, std::string path, UniqueFd fd, std::vector<SessionEvent> events);
  Status Append(SessionEvent event);

  std::string id_;
  std::string path_;
  UniqueFd fd_;
  std::vector<SessionEvent> events_;
};

// A directory of session logs, checked to be the user's alone.
class SessionStore {
 public:
  // Opens `dir`, creating it (and missing parents) 0700 if needed.
  // Refuses a directory that is a symlink, that another user can write, or
  // that another uid owns (ErrorKind::kConfig, code "session_log_unsafe").
  static Result<SessionStore> Open(const std::string& dir);
  // Open(DefaultSessionDir()).
  static Result<SessionStore> OpenDefault();

  const std::string& dir() const { return dir_; }

  // A new session `id` starting in `cwd` (absolute, valid UTF-8). Fails if
  // the id is taken.
  Result<Session> Create(std::string_view id, std::string_view cwd) const;
  // An existing session, its events read and checked. Never writes to the
  // file: a torn last line is only dropped from events(); the session's
  // next append cuts it.
  Result<Session> Load(std::string_view id) const;

 private:
  SessionStore(std::string dir, UniqueFd dir_fd) : dir_(std::move(dir)), dir_fd_(std::move(dir_fd)) {}
  Status CheckDir() const;

  std::string dir_;
  UniqueFd dir_fd_;
};

}  // namespace corral
