/*
 * check_compat/runner.c -- main() for the Criterion-style tests when they are built on
 * Check (the ThreadSanitizer build; see criterion/criterion.h for why and what maps
 * to what).
 *
 * The Test() constructors put every test on a list.  main() orders them by source line,
 * applies TestSuite() defaults, expands parameterized tests, and builds one Check Suite
 * with one TCase per test, so that each test gets its own timeout (tcase_set_timeout;
 * Check's CK_TIMEOUT_MULTIPLIER scales them all).  Every test instance is one index of a
 * single flat table of "slots"; each TCase adds the one trampoline, tramp(), as a loop
 * test over its slots, with the test's expected signal or exit status.  Check forks one
 * process per slot (fork mode is forced: signal, exit-status, timeout and skip handling
 * all need it), so a crash, a timeout or a sanitizer exit (TSan exits 66 on a report
 * with halt_on_error=1) fails that test only.
 *
 * Skips are reported through a byte per slot in a MAP_SHARED page that the test process
 * sets before it exits, so a skipped test is counted as skipped, never as passed.
 *
 * Output: one line per test as it ends (Check's log on stdout, unless CK_LOG_FILE_NAME
 * names a file), Check's summary (CK_VERBOSITY=silent|minimal|normal|verbose; --verbose
 * is verbose), then "S skipped" and a last line "P passed, F failed".  The exit status is 0
 * iff nothing failed.  Criterion's options accepted: --jobs N / -j N (ignored: Check runs
 * one test at a time), --short-filename (ignored), --verbose[=N], --filter GLOB (on
 * "suite/name", as Criterion), --list, --help.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "criterion/criterion.h"
#include "criterion/parameterized.h"
#include "criterion/redirect.h"

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define SBCC_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer) || __has_feature(address_sanitizer)
#define SBCC_SANITIZER 1
#endif
#endif
#ifdef SBCC_SANITIZER
#include <sanitizer/common_interface_defs.h>
#endif

/* ---- registry (filled by constructors, before main; single-threaded) -------------- */

static struct sbcc_test *tests;
static struct sbcc_suite *suites;

void sbcc_register_test(struct sbcc_test *t)
{
    t->next = tests;
    tests = t;
}

void sbcc_register_suite(struct sbcc_suite *s)
{
    s->next = suites;
    suites = s;
}

/* ---- the flat table of test instances --------------------------------------------- */

typedef struct slot {
    struct sbcc_test *t;
    const struct sbcc_suite *s; /* NULL: no TestSuite() for this suite */
    void *param;                /* parameterized: this instance's element */
    size_t k;                   /* parameterized: its index */
    int signal, exit_code;      /* after suite defaults */
} slot_t;

static slot_t *slots;
static int nslots;
static volatile unsigned char *skipped; /* MAP_SHARED: set by the test process */

/* In the test process: the slot it runs, the original stderr, captured streams. */
static int cur = -1;
static int err_fd = STDERR_FILENO;
static int cap_fd[3] = {-1, -1, -1};

/* cr_expect failures of the running test: possibly from several threads at once.  The
 * first failing thread claims first_msg (0 -> 1), writes it, then publishes it (2). */
static atomic_int expect_failures;
static atomic_int first_state;
static char first_msg[1024];
static const char *first_file;
static int first_line;

/* ---- assertions ------------------------------------------------------------------- */

/* The message Criterion would show: the user's, else ours; ours is kept after the
 * user's in brackets since it carries the operand values. */
static void format_failure(char *out, size_t n, const char *what, const char *fmt, va_list ap)
{
    char user[768];
    vsnprintf(user, sizeof user, fmt, ap);
    const char *u = user[0] == ' ' ? user + 1 : user; /* the macros' leading blank */
    if (u[0])
        snprintf(out, n, "%s [%s]", u, what);
    else
        snprintf(out, n, "%s", what);
}

void sbcc_fail_(int fatal, const char *file, int line, const char *what, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    format_failure(msg, sizeof msg, what, fmt, ap);
    va_end(ap);
    for (char *c = msg; *c; c++) /* Check reports one line per test */
        if (*c == '\n')
            *c = ' ';
    if (fatal) {
        fflush(NULL);
        _ck_assert_failed(file, line, "Failed", "%s", msg); /* _exit(1) in fork mode */
    }
    dprintf(err_fd, "%s:%d: expectation failed: %s\n", file, line, msg);
    /* relaxed: a counter; tramp() only needs to see it non-zero once the body is done,
     * which the body's own joins (or same-thread order) guarantee */
    atomic_fetch_add_explicit(&expect_failures, 1, memory_order_relaxed);
    int none = 0;
    /* relaxed: the claim orders nothing; the release store below publishes the text */
    if (atomic_compare_exchange_strong_explicit(&first_state, &none, 1, memory_order_relaxed,
                                                memory_order_relaxed)) {
        snprintf(first_msg, sizeof first_msg, "%s", msg);
        first_file = file;
        first_line = line;
        atomic_store_explicit(&first_state, 2, memory_order_release);
    }
}

void sbcc_skip_(const char *file, int line, const char *fmt, ...)
{
    char reason[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(reason, sizeof reason, fmt, ap);
    va_end(ap);
    const slot_t *sl = &slots[cur];
    dprintf(err_fd, "%s:%d: SKIP %s/%s: %s\n", file, line, sl->t->suite, sl->t->name,
            reason[0] == ' ' ? reason + 1 : reason);
    fflush(NULL);
    skipped[cur] = 1;
    /* End the process the way Check expects this test to end, so it is not a failure;
     * the flag above makes it count as skipped. */
    if (sl->signal) {
        sigset_t set;
        sigemptyset(&set);
        sigaddset(&set, sl->signal);
        signal(sl->signal, SIG_DFL);
        pthread_sigmask(SIG_UNBLOCK, &set, NULL);
        raise(sl->signal);
    }
    _exit(sl->exit_code);
}

void sbcc_log_(const char *level, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    size_t n = strlen(msg);
    if (n && msg[n - 1] == '\n')
        msg[n - 1] = '\0';
    dprintf(err_fd, "[%s] %s\n", level, msg);
}

char *sbcc_what_cmp_(char *buf, size_t n, const char *expr, const char *a, const char *b)
{
    snprintf(buf, n, "%s is false: left %s, right %s", expr, a, b);
    return buf;
}

/* s as a C string literal (quotes, escapes), cut to fit n bytes, so that a failure
 * stays on Check's one line. */
static const char *quoted(char *out, size_t n, const char *s)
{
    if (!s)
        return "NULL";
    size_t o = 0;
    out[o++] = '"';
    for (; *s && o + 8 < n; s++) {
        unsigned char c = (unsigned char)*s;
        const char *esc = c == '\n' ? "\\n" : c == '\t' ? "\\t" : c == '"' ? "\\\""
                        : c == '\\' ? "\\\\" : NULL;
        if (esc)
            o += (size_t)snprintf(out + o, n - o, "%s", esc);
        else if (c < 0x20 || c == 0x7f)
            o += (size_t)snprintf(out + o, n - o, "\\x%02x", c);
        else
            out[o++] = (char)c;
    }
    if (*s)
        o += (size_t)snprintf(out + o, n - o, "...");
    out[o++] = '"';
    out[o] = '\0';
    return out;
}

char *sbcc_what_str_(char *buf, size_t n, const char *expr, const char *a, const char *b)
{
    char qa[256], qb[256];
    snprintf(buf, n, "%s is false: left %s, right %s", expr, quoted(qa, sizeof qa, a),
             quoted(qb, sizeof qb, b));
    return buf;
}

void sbcc_val_i_(char *buf, long long v) { snprintf(buf, 48, "%lld", v); }

void sbcc_val_u_(char *buf, unsigned long long v)
{
    if (v < 10)
        snprintf(buf, 48, "%llu", v);
    else
        snprintf(buf, 48, "%llu (%#llx)", v, v);
}

void sbcc_val_f_(char *buf, long double v) { snprintf(buf, 48, "%.17Lg", v); }

void sbcc_val_p_(char *buf, const volatile void *v) { snprintf(buf, 48, "%p", (void *)v); }

/* ---- redirect.h ------------------------------------------------------------------- */

static void redirect(int fd, FILE *stream)
{
    fflush(stream);
    if (cap_fd[fd] >= 0)
        return;
    int m = memfd_create(fd == 1 ? "sbcc-stdout" : "sbcc-stderr", MFD_CLOEXEC);
    if (m < 0 || dup2(m, fd) < 0)
        sbcc_fail_(1, __FILE__, __LINE__, "redirect", "memfd/dup2: %s", strerror(errno));
    cap_fd[fd] = m;
#ifdef SBCC_SANITIZER
    /* Reports to the real stderr.  Set here, in the test process: the sanitizer drops
     * a report fd that a parent process set (it would open log_path instead). */
    if (fd == STDERR_FILENO)
        __sanitizer_set_report_fd((void *)(intptr_t)err_fd);
#endif
}

void cr_redirect_stdout(void) { redirect(STDOUT_FILENO, stdout); }
void cr_redirect_stderr(void) { redirect(STDERR_FILENO, stderr); }

const char *sbcc_captured_(int fd)
{
    static char *buf;
    fflush(fd == 1 ? stdout : stderr);
    if (fd < 1 || fd > 2 || cap_fd[fd] < 0)
        return NULL;
    struct stat st;
    if (fstat(cap_fd[fd], &st) < 0)
        return NULL;
    free(buf);
    buf = malloc((size_t)st.st_size + 1);
    if (!buf)
        return NULL;
    ssize_t got = pread(cap_fd[fd], buf, (size_t)st.st_size, 0);
    buf[got > 0 ? got : 0] = '\0';
    return buf;
}

/* ---- one test instance, in Check's forked process --------------------------------- */

static void tramp(int i)
{
    const slot_t *sl = &slots[i];
    cur = i;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (sl->s && sl->s->init)
        sl->s->init();
    if (sl->t->init)
        sl->t->init();
    if (sl->t->pfn)
        sl->t->pfn(sl->param);
    else
        sl->t->fn();
    if (sl->t->fini)
        sl->t->fini();
    if (sl->s && sl->s->fini)
        sl->s->fini();
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
    if (secs >= 1.0) { /* where a sanitizer's slowdown goes; Check's log has no times */
        char k[32] = "";
        if (sl->t->pfn)
            snprintf(k, sizeof k, "[%zu]", sl->k);
        dprintf(err_fd, "[time] %s/%s%s: %.1f s\n", sl->t->suite, sl->t->name, k, secs);
    }
    /* relaxed: see sbcc_fail_ */
    int n = atomic_load_explicit(&expect_failures, memory_order_relaxed);
    if (n) {
        fflush(NULL);
        /* acquire: pairs with the release that published first_msg; a thread still
         * writing it (one the body did not join) leaves it unread */
        if (atomic_load_explicit(&first_state, memory_order_acquire) == 2)
            _ck_assert_failed(first_file, first_line, "Failed",
                              "%d expectation%s failed; first: %s", n, n == 1 ? "" : "s",
                              first_msg);
        _ck_assert_failed(sl->t->file, sl->t->line, "Failed", "%d expectation%s failed", n,
                          n == 1 ? "" : "s");
    }
}

/* ---- main ------------------------------------------------------------------------- */

static int by_position(const void *a, const void *b)
{
    const struct sbcc_test *x = *(struct sbcc_test *const *)a;
    const struct sbcc_test *y = *(struct sbcc_test *const *)b;
    int c = strcmp(x->file, y->file);
    return c ? c : (x->line > y->line) - (x->line < y->line);
}

static const struct sbcc_suite *find_suite(const char *name)
{
    for (const struct sbcc_suite *s = suites; s; s = s->next)
        if (strcmp(s->name, name) == 0)
            return s;
    return NULL;
}

static void usage(const char *prog, FILE *f)
{
    fprintf(f,
            "usage: %s [--filter GLOB] [--list] [--verbose] [--jobs N] [--short-filename]\n"
            "  Criterion's tests on Check (the TSan build). GLOB matches \"suite/name\".\n"
            "  Environment: CK_VERBOSITY, CK_TIMEOUT_MULTIPLIER (Check's).\n",
            prog);
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0); /* nothing buffered is copied into a fork */
    const char *filter = NULL;
    bool list = false, verbose = false;
    for (int a = 1; a < argc; a++) {
        const char *o = argv[a];
        if (!strcmp(o, "--jobs") || !strcmp(o, "-j")) {
            a++; /* one at a time anyway */
        } else if (!strncmp(o, "--jobs=", 7) || (!strncmp(o, "-j", 2) && o[2])) {
        } else if (!strcmp(o, "--short-filename")) {
        } else if (!strcmp(o, "--verbose") || !strncmp(o, "--verbose=", 10)) {
            verbose = true;
        } else if (!strcmp(o, "--filter") && a + 1 < argc) {
            filter = argv[++a];
        } else if (!strncmp(o, "--filter=", 9)) {
            filter = o + 9;
        } else if (!strcmp(o, "--list")) {
            list = true;
        } else if (!strcmp(o, "--help") || !strcmp(o, "-h")) {
            usage(argv[0], stdout);
            return 0;
        } else {
            fprintf(stderr, "%s: unknown option %s\n", argv[0], o);
            usage(argv[0], stderr);
            return 2;
        }
    }

    /* The tests in source order. */
    int ntests = 0;
    for (struct sbcc_test *t = tests; t; t = t->next)
        ntests++;
    struct sbcc_test **order = calloc((size_t)ntests + 1, sizeof *order);
    TTest *ttests = calloc((size_t)ntests + 1, sizeof *ttests);
    if (!order || !ttests) {
        perror("calloc");
        return 2;
    }
    int k = 0;
    for (struct sbcc_test *t = tests; t; t = t->next)
        order[k++] = t;
    qsort(order, (size_t)ntests, sizeof *order, by_position);

    if (list) {
        for (int i = 0; i < ntests; i++)
            printf("%s/%s%s%s\n", order[i]->suite, order[i]->name,
                   order[i]->description ? ": " : "",
                   order[i]->description ? order[i]->description : "");
        return 0;
    }

    /* A messages fd that test processes keep even if they capture stderr. */
    int dupd = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
    if (dupd >= 0)
        err_fd = dupd;

    /* Expand into slots: one per test, one per parameter. */
    int disabled = 0;
    int cap = ntests + 16;
    slots = calloc((size_t)cap, sizeof *slots);
    int *first = calloc((size_t)ntests + 1, sizeof *first);
    int *count = calloc((size_t)ntests + 1, sizeof *count);
    struct criterion_test_params *params = calloc((size_t)ntests + 1, sizeof *params);
    if (!slots || !first || !count || !params) {
        perror("calloc");
        return 2;
    }
    for (int i = 0; i < ntests; i++) {
        struct sbcc_test *t = order[i];
        const struct sbcc_suite *s = find_suite(t->suite);
        char full[256];
        snprintf(full, sizeof full, "%s/%s", t->suite, t->name);
        first[i] = nslots;
        if (filter && fnmatch(filter, full, 0) != 0)
            continue;
        if (t->disabled || (s && s->disabled)) {
            printf("SKIP %s: disabled\n", full);
            disabled++;
            continue;
        }
        struct criterion_test_params p = {.length = 1};
        if (t->params) {
            p = params[i] = t->params();
            if (p.length == 0)
                printf("%s: no parameters, nothing to run\n", full);
        }
        for (size_t j = 0; j < p.length; j++) {
            if (nslots == cap) {
                cap *= 2;
                slots = realloc(slots, (size_t)cap * sizeof *slots);
                if (!slots) {
                    perror("realloc");
                    return 2;
                }
            }
            slots[nslots++] = (slot_t){
                .t = t, .s = s, .k = j,
                .param = t->params ? (char *)p.params + j * p.size : NULL,
                .signal = t->signal ? t->signal : s ? s->signal : 0,
                .exit_code = t->exit_code ? t->exit_code : s ? s->exit_code : 0,
            };
        }
        count[i] = nslots - first[i];
    }

    skipped = mmap(NULL, (size_t)nslots + 1, PROT_READ | PROT_WRITE,
                   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (skipped == MAP_FAILED) {
        perror("mmap");
        return 2;
    }

    const char *prog = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
    Suite *suite = suite_create(prog);
    for (int i = 0; i < ntests; i++) {
        if (!count[i])
            continue;
        struct sbcc_test *t = order[i];
        const slot_t *sl = &slots[first[i]];
        const struct sbcc_suite *s = sl->s;
        ttests[i] = (TTest){.name = t->name, .fn = tramp, .file = t->file, .line = t->line};
        TCase *tc = tcase_create(t->suite);
        double timeout = t->timeout > 0 ? t->timeout : s && s->timeout > 0 ? s->timeout : 0;
        tcase_set_timeout(tc, timeout); /* 0: none, as Criterion */
        const int lo = first[i], hi = first[i] + count[i]; /* tramp(lo) .. tramp(hi - 1) */
        if (sl->signal)
            tcase_add_loop_test_raise_signal(tc, &ttests[i], sl->signal, lo, hi);
        else
            tcase_add_loop_exit_test(tc, &ttests[i], sl->exit_code, lo, hi);
        suite_add_tcase(suite, tc);
    }

    SRunner *sr = srunner_create(suite);
    srunner_set_fork_status(sr, CK_FORK);
    if (!getenv("CK_LOG_FILE_NAME"))
        srunner_set_log(sr, "-"); /* one line per test as it ends: progress */
    srunner_run_all(sr, verbose ? CK_VERBOSE : CK_ENV);
    int run = srunner_ntests_run(sr), failed = srunner_ntests_failed(sr);
    srunner_free(sr);

    int nskip = 0;
    for (int i = 0; i < nslots; i++)
        nskip += skipped[i] != 0;
    for (int i = 0; i < ntests; i++) /* as Criterion, after the runs */
        if (params[i].cleanup)
            params[i].cleanup(&params[i]);
    if (run == 0 && nslots == 0)
        printf("no test matched%s%s\n", filter ? " the filter " : "", filter ? filter : "");
    int passed = run - failed - nskip;
    printf("%d skipped\n", nskip + disabled);
    printf("%d passed, %d failed\n", passed < 0 ? 0 : passed, failed);
    return failed ? 1 : 0;
}
