// Runs a command and reports its own peak resident memory. A child's ru_maxrss counts the memory
// of the process it was forked from (the kernel carries the forked copy's high-water mark across
// exec), so a test process of 75 MB could not tell a child of 10 MB from one of 75. Started by the
// tests through exec, this launcher is a few hundred KB, and so is what its child inherits.
//   usage: medusa_peak_rss REPORT SECONDS PROGRAM [ARG...]
// Runs PROGRAM with this process's stdin, stdout and stderr, ends it with SIGALRM after SECONDS,
// writes "<peak resident KB>" to REPORT, and exits as PROGRAM did (killed by the same signal).
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char** argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: medusa_peak_rss REPORT SECONDS PROGRAM [ARG...]\n");
        return 127;
    }
    const pid_t pid = fork();
    if (pid < 0) return 127;
    if (pid == 0) {
        alarm((unsigned)atoi(argv[2]));  // alarms are not inherited across fork: set in the child
        execv(argv[3], argv + 3);
        _exit(127);
    }
    int status = 0;
    struct rusage ru;
    if (wait4(pid, &status, 0, &ru) != pid) return 127;
    FILE* report = fopen(argv[1], "w");
    if (report) {
        fprintf(report, "%ld\n", ru.ru_maxrss);
        fclose(report);
    }
    if (WIFSIGNALED(status)) {
        signal(WTERMSIG(status), SIG_DFL);
        raise(WTERMSIG(status));
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 127;
}
