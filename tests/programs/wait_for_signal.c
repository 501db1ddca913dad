/* Allocates, writes its pid to argv[1], then waits to be killed (for SIGTERM/SIGINT tests). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  for (int i = 0; i < 100; ++i) {
    char* p = malloc(4096);
    memset(p, 0, 4096);
  }
  char tmp[4096];
  snprintf(tmp, sizeof tmp, "%s.tmp", argv[1]);
  FILE* f = fopen(tmp, "w");
  if (f == NULL) return 3;
  fprintf(f, "%d\n", (int)getpid());
  fclose(f);
  rename(tmp, argv[1]); /* appears complete */
  for (int i = 0; i < 600; ++i) sleep(1);
  return 0;
}
