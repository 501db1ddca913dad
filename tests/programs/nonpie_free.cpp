// A non-PIE executable that takes the addresses of malloc and free in its code: the linker
// gives them canonical PLT entries, so dlsym("free") points into this executable although its
// calls still reach the allocator the dynamic linker chose (nnprof's hooks, preloaded).
#include <cstdio>
#include <cstdlib>

void (*volatile release)(void*);
void* (*volatile obtain)(std::size_t);

int main() {
  release = std::free;
  obtain = std::malloc;
  release(obtain(100));
  std::puts("nonpie done");
  return 0;
}
