/*
 * idle_park.h -- the parking lot as the idling policy (park_lot.h has the mechanism and
 * why it loses no wake-up): an idle worker searches a while (PARK_SEARCH_NS), then
 * sleeps on its futex word until a waker claims it; one sleeper at most watches the
 * runnext slots.
 */
#ifndef SCHEDBENCH_IDLE_PARK_H
#define SCHEDBENCH_IDLE_PARK_H

#include "park_lot.h"

#define IDLE_SETUP(n) park_setup(n)
#define IDLE_TEARDOWN() park_teardown()
#define IDLE_WAIT(w) park_search_wait(w)
#define IDLE_WAKE(target) park_wake(target)
#define IDLE_WAKE_ALL() park_wake_all()
#define IDLE_WATCH() park_watch()

#endif /* SCHEDBENCH_IDLE_PARK_H */
