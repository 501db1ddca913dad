// A multi-threaded C++ program for `nnprof record --memory`: four threads build and drop
// containers; one thread keeps a vector alive in a global until exit.
#include <cstdio>
#include <map>
#include <string>
#include <thread>
#include <vector>

std::vector<std::string>* g_kept = nullptr;

int main() {
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([t] {
      for (int round = 0; round < 50; ++round) {
        std::map<int, std::string> m;
        for (int i = 0; i < 200; ++i) m[i] = std::string(static_cast<std::size_t>(32 + i % 64), 'x');
        std::vector<double> v(1000 + static_cast<std::size_t>(t) * 100);
        v[0] = round;
      }
    });
  }
  for (auto& th : threads) th.join();
  g_kept = new std::vector<std::string>(100, std::string(100, 'k'));
  std::printf("threaded_alloc done: %zu\n", g_kept->size());
  return 0;
}
