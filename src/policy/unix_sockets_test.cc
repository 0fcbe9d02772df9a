// The sockets that hand out host control are named by their path's last
// components, whatever directory holds them; other sockets are not.
#include "policy/unix_sockets.h"

#include <gtest/gtest.h>

namespace corral {
namespace {

TEST(HostControlSocket, NamesTheDaemonsThatHandOutTheHost) {
  for (const char* path : {"/var/run/docker.sock", "/run/docker.sock", "/run/user/1000/podman/podman.sock",
                           "/run/containerd/containerd.sock", "/run/dbus/system_bus_socket", "/run/systemd/private",
                           "/var/run/libvirt/libvirt-sock", "/run/snapd.socket", "/var/snap/lxd/common/lxd/unix.socket",
                           "/run/user/1000/bus"}) {
    EXPECT_TRUE(HostControlSocket(path).has_value()) << path;
  }
  for (const char* path : {"/tmp/ssh-XXXXabcd/agent.1234", "/run/postgresql/.s.PGSQL.5432", "/tmp/mydocker.sock",
                           "/run/user/1000/bus-proxy", "/home/me/project/app.sock", "/run/mysqld/mysqld.sock"}) {
    EXPECT_FALSE(HostControlSocket(path).has_value()) << path;
  }
}

}  // namespace
}  // namespace corral
