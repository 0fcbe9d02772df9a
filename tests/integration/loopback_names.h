// A name the host's /etc/hosts gives 127.0.0.1 besides localhost: the proxy
// resolves it outside, to the test's loopback servers, while the sandbox
// (whose /etc/hosts holds localhost alone under --allow-host) must ask its
// name server for it. Empty when the host's table has none.
#pragma once

#include <fstream>
#include <sstream>
#include <string>

namespace corral_it {

inline std::string LoopbackHostsName() {
  std::ifstream in("/etc/hosts");
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream words(line.substr(0, line.find('#')));
    std::string address, name;
    if (!(words >> address) || address != "127.0.0.1") continue;
    while (words >> name) {
      if (name.find("localhost") == std::string::npos) return name;
    }
  }
  return "";
}

}  // namespace corral_it
