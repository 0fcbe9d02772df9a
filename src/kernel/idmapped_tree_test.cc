// OpenTreeSeenAsOthers from many threads at once (an executor's caller
// spawns from several): as root every call gives an idmapped tree of /etc; as any other user every
// call is refused with the same error (idmapping the host's filesystem needs
// CAP_SYS_ADMIN over it), and none crashes or leaves a holder behind.
#include "kernel/idmapped_tree.h"

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "kernel/kernel_abi.h"

namespace corral {
namespace {

TEST(IdmappedTree, ManyThreadsAtOnceEachGetTheirOwnTreeOrTheSameRefusal) {
  struct stat st;
  ASSERT_EQ(::stat("/etc", &st), 0);
  FileIdentity pin{st.st_dev, st.st_ino};
  std::atomic<int> trees = 0;
  std::mutex mutex;
  std::set<std::string> refusals;
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 16; ++i) {
        Result<UniqueFd> tree = OpenTreeSeenAsOthers("/etc", pin, kabi::kMountAttrRdonly);
        if (tree.ok()) {
          trees += tree->get() >= 0;
        } else {
          std::lock_guard<std::mutex> lock(mutex);
          refusals.insert(tree.error().message() + " errno " + std::to_string(tree.error().error_number()));
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  if (::geteuid() == 0) {
    EXPECT_EQ(trees, 8 * 16);
    EXPECT_TRUE(refusals.empty()) << *refusals.begin();
  } else {
    EXPECT_EQ(trees, 0);
    EXPECT_EQ(refusals.size(), 1u) << "one refusal, the same for every call";
  }
  // Every holder was reaped: no child is left to wait for.
  EXPECT_EQ(::waitpid(-1, nullptr, WNOHANG), -1);
  EXPECT_EQ(errno, ECHILD);
}

}  // namespace
}  // namespace corral
