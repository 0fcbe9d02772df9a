// ApplyRlimitsChild in a forked child (it changes the process's limits):
// each limit lowered to its soft and hard values, never raised.
#include "kernel/rlimits.h"

#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

namespace corral {
namespace {

// Runs `body` in a forked child; its exit status.
template <typename Body>
int InChild(Body body) {
  pid_t pid = ::fork();
  if (pid == 0) ::_exit(body());
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 100 + WTERMSIG(status);
}

TEST(Rlimits, EachLimitIsSetSoftAndHard) {
  EXPECT_EQ(InChild([] {
              RlimitSet limits;
              limits.Add(RLIMIT_NOFILE, 40);
              limits.Add(RLIMIT_CPU, 7, 8);
              limits.Add(RLIMIT_FSIZE, 1 << 20);
              if (ApplyRlimitsChild(limits) != 0) return 1;
              struct rlimit nofile, cpu, fsize;
              ::getrlimit(RLIMIT_NOFILE, &nofile);
              ::getrlimit(RLIMIT_CPU, &cpu);
              ::getrlimit(RLIMIT_FSIZE, &fsize);
              if (nofile.rlim_cur != 40 || nofile.rlim_max != 40) return 2;
              if (cpu.rlim_cur != 7 || cpu.rlim_max != 8) return 3;
              if (fsize.rlim_cur != (1 << 20) || fsize.rlim_max != (1 << 20)) return 4;
              // The command cannot raise them back.
              struct rlimit higher = {64, 64};
              if (::setrlimit(RLIMIT_NOFILE, &higher) == 0 && ::geteuid() != 0) return 5;
              return 0;
            }),
            0);
}

// A limit above the hard limit the process already has keeps that one: the
// step only ever lowers.
TEST(Rlimits, AHigherLimitKeepsTheLowerHardOne) {
  EXPECT_EQ(InChild([] {
              struct rlimit low = {20, 30};
              if (::setrlimit(RLIMIT_NOFILE, &low) != 0) return 1;
              RlimitSet limits;
              limits.Add(RLIMIT_NOFILE, 1000);
              if (ApplyRlimitsChild(limits) != 0) return 2;
              struct rlimit now;
              ::getrlimit(RLIMIT_NOFILE, &now);
              return now.rlim_cur == 30 && now.rlim_max == 30 ? 0 : 3;
            }),
            0);
}

TEST(Rlimits, AnEmptySetChangesNothing) {
  RlimitSet limits;
  EXPECT_TRUE(limits.empty());
  EXPECT_EQ(InChild([&] {
              struct rlimit before, after;
              ::getrlimit(RLIMIT_NOFILE, &before);
              if (ApplyRlimitsChild(limits) != 0) return 1;
              ::getrlimit(RLIMIT_NOFILE, &after);
              return before.rlim_cur == after.rlim_cur && before.rlim_max == after.rlim_max ? 0 : 2;
            }),
            0);
}

}  // namespace
}  // namespace corral
