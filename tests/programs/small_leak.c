/* A small C program for `nnprof record --memory`: churns the heap, grows a buffer with
 * realloc, keeps one block in a global, and leaks three 1 KiB blocks in leak_three(). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char* g_table; /* external: the compiler cannot drop it */
static void* volatile g_sink; /* keeps the compiler from eliding malloc/free pairs */

__attribute__((noinline)) void leak_three(void) {
  for (int i = 0; i < 3; ++i) {
    char* p = malloc(1024);
    memset(p, i, 1024);
  }
}

int main(void) {
  g_table = calloc(512, 8);
  for (int i = 0; i < 10000; ++i) {
    char* p = malloc((size_t)(16 + i % 512));
    p[0] = (char)i;
    g_sink = p;
    free(p);
  }
  char* buf = NULL;
  for (size_t n = 64; n <= 65536; n *= 2) {
    buf = realloc(buf, n);
    g_sink = buf;
  }
  free(buf);
  leak_three();
  puts("small_leak done");
  return 0;
}
