#include "confine/sandbox_hosts.h"

namespace corral {

Result<std::string> SandboxHostsFile(const std::vector<std::string>& names,
                                     const std::map<std::string, std::vector<Address>>& host_table,
                                     const NameLookup& look_up) {
  std::string text = "# corral: the names --allow-dns lets resolve, found on the host when the run started\n"
                     "127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n";
  for (const std::string& name : names) {
    auto listed = host_table.find(name);
    std::vector<Address> addresses = listed != host_table.end() ? listed->second : look_up(name);
    if (addresses.empty()) {
      return Error(ErrorKind::kPolicy, "--allow-dns " + name +
                                           ": the host cannot resolve it (not in /etc/hosts, and the resolver "
                                           "found no address); the command was not run");
    }
    for (const Address& address : addresses) text += address.ToString() + "\t" + name + "\n";
  }
  return text;
}

}  // namespace corral
