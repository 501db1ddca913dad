/* Allocates, then dereferences a null pointer: the profile must survive the crash. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

__attribute__((noinline)) void crash(volatile int* p) { *p = 42; }

int main(void) {
  for (int i = 0; i < 10; ++i) {
    char* p = malloc(2048);
    memset(p, 1, 2048);
  }
  fflush(stdout);
  crash(NULL);
  return 0;
}
