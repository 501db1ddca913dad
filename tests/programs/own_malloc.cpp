// An executable with an allocator of its own: its malloc and free come first in symbol
// lookup, before any preloaded library, so nnprof's hooks are bypassed.
#include <cstddef>
#include <cstdio>

extern "C" {
void* __libc_malloc(std::size_t);
void __libc_free(void*);
__attribute__((visibility("default"))) void* malloc(std::size_t n) { return __libc_malloc(n); }
__attribute__((visibility("default"))) void free(void* p) { __libc_free(p); }
}

int main() {
  free(malloc(100));
  std::puts("own malloc done");
  return 0;
}
