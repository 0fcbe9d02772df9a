#include "policy/access.h"

namespace corral {

std::string AccessString(Access access) {
  std::string out;
  if (Has(access, Access::kRead)) out += 'r';
  if (Has(access, Access::kWrite)) out += 'w';
  if (Has(access, Access::kExec)) out += 'x';
  return out.empty() ? "-" : out;
}

}  // namespace corral
