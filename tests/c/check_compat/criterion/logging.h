/*
 * check_compat/criterion/logging.h -- Criterion's cr_log_* for the TSan build (see
 * criterion.h beside it).  Messages go to the test's original stderr, one line each,
 * always (Criterion shows info only with --verbose; these are few and short).
 */
#ifndef SB_CHECK_COMPAT_LOGGING_H
#define SB_CHECK_COMPAT_LOGGING_H

#include "criterion.h"

#define cr_log_info(...) sbcc_log_("info", __VA_ARGS__)
#define cr_log_warn(...) sbcc_log_("warn", __VA_ARGS__)
#define cr_log_error(...) sbcc_log_("error", __VA_ARGS__)

#endif /* SB_CHECK_COMPAT_LOGGING_H */
