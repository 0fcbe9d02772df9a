// --allow-unix: one host unix socket shown in the view at its own path, and
// the sockets that hand whoever connects control of the host.
//
// A socket a daemon running as root (or as the user, with the user's whole
// authority) listens on can do anything its protocol allows: Docker's and
// Podman's start a privileged container with the host's root mounted, the
// system bus and systemd's private socket start and stop services, libvirt
// starts machines. corral shows such a socket when asked (the user may mean
// it), and says so loudly: in explain, on stderr at each run, and in the
// trail.
//
//   if (std::optional<std::string_view> what = HostControlSocket("/run/docker.sock")) ...  // "Docker"
#pragma once

#include <optional>
#include <string_view>

namespace corral {

// What `path` (canonical) gives control of, when it is one of the sockets
// known to hand out host control; nothing otherwise.
std::optional<std::string_view> HostControlSocket(std::string_view path);

}  // namespace corral
