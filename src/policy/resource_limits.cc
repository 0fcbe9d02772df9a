#include "policy/resource_limits.h"

#include "policy/tmpfs_size.h"

namespace corral {

std::string ResourceLimits::Describe() const {
  std::string out;
  auto add = [&](const std::string& part) { out += (out.empty() ? "" : ", ") + part; };
  if (procs) add("processes " + std::to_string(*procs));
  if (memory_bytes) add("memory " + TmpfsSizeText(*memory_bytes));
  if (cpu_seconds) add("cpu " + std::to_string(*cpu_seconds) + "s");
  if (file_size_bytes) add("file size " + TmpfsSizeText(*file_size_bytes));
  if (open_files) add("open files " + std::to_string(*open_files));
  return out.empty() ? "none" : out;
}

}  // namespace corral
