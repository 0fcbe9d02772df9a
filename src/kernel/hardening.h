// Process hardening applied in the child after the mount view is built:
// a new session (TIOCSTI cannot reach the caller's terminal), no core dumps,
// no capabilities in any set (with securebits locked so exec cannot regain
// them, even as uid 0; without CAP_SETPCAP, as a best-effort run without a
// user namespace, the bounding set stays and no_new_privs does that job),
// and no_new_privs. All child side: raw syscalls only,
// each returning 0 or an errno.
#pragma once

namespace corral {

int NewSessionChild();
int DisableCoreDumpsChild();
int DropCapabilitiesChild();
int SetNoNewPrivsChild();

}  // namespace corral
