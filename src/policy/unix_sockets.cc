#include "policy/unix_sockets.h"

namespace corral {
namespace {

struct KnownSocket {
  std::string_view suffix;  // the path ends with it (after a '/')
  std::string_view what;
};

constexpr KnownSocket kHostControl[] = {
    {"docker.sock", "the Docker daemon: a privileged container with the host's root mounted"},
    {"podman.sock", "Podman: containers with the host's root mounted"},
    {"containerd.sock", "containerd: containers and their snapshots"},
    {"crio.sock", "CRI-O: containers"},
    {"buildkitd.sock", "BuildKit: builds run as the daemon"},
    {"system_bus_socket", "the D-Bus system bus: services, logins, package managers"},
    {"systemd/private", "systemd's manager: start and stop any service"},
    {"systemd/notify", "systemd's manager"},
    {"libvirt-sock", "libvirt: virtual machines with host devices"},
    {"snapd.socket", "snapd: install and run snaps as root"},
    {"lxd/unix.socket", "LXD: privileged containers"},
    {"incus/unix.socket", "Incus: privileged containers"},
    {"bus", "the user's D-Bus session bus: the desktop, keyrings, systemd --user"},
};

bool EndsWithComponent(std::string_view path, std::string_view suffix) {
  if (path.size() < suffix.size() || path.substr(path.size() - suffix.size()) != suffix) return false;
  return path.size() == suffix.size() || path[path.size() - suffix.size() - 1] == '/';
}

}  // namespace

std::optional<std::string_view> HostControlSocket(std::string_view path) {
  for (const KnownSocket& known : kHostControl) {
    if (EndsWithComponent(path, known.suffix)) return known.what;
  }
  return std::nullopt;
}

}  // namespace corral
