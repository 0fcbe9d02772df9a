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
  if (milli_cpus) add("cpus " + MilliCpusText(*milli_cpus));
  return out.empty() ? "none" : out;
}

std::string MilliCpusText(uint64_t milli_cpus) {
  std::string text = std::to_string(milli_cpus / 1000);
  if (uint64_t fraction = milli_cpus % 1000; fraction != 0) {
    std::string digits = std::to_string(fraction);
    digits.insert(0, 3 - digits.size(), '0');
    while (digits.back() == '0') digits.pop_back();
    text += "." + digits;
  }
  return text;
}

}  // namespace corral
