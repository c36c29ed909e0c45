/*
 * check_compat/criterion/redirect.h -- Criterion's stdout/stderr capture for the TSan
 * build (see criterion.h beside it).
 *
 * cr_redirect_stderr (meant for a test's .init) points fd 2 at an anonymous temporary
 * file; cr_assert_stderr_eq_str flushes stderr and compares everything written since.
 * The runner keeps a duplicate of the original stderr for its own messages and points
 * the sanitizer's reports at it, so a race report is never swallowed by the capture.
 */
#ifndef SB_CHECK_COMPAT_REDIRECT_H
#define SB_CHECK_COMPAT_REDIRECT_H

#include "criterion.h"

void cr_redirect_stdout(void);
void cr_redirect_stderr(void);
/* runner.c: what the redirected stream (1 or 2) holds, NUL-terminated, or NULL if the
 * stream was not redirected.  The buffer is the runner's; valid until the next call. */
const char *sbcc_captured_(int fd);

#define sbcc_capture_cmp_(Fatal, Fd, Name, Op, Want, ...)                                 \
    do {                                                                                  \
        const char *sbcc_got_ = sbcc_captured_(Fd);                                       \
        const char *sbcc_want_ = (Want);                                                  \
        if (!sbcc_got_) {                                                                 \
            sbcc_fail_((Fatal), __FILE__, __LINE__, Name " was not redirected",           \
                       " " __VA_ARGS__);                                                  \
        } else if (!(strcmp(sbcc_got_, sbcc_want_) Op 0)) {                               \
            char sbcc_w_[1024];                                                           \
            sbcc_fail_((Fatal), __FILE__, __LINE__,                                       \
                       sbcc_what_str_(sbcc_w_, sizeof sbcc_w_, Name " " #Op " " #Want,    \
                                      sbcc_got_, sbcc_want_),                             \
                       " " __VA_ARGS__);                                                  \
        }                                                                                 \
    } while (0)

#define cr_assert_stderr_eq_str(S, ...) sbcc_capture_cmp_(1, 2, "stderr", ==, S, __VA_ARGS__)
#define cr_expect_stderr_eq_str(S, ...) sbcc_capture_cmp_(0, 2, "stderr", ==, S, __VA_ARGS__)
#define cr_assert_stderr_neq_str(S, ...) sbcc_capture_cmp_(1, 2, "stderr", !=, S, __VA_ARGS__)
#define cr_expect_stderr_neq_str(S, ...) sbcc_capture_cmp_(0, 2, "stderr", !=, S, __VA_ARGS__)
#define cr_assert_stdout_eq_str(S, ...) sbcc_capture_cmp_(1, 1, "stdout", ==, S, __VA_ARGS__)
#define cr_expect_stdout_eq_str(S, ...) sbcc_capture_cmp_(0, 1, "stdout", ==, S, __VA_ARGS__)
#define cr_assert_stdout_neq_str(S, ...) sbcc_capture_cmp_(1, 1, "stdout", !=, S, __VA_ARGS__)
#define cr_expect_stdout_neq_str(S, ...) sbcc_capture_cmp_(0, 1, "stdout", !=, S, __VA_ARGS__)

#endif /* SB_CHECK_COMPAT_REDIRECT_H */
