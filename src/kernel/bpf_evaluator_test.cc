// The BPF evaluator itself, on hand-written programs: it computes what the
// kernel would and refuses what seccomp would refuse.
#include "kernel/bpf_evaluator.h"

#include <linux/audit.h>

#include <gtest/gtest.h>

#include <cstddef>
#include <vector>

namespace corral {
namespace {

constexpr uint32_t kNr = offsetof(seccomp_data, nr);
constexpr uint32_t kArch = offsetof(seccomp_data, arch);
constexpr uint32_t kArg0Low = offsetof(seccomp_data, args[0]);
constexpr uint32_t kArg0High = offsetof(seccomp_data, args[0]) + 4;

sock_filter Stmt(uint16_t code, uint32_t k) { return BPF_STMT(code, k); }
sock_filter Jump(uint16_t code, uint32_t k, uint8_t jt, uint8_t jf) { return BPF_JUMP(code, k, jt, jf); }

seccomp_data Data(int nr, uint64_t arg0 = 0) {
  seccomp_data data = {};
  data.nr = nr;
  data.arch = AUDIT_ARCH_X86_64;
  data.args[0] = arg0;
  return data;
}

uint32_t Evaluate(const std::vector<sock_filter>& program, const seccomp_data& data) {
  Result<uint32_t> result = EvaluateBpf(program, data);
  EXPECT_TRUE(result.ok()) << result.error().ToString();
  return result.ok() ? *result : 0xdeadbeef;
}

std::string Refusal(const std::vector<sock_filter>& program, const seccomp_data& data = Data(0)) {
  Result<uint32_t> result = EvaluateBpf(program, data);
  return result.ok() ? std::string("accepted") : result.error().message();
}

TEST(BpfEvaluator, LoadsFieldsAndJumps) {
  // if (arch != X86_64) kill; if (nr == 7) errno 1; else allow.
  const std::vector<sock_filter> program = {
      Stmt(BPF_LD | BPF_W | BPF_ABS, kArch),
      Jump(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
      Stmt(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
      Stmt(BPF_LD | BPF_W | BPF_ABS, kNr),
      Jump(BPF_JMP | BPF_JEQ | BPF_K, 7, 0, 1),
      Stmt(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | 1),
      Stmt(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  EXPECT_EQ(Evaluate(program, Data(7)), SECCOMP_RET_ERRNO | 1u);
  EXPECT_EQ(Evaluate(program, Data(8)), SECCOMP_RET_ALLOW);
  seccomp_data foreign = Data(7);
  foreign.arch = AUDIT_ARCH_I386;
  EXPECT_EQ(Evaluate(program, foreign), SECCOMP_RET_KILL_PROCESS);
}

TEST(BpfEvaluator, ReadsBothHalvesOfAnArgument) {
  const std::vector<sock_filter> low = {Stmt(BPF_LD | BPF_W | BPF_ABS, kArg0Low), Stmt(BPF_RET | BPF_A, 0)};
  const std::vector<sock_filter> high = {Stmt(BPF_LD | BPF_W | BPF_ABS, kArg0High), Stmt(BPF_RET | BPF_A, 0)};
  EXPECT_EQ(Evaluate(low, Data(0, 0x1122334455667788ull)), 0x55667788u);
  EXPECT_EQ(Evaluate(high, Data(0, 0x1122334455667788ull)), 0x11223344u);
}

TEST(BpfEvaluator, AluScratchMemoryAndRegisters) {
  const std::vector<sock_filter> program = {
      Stmt(BPF_LD | BPF_IMM, 6),
      Stmt(BPF_ALU | BPF_MUL | BPF_K, 7),  // A = 42
      Stmt(BPF_ST, 3),                     // M[3] = 42
      Stmt(BPF_LDX | BPF_IMM, 5),          // X = 5
      Stmt(BPF_ALU | BPF_ADD | BPF_X, 0),  // A = 47
      Stmt(BPF_ALU | BPF_LSH | BPF_K, 1),  // A = 94
      Stmt(BPF_ALU | BPF_MOD | BPF_K, 10),  // A = 4
      Stmt(BPF_MISC | BPF_TAX, 0),         // X = 4
      Stmt(BPF_LD | BPF_MEM, 3),           // A = 42
      Stmt(BPF_ALU | BPF_SUB | BPF_X, 0),  // A = 38
      Stmt(BPF_ALU | BPF_XOR | BPF_K, 1),  // A = 39
      Jump(BPF_JMP | BPF_JSET | BPF_K, 0x20, 0, 1),
      Stmt(BPF_RET | BPF_A, 0),
      Stmt(BPF_RET | BPF_K, 0),
  };
  EXPECT_EQ(Evaluate(program, Data(0)), 39u);
  const std::vector<sock_filter> neg = {Stmt(BPF_LD | BPF_IMM, 1), Stmt(BPF_ALU | BPF_NEG, 0),
                                        Stmt(BPF_RET | BPF_A, 0)};
  EXPECT_EQ(Evaluate(neg, Data(0)), 0xffffffffu);
}

TEST(BpfEvaluator, DivisionByZeroXEndsWithZero) {
  const std::vector<sock_filter> program = {Stmt(BPF_LD | BPF_IMM, 9), Stmt(BPF_LDX | BPF_IMM, 0),
                                            Stmt(BPF_ALU | BPF_DIV | BPF_X, 0),
                                            Stmt(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)};
  EXPECT_EQ(Evaluate(program, Data(0)), 0u);
}

TEST(BpfEvaluator, RefusesWhatSeccompRefuses) {
  const sock_filter ret = Stmt(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
  EXPECT_NE(Refusal({}), "accepted");
  EXPECT_NE(Refusal({Stmt(BPF_LD | BPF_W | BPF_ABS, 0)}).find("ran off its end"), std::string::npos);
  EXPECT_NE(Refusal({Stmt(BPF_LD | BPF_B | BPF_ABS, 0), ret}).find("32-bit"), std::string::npos);
  EXPECT_NE(Refusal({Stmt(BPF_LD | BPF_W | BPF_ABS, 2), ret}).find("misaligned"), std::string::npos);
  EXPECT_NE(Refusal({Stmt(BPF_LD | BPF_W | BPF_ABS, sizeof(seccomp_data)), ret}).find("outside"), std::string::npos);
  EXPECT_NE(Refusal({Stmt(BPF_LDX | BPF_W | BPF_ABS, 0), ret}).find("not allowed"), std::string::npos);
  EXPECT_NE(Refusal({Stmt(BPF_LD | BPF_MEM, 0), ret}).find("unset scratch"), std::string::npos);
  EXPECT_NE(Refusal({Stmt(BPF_ST, BPF_MEMWORDS), ret}).find("bad store"), std::string::npos);
  EXPECT_NE(Refusal({Stmt(BPF_ALU | BPF_DIV | BPF_K, 0), ret}).find("zero"), std::string::npos);
  EXPECT_NE(Refusal({Stmt(BPF_ALU | BPF_LSH | BPF_K, 32), ret}).find("shift"), std::string::npos);
  EXPECT_NE(Refusal({Stmt(BPF_ALU | 0xf0, 0), ret}).find("ALU"), std::string::npos);
  EXPECT_NE(Refusal({Jump(BPF_JMP | BPF_JEQ | BPF_K, 0, 1, 1), ret}).find("past the end"), std::string::npos);
  EXPECT_NE(Refusal({Stmt(BPF_JMP | BPF_JA, 1), ret}).find("past the end"), std::string::npos);
  EXPECT_NE(Refusal({Jump(BPF_JMP | 0x60 | BPF_K, 0, 0, 0), ret}).find("unknown jump"), std::string::npos);
  EXPECT_NE(Refusal({Stmt(BPF_MISC | 0x10, 0), ret}).find("misc"), std::string::npos);
  EXPECT_NE(Refusal({Stmt(BPF_RET | 0x18, 0)}).find("return"), std::string::npos);
  // The error names the instruction.
  EXPECT_NE(Refusal({Stmt(BPF_LD | BPF_IMM, 0), Stmt(BPF_LD | BPF_H | BPF_ABS, 0), ret}).find("instruction 1"),
            std::string::npos);
}

}  // namespace
}  // namespace corral
