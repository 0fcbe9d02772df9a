// Cryptographically random bytes from the kernel (getrandom(2)).
//
//   CORRAL_ASSIGN_OR_RETURN(std::string key, RandomBytes(32));
//
// Blocks until the kernel's pool is initialised; never falls back to a
// weaker source. A failure is an Error: keys, grant ids and session ids must
// not be guessable, so callers fail closed rather than invent bytes.
#pragma once

#include <cstddef>
#include <string>

#include "base/result.h"

namespace corral {

Result<std::string> RandomBytes(size_t count);

}  // namespace corral
