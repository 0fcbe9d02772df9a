#include <CLI/CLI.hpp>
#include <cstdio>

#include "cli/commands.h"
#include "base/exit_codes.h"
#include "run/program.h"

namespace corral::cli {

void HashCommand::Register(CLI::App& app) {
  app.add_option("path", path, "the file to hash")->required()->type_name("PATH");
}

int HashCommand::Execute() const {
  Result<std::string> digest = HashFile(path);
  if (!digest.ok()) {
    PrintError(digest.error().ToString());
    return ExitCodeFor(digest.error().kind());
  }
  std::printf("%s\n", digest->c_str());
  return 0;
}

}  // namespace corral::cli
