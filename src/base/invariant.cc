#include "base/invariant.h"

#include <unistd.h>

#include <cstdlib>
#include <string>

namespace corral::internal {

void InvariantFailed(std::string_view message, const char* file, int line) {
  std::string text = "[corral invariant] ";
  text.append(message);
  text += " (";
  text += file;
  text += ':';
  text += std::to_string(line);
  text += ")\n";
  // One write, so the line survives even if the abort races other output.
  (void)!::write(STDERR_FILENO, text.data(), text.size());
  std::abort();
}

}  // namespace corral::internal
