// The /etc/hosts of an --allow-port sandbox: the only names that resolve
// inside are localhost and the --allow-dns names, each with the addresses
// corral found for it on the host when the run started (the host's own
// /etc/hosts first, then the system resolver, asked for the absolute name).
// Nothing else resolves: the sandbox has no UDP and, unless port 53 is
// allowed, no TCP to a name server (kernel/seccomp.h, kernel/landlock.h).
//
// A name the host cannot resolve refuses the run (kPolicy), naming it: a
// name the user allowed and that silently fails inside would look like the
// sandbox's fault.
//
//   CORRAL_ASSIGN_OR_RETURN(std::string text, SandboxHostsFile(names, ReadHostsFile("/etc/hosts"), LookUpAbsolute));
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "base/result.h"
#include "net/address.h"

namespace corral {

using NameLookup = std::function<std::vector<Address>(const std::string& name)>;

Result<std::string> SandboxHostsFile(const std::vector<std::string>& names,
                                     const std::map<std::string, std::vector<Address>>& host_table,
                                     const NameLookup& look_up);

}  // namespace corral
