// The toml++ implementation, compiled once (see config/toml.h).
#define TOML_IMPLEMENTATION
#include "config/toml.h"
