// Preloaded into `medusa` by the fault-injection tests (LD_PRELOAD) to make the real system calls
// fail the way a full disk or a killed process would, at a chosen moment:
//   MEDUSA_FAULT_ENOSPC_AFTER=N   regular files take N bytes in all, then write() fails with ENOSPC
//   MEDUSA_FAULT_KILL_AT_RENAME=K the process kills itself (SIGKILL) instead of its K-th rename
//   MEDUSA_FAULT_SIGINT_AT_RENAME=K  it gets SIGINT (Ctrl-C) at its K-th rename, which then goes on
//   MEDUSA_FAULT_SIGINT_AT_FLUSH=K   it gets SIGINT at its K-th fflush (generation flushes each step)
// Only direct calls are caught (the program's own file writer and renames), not stdio's
// internal ones, so the messages on stdout and stderr still come through.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static long long env_number(const char* name) {
    const char* v = getenv(name);
    return v && *v ? atoll(v) : -1;
}

static atomic_llong bytes_left = -2;  // -2: not read yet, -1: no limit
static atomic_int renames;

ssize_t write(int fd, const void* buf, size_t n) {
    static ssize_t (*real_write)(int, const void*, size_t);
    if (!real_write) real_write = (ssize_t(*)(int, const void*, size_t))dlsym(RTLD_NEXT, "write");
    if (atomic_load(&bytes_left) == -2) atomic_store(&bytes_left, env_number("MEDUSA_FAULT_ENOSPC_AFTER"));
    struct stat st;
    if (atomic_load(&bytes_left) >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
        const long long left = atomic_load(&bytes_left);
        if (left == 0) {
            errno = ENOSPC;
            return -1;
        }
        if ((long long)n > left) n = (size_t)left;  // a short write first, as a filling disk gives
        atomic_fetch_sub(&bytes_left, (long long)n);
    }
    return real_write(fd, buf, n);
}

static atomic_int flushes;

static void count_rename(void) {
    const int n = atomic_fetch_add(&renames, 1) + 1;
    if (n == env_number("MEDUSA_FAULT_KILL_AT_RENAME")) raise(SIGKILL);
    if (n == env_number("MEDUSA_FAULT_SIGINT_AT_RENAME")) raise(SIGINT);
}

int fflush(FILE* f) {
    static int (*real_fflush)(FILE*);
    if (!real_fflush) real_fflush = (int (*)(FILE*))dlsym(RTLD_NEXT, "fflush");
    if (atomic_fetch_add(&flushes, 1) + 1 == env_number("MEDUSA_FAULT_SIGINT_AT_FLUSH")) raise(SIGINT);
    return real_fflush(f);
}

int rename(const char* from, const char* to) {
    static int (*real_rename)(const char*, const char*);
    if (!real_rename) real_rename = (int (*)(const char*, const char*))dlsym(RTLD_NEXT, "rename");
    count_rename();
    return real_rename(from, to);
}

int renameat2(int from_dir, const char* from, int to_dir, const char* to, unsigned flags) {
    static int (*real_renameat2)(int, const char*, int, const char*, unsigned);
    if (!real_renameat2) real_renameat2 = (int (*)(int, const char*, int, const char*, unsigned))dlsym(RTLD_NEXT, "renameat2");
    count_rename();
    return real_renameat2(from_dir, from, to_dir, to, flags);
}
