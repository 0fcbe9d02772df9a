#include "kernel/bpf_evaluator.h"

#include <array>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <string>

namespace corral {
namespace {

Error Refuse(size_t pc, const sock_filter& insn, const std::string& why) {
  char code[8];
  std::snprintf(code, sizeof code, "0x%04x", insn.code);
  return Error(ErrorKind::kInternal,
               "bpf: instruction " + std::to_string(pc) + " (code " + code + ", k " + std::to_string(insn.k) + "): " + why);
}

// The ALU step; false for an operation seccomp does not accept.
bool Alu(uint16_t op, uint32_t& a, uint32_t operand) {
  switch (op) {
    case BPF_ADD: a += operand; return true;
    case BPF_SUB: a -= operand; return true;
    case BPF_MUL: a *= operand; return true;
    case BPF_DIV: a /= operand; return true;  // the caller rules out 0
    case BPF_MOD: a %= operand; return true;
    case BPF_OR: a |= operand; return true;
    case BPF_AND: a &= operand; return true;
    case BPF_XOR: a ^= operand; return true;
    case BPF_LSH: a <<= operand; return true;  // the caller rules out >= 32
    case BPF_RSH: a >>= operand; return true;
    case BPF_NEG: a = 0u - a; return true;
    default: return false;
  }
}

}  // namespace

Result<uint32_t> EvaluateBpf(std::span<const sock_filter> program, const seccomp_data& data) {
  if (program.empty() || program.size() > BPF_MAXINSNS) {
    return Error(ErrorKind::kInternal, "bpf: the program has " + std::to_string(program.size()) + " instructions");
  }
  uint32_t a = 0, x = 0;
  std::array<uint32_t, BPF_MEMWORDS> mem{};
  std::array<bool, BPF_MEMWORDS> written{};
  for (size_t pc = 0; pc < program.size(); ++pc) {
    const sock_filter& insn = program[pc];
    const uint16_t cls = BPF_CLASS(insn.code);
    switch (cls) {
      case BPF_LD:
      case BPF_LDX: {
        uint32_t value = 0;
        const uint16_t mode = BPF_MODE(insn.code);
        if (BPF_SIZE(insn.code) != BPF_W) return Refuse(pc, insn, "only 32-bit loads are allowed");
        if (mode == BPF_ABS && cls == BPF_LD) {
          if (insn.k >= sizeof(seccomp_data) || insn.k % 4 != 0) {
            return Refuse(pc, insn, "load outside seccomp_data or misaligned");
          }
          std::memcpy(&value, reinterpret_cast<const unsigned char*>(&data) + insn.k, sizeof value);
        } else if (mode == BPF_IMM) {
          value = insn.k;
        } else if (mode == BPF_LEN) {
          value = sizeof(seccomp_data);
        } else if (mode == BPF_MEM) {
          if (insn.k >= BPF_MEMWORDS || !written[insn.k]) return Refuse(pc, insn, "load of unset scratch memory");
          value = mem[insn.k];
        } else {
          return Refuse(pc, insn, "load mode not allowed in seccomp");
        }
        (cls == BPF_LD ? a : x) = value;
        break;
      }
      case BPF_ST:
      case BPF_STX:
        if (insn.code != cls || insn.k >= BPF_MEMWORDS) return Refuse(pc, insn, "bad store");
        mem[insn.k] = cls == BPF_ST ? a : x;
        written[insn.k] = true;
        break;
      case BPF_ALU: {
        const uint16_t op = BPF_OP(insn.code);
        const uint32_t operand = BPF_SRC(insn.code) == BPF_X ? x : insn.k;
        if ((op == BPF_DIV || op == BPF_MOD) && operand == 0) {
          if (BPF_SRC(insn.code) == BPF_K) return Refuse(pc, insn, "division by a zero constant");
          return 0u;  // as the kernel: a division by X == 0 ends the program with 0
        }
        if ((op == BPF_LSH || op == BPF_RSH) && operand >= 32) return Refuse(pc, insn, "shift by 32 or more");
        if (!Alu(op, a, operand)) return Refuse(pc, insn, "unknown ALU operation");
        break;
      }
      case BPF_JMP: {
        const uint16_t op = BPF_OP(insn.code);
        size_t offset = 0;
        if (op == BPF_JA) {
          offset = insn.k;
        } else {
          const uint32_t operand = BPF_SRC(insn.code) == BPF_X ? x : insn.k;
          bool taken = false;
          if (op == BPF_JEQ) taken = a == operand;
          else if (op == BPF_JGT) taken = a > operand;
          else if (op == BPF_JGE) taken = a >= operand;
          else if (op == BPF_JSET) taken = (a & operand) != 0;
          else return Refuse(pc, insn, "unknown jump");
          offset = taken ? insn.jt : insn.jf;
        }
        if (offset >= program.size() - pc - 1) return Refuse(pc, insn, "jump past the end of the program");
        pc += offset;
        break;
      }
      case BPF_RET:
        if (BPF_RVAL(insn.code) == BPF_K) return insn.k;
        if (BPF_RVAL(insn.code) == BPF_A) return a;
        return Refuse(pc, insn, "unknown return source");
      case BPF_MISC:
        if (BPF_MISCOP(insn.code) == BPF_TAX) x = a;
        else if (BPF_MISCOP(insn.code) == BPF_TXA) a = x;
        else return Refuse(pc, insn, "unknown misc operation");
        break;
      default:
        return Refuse(pc, insn, "unknown instruction class");
    }
  }
  return Error(ErrorKind::kInternal, "bpf: the program ran off its end without a return");
}

bool SeccompCacheAllows(std::span<const sock_filter> program, uint32_t arch, uint32_t nr) {
  uint32_t a = 0;
  for (size_t pc = 0; pc < program.size(); ++pc) {
    const sock_filter& insn = program[pc];
    switch (insn.code) {
      case BPF_LD | BPF_W | BPF_ABS:
        if (insn.k == offsetof(seccomp_data, nr)) {
          a = nr;
        } else if (insn.k == offsetof(seccomp_data, arch)) {
          a = arch;
        } else {
          return false;  // an argument or the instruction pointer: not constant
        }
        break;
      case BPF_RET | BPF_K: return insn.k == SECCOMP_RET_ALLOW;
      case BPF_JMP | BPF_JA: pc += insn.k; break;
      case BPF_JMP | BPF_JEQ | BPF_K: pc += a == insn.k ? insn.jt : insn.jf; break;
      case BPF_JMP | BPF_JGE | BPF_K: pc += a >= insn.k ? insn.jt : insn.jf; break;
      case BPF_JMP | BPF_JGT | BPF_K: pc += a > insn.k ? insn.jt : insn.jf; break;
      case BPF_JMP | BPF_JSET | BPF_K: pc += (a & insn.k) != 0 ? insn.jt : insn.jf; break;
      case BPF_ALU | BPF_AND | BPF_K: a &= insn.k; break;
      default: return false;  // an instruction the emulation does not know
    }
  }
  return false;  // ran off the end
}

}  // namespace corral
