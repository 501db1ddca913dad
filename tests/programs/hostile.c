/* Programs that have hurt profilers, one per mode (argv[1]), for the hostile-program suite
 * (tests/test_hostile_programs.cpp). Each prints what it did to stdout, flushed before it
 * ends, so that a run under `nnprof record` can be compared with a run without it. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile double g_sink;

/* Burns CPU time for about `ms` milliseconds, so that a sampler has something to sample. */
__attribute__((noinline)) static void burn(int ms) {
  struct timespec start, now;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &start);
  double x = 1.0;
  for (;;) {
    for (int i = 0; i < 100000; ++i) x = x * 1.0000001 + 1e-9;
    g_sink = x;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
    if ((now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000 >= ms) return;
  }
}

static void say(const char* text) {
  fputs(text, stdout);
  fflush(stdout);
}

__attribute__((noinline)) static void crash(volatile int* p) { *p = 42; }

static volatile sig_atomic_t g_sigprof_count;
static sigjmp_buf g_recover;
static void count_sigprof(int sig) {
  (void)sig;
  ++g_sigprof_count;
}
static void recover_segv(int sig) {
  (void)sig;
  siglongjmp(g_recover, 1);
}

/* A crash reporter's handler (Python's faulthandler, breakpad): it reports, puts back the
 * action it found before it and raises again, so that the process ends as it would have. */
static struct sigaction g_previous_segv;
static void report_and_chain(int sig) {
  static const char line[] = "crash reported; chaining to the previous action\n";
  (void)!write(STDOUT_FILENO, line, sizeof line - 1);
  sigaction(sig, &g_previous_segv, NULL);
  raise(sig);
}

static void* tiny_thread(void* arg) {
  g_sink = (double)(size_t)arg;
  return NULL;
}

static int g_malloc_ms;
static void* malloc_loop(void* arg) {
  (void)arg;
  struct timespec start, now;
  clock_gettime(CLOCK_MONOTONIC, &start);
  for (;;) {
    for (int i = 0; i < 1000; ++i) {
      void* p = malloc((size_t)(16 + i % 512));
      ((volatile char*)p)[0] = 1;
      free(p);
    }
    clock_gettime(CLOCK_MONOTONIC, &now);
    if ((now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000 >= g_malloc_ms) return NULL;
  }
}

static int wait_child(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  const char* mode = argv[1];
  if (strcmp(mode, "work") == 0) {
    burn(50);
    say("work done\n");
    return 0;
  }
  burn(100);
  if (strcmp(mode, "segv") == 0) {
    say("crashing\n");
    crash(NULL);
  } else if (strcmp(mode, "abort") == 0) {
    say("aborting\n");
    abort();
  } else if (strcmp(mode, "exit_now") == 0) {
    say("leaving with _exit(3)\n");
    _exit(3);
  } else if (strcmp(mode, "sigkill") == 0) {
    say("killing myself\n");
    kill(getpid(), SIGKILL);
  } else if (strcmp(mode, "sighup") == 0) {
    say("hanging up\n");
    kill(getpid(), SIGHUP);
  } else if (strcmp(mode, "sigpipe") == 0) {
    int fds[2];
    if (pipe(fds) != 0) return 4;
    close(fds[0]);
    say("writing to a closed pipe\n");
    if (write(fds[1], "x", 1) < 0) say("write failed instead of SIGPIPE\n");
  } else if (strcmp(mode, "fork") == 0) {
    /* The child works, flushes and returns from main: atexit handlers run in it too. */
    const pid_t pid = fork();
    if (pid == 0) {
      burn(50);
      say("child done\n");
      return 0;
    }
    printf("parent: child ended with %d\n", wait_child(pid));
  } else if (strcmp(mode, "fork_exec") == 0 || strcmp(mode, "vfork") == 0) {
    const pid_t pid = strcmp(mode, "vfork") == 0 ? vfork() : fork();
    if (pid == 0) {
      execl(argv[0], argv[0], "work", (char*)NULL);
      _exit(127);
    }
    printf("parent: child ended with %d\n", wait_child(pid));
  } else if (strcmp(mode, "exec") == 0) {
    say("exec'ing\n");
    execl(argv[0], argv[0], "work", (char*)NULL);
    return 127;
  } else if (strcmp(mode, "own_handlers") == 0) {
    /* Its own SIGPROF (never sent by the program: it must count 0) and SIGSEGV (recovers). */
    signal(SIGPROF, count_sigprof);
    signal(SIGSEGV, recover_segv);
    burn(300);
    if (sigsetjmp(g_recover, 1) == 0) crash(NULL);
    printf("recovered from SIGSEGV; SIGPROF seen: %d\n", (int)g_sigprof_count);
  } else if (strcmp(mode, "chained_crash_handler") == 0) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = report_and_chain;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, &g_previous_segv);
    /* What it found before it: SIG_DFL, with or without a profiler. */
    printf("previous SIGSEGV action: %s\n", g_previous_segv.sa_handler == SIG_DFL ? "default" : "a handler");
    fflush(stdout);
    burn(100);
    crash(NULL);
  } else if (strcmp(mode, "closed_fds") == 0 && argc > 2) {
    /* Closes every descriptor the agent may hold, fills the numbers with its own file, crashes. */
    for (int fd = 3; fd < 1024; ++fd) close(fd);
    const int fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd != 3) return 5;
    for (int other = 4; other < 16; ++other) dup2(fd, other);
    if (write(fd, "program data\n", 13) != 13) return 6;
    burn(50);
    say("crashing with my file open\n");
    crash(NULL);
  } else if (strcmp(mode, "threads200") == 0) {
    for (int batch = 0; batch < 20; ++batch) {
      pthread_t t[10];
      for (int i = 0; i < 10; ++i) pthread_create(&t[i], NULL, tiny_thread, (void*)(size_t)i);
      for (int i = 0; i < 10; ++i) pthread_join(t[i], NULL);
    }
    say("200 threads joined\n");
  } else if (strcmp(mode, "malloc3") == 0) {
    g_malloc_ms = argc > 2 ? atoi(argv[2]) : 1000;
    pthread_t t[3];
    for (int i = 0; i < 3; ++i) pthread_create(&t[i], NULL, malloc_loop, NULL);
    for (int i = 0; i < 3; ++i) pthread_join(t[i], NULL);
    say("malloc threads done\n");
  } else {
    return 2;
  }
  fflush(stdout);
  return 0;
}
