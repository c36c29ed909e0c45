/*
 * sbtest.c -- main() of every C test binary (the API: sbtest.h).
 *
 *   test_x [--filter GLOB] [--list]
 *
 * Runs the tests one at a time, in source order, each in a forked process of its own
 * process group, and prints one line per test: PASS, FAIL (with why: the exit status,
 * the signal, or the timeout) or SKIP (with the reason).  An assertion that fails prints
 * its own line first, from the test process.  Last comes "BINARY: N tests: P passed,
 * F failed, S skipped"; the exit status is 1 if any test failed, else 0.
 *
 * A test passes when its process exits with .exit_code (0 by default) after no
 * cr_expect failed, or, for a test with .signal, when that signal ends it.  A test that
 * outlives its .timeout (seconds; 60 if none) is killed, with its process group, and
 * fails.  SBTEST_TIMEOUT_FACTOR (a number, default 1) scales every timeout: emulation
 * and sanitizers run the same tests several times slower.
 *
 * --filter GLOB runs only the tests whose "suite/name" matches (fnmatch); --list names
 * them without running them.
 */
#include "sbtest.h"

#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define SBT_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer) || __has_feature(address_sanitizer)
#define SBT_SANITIZER 1
#endif
#endif
#ifdef SBT_SANITIZER
#include <sanitizer/common_interface_defs.h>
#endif

#define DEFAULT_TIMEOUT 60.0

static struct sbt_test *tests;
static struct sbt_suite *suites;

void sbt_add_test(struct sbt_test *t) { t->next = tests, tests = t; }
void sbt_add_suite(struct sbt_suite *s) { s->next = suites, suites = s; }

/* Shared with the test process (MAP_SHARED): a skip is not a pass, and says why. */
static struct {
    int skipped;
    char reason[256];
} *shared;

/* In the test process: its name, the stderr it started with (messages go there even
 * while the test captures fd 2), the capture, and the count of failed cr_expect. */
static char cur_name[256];
static int err_fd = STDERR_FILENO;
static int cap_fd = -1;
static atomic_int expect_failures;

/* ---- in the test process ------------------------------------------------------------ */

void sbt_fail(bool fatal, const char *file, int line, const char *what, const char *fmt, ...)
{
    char user[512]; /* " " and the test's own message, if any (see sbtest.h) */
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(user, sizeof user, fmt, ap);
    va_end(ap);
    dprintf(err_fd, "%s:%d: %s: %s failed: %s%s%s\n", file, line, cur_name,
            fatal ? "assertion" : "expectation", what, user[1] ? " -- " : "", user + 1);
    if (fatal) {
        fflush(NULL);
        _exit(1); /* from any thread: the process is the test */
    }
    /* relaxed: read by the test's thread at its end, after the body joined its threads */
    atomic_fetch_add_explicit(&expect_failures, 1, memory_order_relaxed);
}

void sbt_skip(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(shared->reason, sizeof shared->reason, fmt, ap);
    va_end(ap);
    shared->skipped = 1;
    fflush(NULL);
    _exit(0);
}

void sbt_log(const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    size_t n = strlen(msg);
    dprintf(err_fd, "[info] %.*s\n", (int)(n && msg[n - 1] == '\n' ? n - 1 : n), msg);
}

void cr_redirect_stderr(void)
{
    fflush(stderr);
    cap_fd = memfd_create("sbtest-stderr", MFD_CLOEXEC);
    if (cap_fd < 0 || dup2(cap_fd, STDERR_FILENO) < 0)
        sbt_fail(1, __FILE__, __LINE__, "cr_redirect_stderr", " %s", strerror(errno));
#ifdef SBT_SANITIZER
    /* a sanitizer's report must not vanish into the capture */
    __sanitizer_set_report_fd((void *)(intptr_t)err_fd);
#endif
}

/* Everything written to stderr since cr_redirect_stderr; NULL without it. */
const char *sbt_stderr(void)
{
    static char *buf;
    struct stat st;
    fflush(stderr);
    if (cap_fd < 0 || fstat(cap_fd, &st) < 0 || !(buf = realloc(buf, (size_t)st.st_size + 1)))
        return NULL;
    ssize_t got = pread(cap_fd, buf, (size_t)st.st_size, 0);
    buf[got > 0 ? got : 0] = '\0';
    return buf;
}

/* s as a C literal, cut to fit out[n], so that a failure stays on one line */
static const char *quoted(char *out, size_t n, const char *s)
{
    size_t o = 0;
    if (!s)
        return "NULL";
    out[o++] = '"';
    for (; *s && o + 8 < n; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '\n' || c == '"' || c == '\\')
            o += (size_t)snprintf(out + o, n - o, "\\%c", c == '\n' ? 'n' : c);
        else if (c < 0x20 || c == 0x7f)
            o += (size_t)snprintf(out + o, n - o, "\\x%02x", c);
        else
            out[o++] = (char)c;
    }
    snprintf(out + o, n - o, "%s\"", *s ? "..." : "");
    return out;
}

const char *sbt_what(char *w, const char *expr, const char *a, const char *b, bool quote)
{
    char qa[400], qb[400];
    snprintf(w, 1024, "%s: left %s, right %s", expr, quote ? quoted(qa, sizeof qa, a) : a,
             quote ? quoted(qb, sizeof qb, b) : b);
    return w;
}

void sbt_val_i(char *b, size_t n, long long v) { snprintf(b, n, "%lld", v); }
void sbt_val_u(char *b, size_t n, unsigned long long v)
{
    snprintf(b, n, v < 10 ? "%llu" : "%llu (%#llx)", v, v);
}
void sbt_val_f(char *b, size_t n, long double v) { snprintf(b, n, "%.17Lg", v); }
void sbt_val_p(char *b, size_t n, const volatile void *v) { snprintf(b, n, "%p", (void *)v); }

static void run_body(const struct sbt_test *t, void *param)
{
    setpgid(0, 0);
    for (const struct sbt_suite *s = suites; s; s = s->next)
        if (s->init && strcmp(s->name, t->suite) == 0)
            s->init();
    if (t->init)
        t->init();
    if (t->pfn)
        t->pfn(param);
    else
        t->fn();
    if (t->fini)
        t->fini();
    /* exit, not _exit: atexit work (LeakSanitizer, TSan's last reports) belongs to it */
    exit(atomic_load_explicit(&expect_failures, memory_order_relaxed) ? 1 : t->exit_code);
}

/* ---- in the runner ------------------------------------------------------------------ */

/* The test in its own process group misses the terminal's ^C and make's SIGTERM: the
 * runner passes them on, so that no test outlives it. */
static volatile pid_t running;

static void on_signal(int sig)
{
    if (running > 0)
        kill(-running, SIGKILL);
    signal(sig, SIG_DFL);
    raise(sig);
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Runs one test instance; returns 1 if it failed. */
static int run_one(const struct sbt_test *t, void *param, double factor, int *skips)
{
    double limit = (t->timeout > 0 ? t->timeout : DEFAULT_TIMEOUT) * factor;
    memset(shared, 0, sizeof *shared);
    fflush(NULL);
    double t0 = now();
    pid_t pid = fork();
    if (pid < 0) {
        printf("FAIL %s: fork: %s\n", cur_name, strerror(errno));
        return 1;
    }
    if (pid == 0)
        run_body(t, param);
    setpgid(pid, pid); /* also here: the kill below must not race the child's own call */
    running = pid;
    int st = 0;
    bool timed_out = false;
    for (long nap = 100000; waitpid(pid, &st, WNOHANG) != pid;) {
        if (now() - t0 > limit) {
            kill(-pid, SIGKILL);
            kill(pid, SIGKILL);
            waitpid(pid, &st, 0);
            timed_out = true;
            break;
        }
        nanosleep(&(struct timespec){0, nap}, NULL);
        nap = nap < 10000000 ? nap * 2 : nap; /* 0.1 ms, doubling to 10 ms */
    }
    kill(-pid, SIGKILL); /* nothing the test started outlives it */
    running = 0;
    double secs = now() - t0;

    char why[128] = "";
    if (timed_out)
        snprintf(why, sizeof why, "timed out after %.1f s", limit);
    else if (shared->skipped) {
        printf("SKIP %s: %s\n", cur_name, shared->reason + (shared->reason[0] == ' '));
        ++*skips;
        return 0;
    } else if (WIFSIGNALED(st) && WTERMSIG(st) != t->signal)
        snprintf(why, sizeof why, "killed by signal %d (%s)", WTERMSIG(st),
                 strsignal(WTERMSIG(st)));
    else if (WIFEXITED(st) && t->signal)
        snprintf(why, sizeof why, "exit status %d, expected signal %d (%s)", WEXITSTATUS(st),
                 t->signal, strsignal(t->signal));
    else if (WIFEXITED(st) && WEXITSTATUS(st) != t->exit_code)
        snprintf(why, sizeof why, "exit status %d%s", WEXITSTATUS(st),
                 WEXITSTATUS(st) == 66 ? " (a ThreadSanitizer report)" : "");
    if (why[0])
        printf("FAIL %s: %s (%.2f s)\n", cur_name, why, secs);
    else
        printf("PASS %s (%.2f s)\n", cur_name, secs);
    return why[0] != 0;
}

static int by_position(const void *a, const void *b)
{
    const struct sbt_test *x = *(struct sbt_test *const *)a;
    const struct sbt_test *y = *(struct sbt_test *const *)b;
    int c = strcmp(x->file, y->file);
    return c ? c : (x->line > y->line) - (x->line < y->line);
}

int main(int argc, char **argv)
{
    const char *filter = NULL;
    bool list = false;
    for (int a = 1; a < argc; a++) {
        if (!strcmp(argv[a], "--filter") && a + 1 < argc)
            filter = argv[++a];
        else if (!strcmp(argv[a], "--list"))
            list = true;
        else {
            fprintf(stderr, "usage: %s [--filter GLOB] [--list]  (GLOB: suite/name)\n",
                    argv[0]);
            return 2;
        }
    }
    const char *f = getenv("SBTEST_TIMEOUT_FACTOR");
    double factor = f && atof(f) > 0 ? atof(f) : 1.0;
    int err = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
    err_fd = err >= 0 ? err : STDERR_FILENO;
    setvbuf(stdout, NULL, _IOLBF, 0);
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    shared = mmap(NULL, sizeof *shared, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
                  -1, 0);
    if (shared == MAP_FAILED) {
        perror("mmap");
        return 2;
    }

    int n = 0, k = 0;
    for (struct sbt_test *t = tests; t; t = t->next)
        n++;
    struct sbt_test **order = malloc(((size_t)n + 1) * sizeof *order);
    for (struct sbt_test *t = tests; t; t = t->next)
        order[k++] = t;
    qsort(order, (size_t)n, sizeof *order, by_position);

    int run = 0, failed = 0, skipped = 0;
    for (int i = 0; i < n; i++) {
        const struct sbt_test *t = order[i];
        snprintf(cur_name, sizeof cur_name, "%s/%s", t->suite, t->name);
        if (filter && fnmatch(filter, cur_name, 0) != 0)
            continue;
        if (list) {
            puts(cur_name);
            continue;
        }
        if (!t->params) {
            run++;
            failed += run_one(t, NULL, factor, &skipped);
            continue;
        }
        struct sbt_params p = t->params();
        for (size_t j = 0; j < p.length; j++) {
            snprintf(cur_name, sizeof cur_name, "%s/%s[%zu]", t->suite, t->name, j);
            run++;
            failed += run_one(t, (char *)p.params + j * p.size, factor, &skipped);
        }
        free(p.params);
    }
    free(order); /* LeakSanitizer checks the runner too */
    if (!list)
        printf("%s: %d tests: %d passed, %d failed, %d skipped\n", argv[0], run,
               run - failed - skipped, failed, skipped);
    return failed ? 1 : 0;
}
