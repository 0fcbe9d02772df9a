#include "base/background.h"

#include <sched.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <stdexcept>

#include <gtest/gtest.h>

#include "base/blocked_signals.h"

namespace corral {
namespace {

// Returns once the thread has taken the work (so the caller's Wait then
// cannot do it itself); false after five seconds.
bool ThreadTookTheWork(const Background& work) {
  for (int i = 0; i < 5000 && work.started_on() < 0; ++i) ::usleep(1000);
  return work.started_on() >= 0;
}

TEST(BackgroundTest, TheWorkIsDoneByTheTimeWaitReturns) {
  std::atomic<int> done{0};
  Background work([&] { done = 1; });
  work.Wait();
  EXPECT_EQ(done.load(), 1);
  work.Wait();  // a second wait returns at once
  EXPECT_EQ(done.load(), 1);
}

TEST(BackgroundTest, TheObjectGoingWaitsForTheWork) {
  std::atomic<int> done{0};
  {
    Background work([&] {
      ::usleep(20000);
      done = 1;
    });
  }
  EXPECT_EQ(done.load(), 1);
}

// Wait returns when the work is done, not once its thread has ended (a
// thread's exit is time the caller would wait for nothing); the object
// going joins the thread. A thread-local object holds the thread's end
// until the test lets it go (or five seconds pass, when Wait waited for it).
std::atomic<int> g_let_end{0};
std::atomic<int> g_ended{0};
struct HeldEnd {
  ~HeldEnd() {
    for (int i = 0; i < 5000 && g_let_end.load() == 0; ++i) ::usleep(1000);
    g_ended = g_let_end.load() == 0 ? 2 : 1;
  }
};

TEST(BackgroundTest, WaitReturnsOnceTheWorkIsDoneAndTheObjectGoingJoinsItsThread) {
  g_let_end = 0;  // as it was, under --gtest_repeat too
  g_ended = 0;
  cpu_set_t cpus;
  ASSERT_EQ(::sched_getaffinity(0, sizeof cpus, &cpus), 0);
  ASSERT_GE(CPU_COUNT(&cpus), 2) << "this test needs two CPUs";
  std::atomic<int> done{0};
  {
    Background work([&] {
      static thread_local HeldEnd held;
      (void)&held;
      done = 1;
    });
    ASSERT_TRUE(ThreadTookTheWork(work));
    work.Wait();
    EXPECT_EQ(done.load(), 1);
    EXPECT_EQ(g_ended.load(), 0) << "Wait waited for the thread to end";
    g_let_end = 1;
  }
  EXPECT_EQ(g_ended.load(), 1) << "the object went before its thread ended";
}

// On another thread, away from the caller's CPU (every other CPU the caller
// may use), and with every signal blocked: a process-directed signal never
// lands there.
TEST(BackgroundTest, TheWorkRunsOnAnotherThreadOffThisCpuWithSignalsBlocked) {
  cpu_set_t cpus;
  ASSERT_EQ(::sched_getaffinity(0, sizeof cpus, &cpus), 0);
  ASSERT_GE(CPU_COUNT(&cpus), 2) << "this test needs two CPUs";
  pid_t tid = 0;
  cpu_set_t its_cpus;
  CPU_ZERO(&its_cpus);
  sigset_t its_mask;
  ::sigemptyset(&its_mask);
  int began_on = -1;
  int kept_off = -1;
  {
    Background work([&] {
      tid = static_cast<pid_t>(::syscall(SYS_gettid));
      (void)::sched_getaffinity(0, sizeof its_cpus, &its_cpus);
      (void)::pthread_sigmask(SIG_SETMASK, nullptr, &its_mask);
    });
    ASSERT_TRUE(ThreadTookTheWork(work));
    work.Wait();
    began_on = work.started_on();
    kept_off = work.kept_off();
  }
  ASSERT_GE(kept_off, 0);
  EXPECT_GE(began_on, 0);
  EXPECT_NE(began_on, kept_off) << "the work began on the caller's CPU";
  EXPECT_NE(tid, static_cast<pid_t>(::syscall(SYS_gettid)));
  EXPECT_TRUE(CPU_EQUAL(&its_cpus, &cpus)) << "once begun, the work may not run wherever the caller may";
  for (int signal : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGCHLD, SIGUSR1}) {
    EXPECT_EQ(::sigismember(&its_mask, signal), 1) << "signal " << signal << " could land on the work's thread";
  }
  sigset_t mine;
  ASSERT_EQ(::pthread_sigmask(SIG_SETMASK, nullptr, &mine), 0);
  EXPECT_EQ(::sigismember(&mine, SIGUSR1), 0) << "the caller's mask was left changed";
}

// A caller that waits before the thread has begun does the work itself,
// rather than sleep while its own CPU idles; the work still runs exactly
// once, whichever side takes it. Waiting at once after the constructor
// is nearly always before a new thread begins on another CPU (tens of
// microseconds), so of 200 objects some must have run in the caller.
TEST(BackgroundTest, AWaitBeforeTheThreadBeginsDoesTheWorkInTheCallerAndTheWorkRunsOnce) {
  cpu_set_t cpus;
  ASSERT_EQ(::sched_getaffinity(0, sizeof cpus, &cpus), 0);
  ASSERT_GE(CPU_COUNT(&cpus), 2) << "this test needs two CPUs";
  const pid_t me = static_cast<pid_t>(::syscall(SYS_gettid));
  int in_caller = 0;
  int in_thread = 0;
  for (int i = 0; i < 200; ++i) {
    std::atomic<int> runs{0};
    pid_t ran_on = 0;
    {
      Background work([&] {
        ran_on = static_cast<pid_t>(::syscall(SYS_gettid));
        runs.fetch_add(1);
      });
      if (i % 4 == 3) ::usleep(200);  // now and then the thread gets there first
      work.Wait();
      EXPECT_EQ(runs.load(), 1) << "Wait returned before the work was done";
      (ran_on == me ? in_caller : in_thread) += 1;
      if (ran_on == me) {
        EXPECT_EQ(work.started_on(), -1);
      }
    }
    EXPECT_EQ(runs.load(), 1) << "the work ran on both sides";
  }
  EXPECT_GT(in_caller, 0) << "no Wait did the work the thread had not begun";
  std::printf("in the caller %d, on the thread %d\n", in_caller, in_thread);
}

// Work that throws in the caller's Wait leaves the object done: the
// exception reaches the caller, and the destructor does not wait for ever.
TEST(BackgroundTest, WorkThatThrowsInTheCallerLeavesTheObjectDone) {
  cpu_set_t cpus;
  ASSERT_EQ(::sched_getaffinity(0, sizeof cpus, &cpus), 0);
  ASSERT_GE(CPU_COUNT(&cpus), 2) << "this test needs two CPUs";
  int thrown = 0;
  for (int i = 0; i < 50 && thrown == 0; ++i) {
    const pid_t me = static_cast<pid_t>(::syscall(SYS_gettid));
    Background work([me] {
      if (static_cast<pid_t>(::syscall(SYS_gettid)) == me) throw std::runtime_error("in the caller");
    });
    try {
      work.Wait();
    } catch (const std::runtime_error&) {
      ++thrown;
      work.Wait();  // returns: the work is done
    }
  }  // each object going returns too
  EXPECT_EQ(thrown, 1) << "no Wait took the work in fifty tries";
}

// With one CPU there is nothing to run beside: the work runs in the caller.
TEST(BackgroundTest, OnOneCpuTheWorkRunsInTheCaller) {
  cpu_set_t cpus;
  ASSERT_EQ(::sched_getaffinity(0, sizeof cpus, &cpus), 0);
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(::sched_getcpu(), &one);
  ASSERT_EQ(::sched_setaffinity(0, sizeof one, &one), 0);
  pid_t tid = 0;
  Background work([&] { tid = static_cast<pid_t>(::syscall(SYS_gettid)); });
  EXPECT_EQ(tid, static_cast<pid_t>(::syscall(SYS_gettid))) << "done before the constructor returned, here";
  ASSERT_EQ(::sched_setaffinity(0, sizeof cpus, &cpus), 0);
}

TEST(BlockedSignalsTest, HoldsTheSetAndPutsTheMaskBackAsItWas) {
  sigset_t usr2;
  ::sigemptyset(&usr2);
  ::sigaddset(&usr2, SIGUSR2);
  BlockedSignals outer(usr2);  // already blocked when the inner one starts
  {
    BlockedSignals all(BlockedSignals::kAll);
    sigset_t now;
    ASSERT_EQ(::pthread_sigmask(SIG_SETMASK, nullptr, &now), 0);
    EXPECT_EQ(::sigismember(&now, SIGINT), 1);
    EXPECT_EQ(::sigismember(&now, SIGTERM), 1);
    EXPECT_EQ(::sigismember(&now, SIGUSR2), 1);
  }
  sigset_t after;
  ASSERT_EQ(::pthread_sigmask(SIG_SETMASK, nullptr, &after), 0);
  EXPECT_EQ(::sigismember(&after, SIGINT), 0) << "the inner block was not undone";
  EXPECT_EQ(::sigismember(&after, SIGUSR2), 1) << "the outer block was undone too";
}

}  // namespace
}  // namespace corral
