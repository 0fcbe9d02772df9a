// A user-space interpreter for classic BPF seccomp programs.
//
// Test support: it runs a filter (such as BuildSeccompFilter's) against a
// struct seccomp_data the way the kernel's seccomp does, so the filter can be
// checked against a table of calls without installing it. It accepts exactly
// the instructions seccomp accepts (loads of 32-bit words of seccomp_data,
// immediate and scratch-memory loads and stores, ALU, jumps, TAX/TXA and
// returns) and refuses anything else, an out-of-range jump or load, a
// division by zero and a program that runs off its end, with an error naming
// the instruction.
//
//   CORRAL_ASSIGN_OR_RETURN(uint32_t action, EvaluateBpf(filter, data));
//   if ((action & SECCOMP_RET_ACTION_FULL) == SECCOMP_RET_ERRNO) ...
#pragma once

#include <linux/filter.h>
#include <linux/seccomp.h>

#include <cstdint>
#include <span>

#include "base/result.h"

namespace corral {

// Runs `program` on `data` and returns the 32-bit value of the BPF_RET it
// reaches (a SECCOMP_RET_* action with its data). Errors are kInternal.
Result<uint32_t> EvaluateBpf(std::span<const sock_filter> program, const seccomp_data& data);

// Whether the kernel's seccomp action cache lets call `nr` of `arch` through
// without running `program`: the kernel decides that once, when the filter
// is installed, by emulating the program with only the number and the
// architecture known, and caches "allow" for the numbers whose path loads
// nothing else (no argument, no instruction pointer), uses only the
// instructions it emulates (32-bit loads of nr and arch, JA, JEQ/JGE/JGT/JSET
// with a constant, AND with a constant, RET with a constant) and returns
// SECCOMP_RET_ALLOW. This is the same emulation.
bool SeccompCacheAllows(std::span<const sock_filter> program, uint32_t arch, uint32_t nr);

}  // namespace corral
