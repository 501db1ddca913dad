// Burns CPU in named functions for `nnprof record` CPU-sampling tests: the main thread first,
// then a thread started later. With "exec" as its argument it first replaces itself with a
// second run of itself (a program that execs another one).
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <thread>

namespace {

// The calling thread's CPU time: a fixed amount of it gets the same number of samples
// however busy the machine is.
std::chrono::nanoseconds thread_cpu_now() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return std::chrono::seconds(ts.tv_sec) + std::chrono::nanoseconds(ts.tv_nsec);
}

std::uint64_t spin_for(std::chrono::milliseconds how_long) {
  std::uint64_t x = 88172645463325252ull;
  const auto end = thread_cpu_now() + how_long;
  while (thread_cpu_now() < end)
    for (int i = 0; i < 10'000; ++i) x = x * 6364136223846793005ull + 1442695040888963407ull;
  return x;
}

}  // namespace

extern "C" __attribute__((noinline)) std::uint64_t main_thread_spin() { return spin_for(std::chrono::milliseconds(300)); }
extern "C" __attribute__((noinline)) std::uint64_t late_thread_spin() { return spin_for(std::chrono::milliseconds(400)); }

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "exec") == 0) {
    char* args[] = {argv[0], nullptr};
    execv("/proc/self/exe", args);
    std::perror("execv");
    return 1;
  }
  std::uint64_t sink = main_thread_spin();
  std::thread late([&sink] { sink ^= late_thread_spin(); });
  late.join();
  std::printf("cpu_spin done %llu\n", static_cast<unsigned long long>(sink & 1));
  return 0;
}
