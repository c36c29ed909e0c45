/*
 * test_cxx_wrappers.cpp -- the checks of bthread.hpp (brpc's C++ wrappers), compiled with
 * $(CXX) and run by test_cxx_wrappers.c, the sbtest file of the same name (sbtest is C;
 * this file is its C++ half: one extern "C" function per test, which returns NULL when
 * every check held, else "file:line: the check" of the first that failed).
 *
 * Threads are bthreads and std::threads (pthreads) together, as in the C tests.  Nothing
 * sleeps to let something happen: where a check needs a state (a waiter asleep on a
 * condition variable) it waits for the state it can see.
 */
#include <atomic>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <sstream>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "bthread.hpp"

namespace {

// The first failed check of this process (each test runs in its own).
std::atomic<const char *> g_failure{nullptr};

#define STR2(x) #x
#define STR(x) STR2(x)
#define EXPECT(c)                                                                        \
    do {                                                                                 \
        if (!(c)) {                                                                      \
            const char *none = nullptr;                                                  \
            /* relaxed: read after every thread was joined */                            \
            g_failure.compare_exchange_strong(none, __FILE__ ":" STR(__LINE__) ": " #c,  \
                                              std::memory_order_relaxed);                \
        }                                                                                \
    } while (0)

// Run fn(arg) on nb bthreads and np std::threads, and join them all.
void run_mixed(int nb, int np, void *(*fn)(void *), void *arg)
{
    std::vector<bthread_t> bt(nb);
    for (auto &t : bt)
        EXPECT(bthread_start_background(&t, NULL, fn, arg) == 0);
    std::vector<std::thread> pt;
    for (int i = 0; i < np; i++)
        pt.emplace_back([fn, arg] { fn(arg); });
    for (auto &t : bt)
        EXPECT(bthread_join(t, NULL) == 0);
    for (auto &t : pt)
        t.join();
}

// Run a check; an exception that escapes it is a failure.
template <typename F> const char *checked(F f)
{
    try {
        f();
    } catch (const std::exception &e) {
        static char buf[256];
        std::snprintf(buf, sizeof buf, "unexpected exception: %s", e.what());
        return buf;
    }
    return g_failure.load(std::memory_order_relaxed);
}

template <typename F> bool throws_errc(F f, int ec)
{
    try {
        f();
    } catch (const std::system_error &e) {
        return e.code().value() == ec;
    }
    return false;
}

// ---- Mutex and the lock guards --------------------------------------------------------

struct Counted {
    bthread::Mutex m;
    bthread_mutex_t cm;
    long n = 0;                 // under m
    long cn = 0;                // under cm
    std::atomic<int> inside{0}; // occupants of the sections
    std::atomic<int> next{0};
};

void enter(std::atomic<int> &inside)
{
    // relaxed: a count of occupants, checked only for exclusion.
    EXPECT(inside.fetch_add(1, std::memory_order_relaxed) == 0);
    inside.fetch_sub(1, std::memory_order_relaxed);
}

void *mutex_worker(void *p)
{
    Counted *c = static_cast<Counted *>(p);
    const int me = c->next.fetch_add(1, std::memory_order_relaxed);
    for (int i = 0; i < 20000; i++) {
        switch ((me + i) % 4) {
        case 0: {
            std::lock_guard<bthread::Mutex> g(c->m);
            enter(c->inside);
            c->n++;
            break;
        }
        case 1: {
            std::unique_lock<bthread::Mutex> g(c->m, std::try_to_lock);
            while (!g.owns_lock()) {
                bthread_yield();
                g.try_lock();
            }
            enter(c->inside);
            c->n++;
            break;
        }
        case 2: {
            std::lock_guard<bthread_mutex_t> g(c->cm);
            c->cn++;
            break;
        }
        default: {
            std::unique_lock<bthread_mutex_t> g(c->cm);
            c->cn++;
        }
        }
    }
    return NULL;
}

} // namespace

extern "C" const char *cxx_mutex_and_lock_guards(void)
{
    return checked([] {
        Counted c;
        EXPECT(bthread_mutex_init(&c.cm, NULL) == 0);
        run_mixed(4, 2, mutex_worker, &c);
        EXPECT(c.n + c.cn == 6L * 20000);
        EXPECT(c.m.try_lock());
        EXPECT(!c.m.try_lock()); // not recursive
        c.m.unlock();
        EXPECT(c.m.native_handler() != NULL);
        EXPECT(bthread_mutex_destroy(&c.cm) == 0);
    });
}

extern "C" const char *cxx_unique_lock_of_bthread_mutex_t(void)
{
    return checked([] {
        bthread_mutex_t m, m2;
        EXPECT(bthread_mutex_init(&m, NULL) == 0);
        EXPECT(bthread_mutex_init(&m2, NULL) == 0);
        {
            std::unique_lock<bthread_mutex_t> a(m, std::defer_lock);
            EXPECT(!a.owns_lock() && !a && a.mutex() == &m);
            a.lock();
            EXPECT(a.owns_lock() && static_cast<bool>(a));
            EXPECT(bthread_mutex_trylock(&m) == EBUSY);
            EXPECT(throws_errc([&] { a.lock(); }, EDEADLK));
            EXPECT(throws_errc([&] { a.try_lock(); }, EDEADLK));
            a.unlock();
            EXPECT(throws_errc([&] { a.unlock(); }, EPERM));
            std::unique_lock<bthread_mutex_t> b(m, std::try_to_lock);
            EXPECT(b.owns_lock());
            std::unique_lock<bthread_mutex_t> c(m, std::try_to_lock);
            EXPECT(!c.owns_lock());
            a.swap(b); // a owns m now, b does not
            EXPECT(a.owns_lock() && !b.owns_lock());
            std::unique_lock<bthread_mutex_t> d(std::move(a));
            EXPECT(d.owns_lock() && !a.owns_lock() && a.mutex() == NULL);
            EXPECT(throws_errc([&] { a.lock(); }, EPERM)); // no mutex
            bthread_mutex_t *r = d.release();
            EXPECT(r == &m && !d.owns_lock());
            EXPECT(bthread_mutex_unlock(&m) == 0); // release() left it locked
            EXPECT(bthread_mutex_lock(&m2) == 0);
            std::unique_lock<bthread_mutex_t> e(m2, std::adopt_lock);
            EXPECT(e.owns_lock());
            std::unique_lock<bthread_mutex_t> f(m);
            f = std::move(e); // unlocks m, takes over m2
            EXPECT(f.mutex() == &m2 && f.owns_lock());
            EXPECT(bthread_mutex_trylock(&m) == 0);
            EXPECT(bthread_mutex_unlock(&m) == 0);
        } // f unlocks m2
        EXPECT(bthread_mutex_trylock(&m2) == 0);
        EXPECT(bthread_mutex_unlock(&m2) == 0);
        EXPECT(bthread_mutex_destroy(&m) == 0);
        EXPECT(bthread_mutex_destroy(&m2) == 0);
    });
}

// ---- ConditionVariable ----------------------------------------------------------------

namespace {

struct Queue {
    bthread::Mutex m;
    bthread_mutex_t cm;
    bthread::ConditionVariable not_empty, c_not_empty;
    std::vector<int> items, c_items; // under m / cm
    int producers_done = 0;          // under m
    int c_done = 0;                  // under cm
    std::atomic<long> sum{0};
    std::atomic<int> next{0};
};

constexpr int QITEMS = 20000;

void *queue_role(void *p)
{
    Queue *q = static_cast<Queue *>(p);
    const int me = q->next.fetch_add(1, std::memory_order_relaxed);
    if (me < 2) { // producers: one per queue kind
        for (int v = 1; v <= QITEMS; v++) {
            if (me == 0) {
                std::lock_guard<bthread::Mutex> g(q->m);
                q->items.push_back(v);
                q->not_empty.notify_one();
            } else {
                std::lock_guard<bthread_mutex_t> g(q->cm);
                q->c_items.push_back(v);
                q->c_not_empty.notify_one();
            }
        }
        if (me == 0) {
            std::lock_guard<bthread::Mutex> g(q->m);
            q->producers_done = 1;
            q->not_empty.notify_all();
        } else {
            std::lock_guard<bthread_mutex_t> g(q->cm);
            q->c_done = 1;
            q->c_not_empty.notify_all();
        }
        return NULL;
    }
    long sum = 0;
    if (me % 2 == 0) {
        std::unique_lock<bthread::Mutex> lk(q->m);
        for (;;) {
            while (q->items.empty() && !q->producers_done) {
                if (me % 4 == 0)
                    q->not_empty.wait(lk);
                else
                    q->not_empty.wait_for(lk, 1000); // 0 or ETIMEDOUT: both re-check
            }
            if (q->items.empty())
                break;
            sum += q->items.back();
            q->items.pop_back();
        }
    } else {
        std::unique_lock<bthread_mutex_t> lk(q->cm);
        for (;;) {
            while (q->c_items.empty() && !q->c_done) {
                if (me % 4 == 1)
                    q->c_not_empty.wait(lk);
                else
                    q->c_not_empty.wait_until(lk, bthread::detail::realtime_after_us(1000));
            }
            if (q->c_items.empty())
                break;
            sum += q->c_items.back();
            q->c_items.pop_back();
        }
    }
    q->sum.fetch_add(sum, std::memory_order_relaxed); // read after the joins
    return NULL;
}

} // namespace

extern "C" const char *cxx_condition_variable(void)
{
    return checked([] {
        Queue q;
        EXPECT(bthread_mutex_init(&q.cm, NULL) == 0);
        // Roles by arrival: 0 and 1 produce, the rest consume (both kinds of lock).
        run_mixed(6, 2, queue_role, &q);
        EXPECT(q.sum.load() == 2L * QITEMS * (QITEMS + 1) / 2);
        // Timeouts: ETIMEDOUT, with the lock held again.
        std::unique_lock<bthread::Mutex> lk(q.m);
        EXPECT(q.not_empty.wait_for(lk, 1000) == ETIMEDOUT);
        EXPECT(lk.owns_lock() && !q.m.try_lock());
        timespec past = bthread::detail::realtime_after_us(-1000);
        EXPECT(q.not_empty.wait_until(lk, past) == ETIMEDOUT);
        lk.unlock();
        std::unique_lock<bthread_mutex_t> clk(q.cm);
        EXPECT(q.c_not_empty.wait_for(clk, 1000) == ETIMEDOUT);
        EXPECT(bthread_mutex_trylock(&q.cm) == EBUSY);
        clk.unlock();
        EXPECT(q.not_empty.native_handler() != NULL);
        EXPECT(bthread_mutex_destroy(&q.cm) == 0);
    });
}

// ---- RWLock and its guards ------------------------------------------------------------

namespace {

struct Shared {
    bthread::RWLock rw;
    bthread_rwlock_t crw;
    long value = 0, cvalue = 0;      // written under the write locks
    std::atomic<int> writers{0}, readers{0};
    std::atomic<int> next{0};
};

void *rw_worker(void *p)
{
    Shared *s = static_cast<Shared *>(p);
    const int me = s->next.fetch_add(1, std::memory_order_relaxed);
    for (int i = 0; i < 10000; i++) {
        const int kind = (me + i) % 6;
        if (kind == 0) {
            bthread::RWLockWrGuard g(s->rw);
            EXPECT(s->writers.fetch_add(1, std::memory_order_relaxed) == 0);
            EXPECT(s->readers.load(std::memory_order_relaxed) == 0);
            s->value++;
            s->writers.fetch_sub(1, std::memory_order_relaxed);
        } else if (kind == 1) {
            std::lock_guard<bthread::RWLock> g(s->rw, false);
            EXPECT(s->writers.fetch_add(1, std::memory_order_relaxed) == 0);
            s->value++;
            s->writers.fetch_sub(1, std::memory_order_relaxed);
        } else if (kind == 2) {
            std::lock_guard<bthread_rwlock_t> g(s->crw, false);
            s->cvalue++;
        } else if (kind == 3) {
            bthread::RWLockRdGuard g(s->rw);
            s->readers.fetch_add(1, std::memory_order_relaxed);
            EXPECT(s->writers.load(std::memory_order_relaxed) == 0);
            (void)s->value; // a read under the read lock
            s->readers.fetch_sub(1, std::memory_order_relaxed);
        } else if (kind == 4) {
            std::lock_guard<bthread::RWLock> g(s->rw, true);
            EXPECT(s->writers.load(std::memory_order_relaxed) == 0);
        } else {
            bthread::RWLockRdGuard g(s->crw);
            (void)s->cvalue;
        }
    }
    return NULL;
}

} // namespace

extern "C" const char *cxx_rwlock_and_guards(void)
{
    return checked([] {
        Shared s;
        EXPECT(bthread_rwlock_init(&s.crw, NULL) == 0);
        run_mixed(4, 2, rw_worker, &s);
        // For each i exactly one of the 6 workers takes kind 0 (and one kind 1, 2).
        EXPECT(s.value == 2 * 10000 && s.cvalue == 10000);
        {
            bthread::RWLockRdGuard r(s.rw); // readers share
            EXPECT(s.rw.try_rdlock());
            s.rw.unlock();
            EXPECT(!s.rw.try_wrlock());
            timespec soon = bthread::detail::realtime_after_us(1000);
            EXPECT(!s.rw.timed_wrlock(&soon));
        }
        {
            bthread::RWLockWrGuard w(s.crw); // a writer excludes
            EXPECT(bthread_rwlock_tryrdlock(&s.crw) == EBUSY);
        }
        s.rw.wrlock();
        EXPECT(!s.rw.try_rdlock());
        timespec soon = bthread::detail::realtime_after_us(1000);
        EXPECT(!s.rw.timed_rdlock(&soon));
        s.rw.unlock();
        s.rw.rdlock();
        s.rw.unlock();
        EXPECT(s.rw.native_handler() != NULL);
        EXPECT(bthread_rwlock_destroy(&s.crw) == 0);
    });
}

// ---- CountdownEvent -------------------------------------------------------------------

namespace {

struct Round {
    bthread::CountdownEvent *ev;
    std::atomic<int> signalled{0};
};

void *signal_once(void *p)
{
    Round *r = static_cast<Round *>(p);
    r->signalled.fetch_add(1, std::memory_order_relaxed);
    r->ev->signal(1, r->signalled.load(std::memory_order_relaxed) % 2 == 0);
    return NULL;
}

} // namespace

extern "C" const char *cxx_countdown_event(void)
{
    return checked([] {
        bthread::CountdownEvent ev(8);
        for (int round = 0; round < 50; round++) {
            Round r{&ev};
            std::vector<bthread_t> bt(6);
            for (auto &t : bt)
                EXPECT(bthread_start_background(&t, NULL, signal_once, &r) == 0);
            std::thread a(signal_once, &r), b(signal_once, &r);
            EXPECT(ev.wait() == 0);
            // Returned: all 8 signalled (the count is only 0 after the 8th).
            EXPECT(r.signalled.load() == 8);
            for (auto &t : bt)
                EXPECT(bthread_join(t, NULL) == 0);
            a.join();
            b.join();
            ev.reset(8); // the next round, on the same event
        }
        ev.reset(2);
        timespec soon = bthread::detail::realtime_after_us(1000);
        EXPECT(ev.timed_wait(soon) == ETIMEDOUT);
        ev.add_count(1);    // 3
        ev.add_count(-5);   // ignored, as brpc
        ev.signal(2);       // 1
        soon = bthread::detail::realtime_after_us(1000);
        EXPECT(ev.timed_wait(soon) == ETIMEDOUT);
        ev.signal();        // 0
        EXPECT(ev.wait() == 0);
        soon = bthread::detail::realtime_after_us(-1000);
        EXPECT(ev.timed_wait(soon) == 0); // at 0 a past deadline does not matter
        ev.reset(-1);                     // ignored, as brpc
        EXPECT(ev.wait() == 0);
        bthread::CountdownEvent zero(0);
        EXPECT(zero.wait() == 0);
        EXPECT(throws_errc([] { bthread::CountdownEvent bad(-1); }, EINVAL));
    });
}

// ---- attributes, once, the id API --------------------------------------------------

namespace {
std::atomic<int> g_ran{0};
void *mark_ran(void *) { g_ran.fetch_add(1, std::memory_order_relaxed); return NULL; }
int g_once_runs = 0;
void count_once() { g_once_runs++; }
} // namespace

extern "C" const char *cxx_attr_or_and_once(void)
{
    return checked([] {
        const bthread_attr_t a = BTHREAD_ATTR_SMALL | BTHREAD_NOSIGNAL;
        EXPECT(a.stack_type == BTHREAD_STACKTYPE_SMALL && a.flags == BTHREAD_NOSIGNAL);
        EXPECT(BTHREAD_ATTR_SMALL.flags == 0); // the operand is unchanged
        bthread_t t;
        EXPECT(bthread_start_background(&t, &a, mark_ran, NULL) == 0);
        bthread_flush();
        EXPECT(bthread_join(t, NULL) == 0);
        EXPECT(g_ran.load() == 1);
#if __cplusplus >= 201402L
        bthread_once_t once; // default-constructed: not run yet
        EXPECT(bthread_once(&once, count_once) == 0);
        EXPECT(bthread_once(&once, count_once) == 0);
        EXPECT(g_once_runs == 1);
#endif
    });
}

namespace {

int g_branch = 0;
int g_tags[4] = {0, 0, 0, 0};
int g_expected_code = 0;
const char *g_expected_text = "";
void *const DATA1 = reinterpret_cast<void *>(1);
void *const DATA2 = reinterpret_cast<void *>(2);

int handler_plain(bthread_id_t id, void *data, int code)
{
    EXPECT(data == DATA1);
    EXPECT(code == g_expected_code);
    g_tags[code == ESRCH ? 0 : 1] = g_branch;
    return code == ESRCH ? bthread_id_unlock_and_destroy(id) : bthread_id_unlock(id);
}

int handler_text(bthread_id_t id, void *data, int code, const std::string &text)
{
    EXPECT(data == DATA2);
    EXPECT(code == g_expected_code);
    EXPECT(text == g_expected_text);
    g_tags[code == ESRCH ? 2 : 3] = g_branch;
    return code == ESRCH ? bthread_id_unlock_and_destroy(id) : bthread_id_unlock(id);
}

} // namespace

// brpc's error_with_descriptions: texts and codes reach the right handler, in place and
// pending, with matched and mixed calls.
extern "C" const char *cxx_id_errors_with_text(void)
{
    return checked([] {
        bthread_id_t id1, id2;
        EXPECT(bthread_id_create(&id1, DATA1, handler_plain) == 0);
        EXPECT(bthread_id_create2(&id2, DATA2, handler_text) == 0);
        ++g_branch; g_expected_code = EINVAL;
        EXPECT(bthread_id_error(id1, EINVAL) == 0);
        EXPECT(g_tags[1] == g_branch);
        ++g_branch; g_expected_code = EPERM; g_expected_text = "description1";
        EXPECT(bthread_id_error2(id2, EPERM, std::string("description1")) == 0);
        EXPECT(g_tags[3] == g_branch);
        ++g_branch; g_expected_code = ECONNREFUSED; g_expected_text = "";
        EXPECT(bthread_id_error(id2, ECONNREFUSED) == 0);
        EXPECT(g_tags[3] == g_branch);
        ++g_branch; g_expected_code = EINTR;
        EXPECT(bthread_id_error2(id1, EINTR, std::string("ignored")) == 0);
        EXPECT(g_tags[1] == g_branch);
        ++g_branch; g_expected_code = ECONNRESET;
        EXPECT(bthread_id_lock(id1, NULL) == 0);
        EXPECT(bthread_id_error(id1, ECONNRESET) == 0);
        EXPECT(bthread_id_unlock(id1) == 0);
        EXPECT(g_tags[1] == g_branch);
        ++g_branch; g_expected_code = ENOSPC; g_expected_text = "description3";
        EXPECT(bthread_id_lock(id2, NULL) == 0);
        EXPECT(bthread_id_error2(id2, ENOSPC, std::string("description3")) == 0);
        EXPECT(bthread_id_unlock(id2) == 0);
        EXPECT(g_tags[3] == g_branch);
        ++g_branch; g_expected_code = ESRCH; g_expected_text = "";
        EXPECT(bthread_id_lock(id2, NULL) == 0);
        EXPECT(bthread_id_error(id2, ESRCH) == 0);
        EXPECT(bthread_id_unlock(id2) == 0); // runs it: destroys
        EXPECT(g_tags[2] == g_branch);
        ++g_branch;
        EXPECT(bthread_id_lock(id1, NULL) == 0);
        EXPECT(bthread_id_error2(id1, ESRCH, std::string("")) == 0);
        EXPECT(bthread_id_unlock(id1) == 0);
        EXPECT(g_tags[0] == g_branch);
        EXPECT(bthread_id_join(id1) == 0 && bthread_id_join(id2) == 0);
        // A NULL handler: an error destroys.
        bthread_id_t id3;
        EXPECT(bthread_id_create2_ranged(&id3, NULL, NULL, 2) == 0);
        EXPECT(bthread_id_error2(bthread_id_t{id3.value + 1}, 1, std::string("x")) == 0);
        EXPECT(bthread_id_trylock(id3, NULL) == EINVAL);
    });
}

namespace {
std::string g_last_text;
int keep_text(bthread_id_t id, void *, int, const std::string &text)
{
    g_last_text = text;
    return bthread_id_unlock_and_destroy(id);
}
} // namespace

extern "C" const char *cxx_id_operators_views_and_list_reset2(void)
{
    return checked([] {
        bthread_id_t a, b;
        EXPECT(bthread_id_create2(&a, NULL, keep_text) == 0);
        EXPECT(bthread_id_create2(&b, NULL, keep_text) == 0);
        EXPECT(a == a && a != b && (a < b) != (b < a) && a <= a && a >= a);
        EXPECT(INVALID_BTHREAD_ID == bthread_id_t{0});
        std::ostringstream os;
        os << a;
        EXPECT(os.str() == std::to_string(a.value));
        EXPECT(bthread::id_value(a) == (uint32_t)a.value);
        std::ostringstream st;
        bthread::id_status(a, st);
        EXPECT(st.str().find("unlocked") != std::string::npos);
        bthread_key_t k1 = {1, 2}, k2 = {1, 3};
        EXPECT(k1 == k1 && k1 != k2 && k1 < k2 && k2 > k1);
        std::ostringstream ks;
        ks << k1;
        EXPECT(ks.str() == "bthread_key_t{index=1 version=2}");

        bthread_id_list_t list;
        EXPECT(bthread_id_list_init(&list, 0, 0) == 0);
        EXPECT(bthread_id_list_add(&list, a) == 0);
        EXPECT(bthread_id_list_reset2(&list, 1, "plain") == 0);
        EXPECT(g_last_text == "plain");
        EXPECT(bthread_id_list_add(&list, b) == 0);
        pthread_mutex_t pm = PTHREAD_MUTEX_INITIALIZER;
        EXPECT(bthread_id_list_reset2_pthreadsafe(&list, 1, "p-safe", &pm) == 0);
        EXPECT(g_last_text == "p-safe");
        bthread_id_t c;
        EXPECT(bthread_id_create2(&c, NULL, keep_text) == 0);
        EXPECT(bthread_id_list_add(&list, c) == 0);
        bthread::Mutex bm;
        EXPECT(bthread_id_list_reset2_bthreadsafe(&list, 1, "b-safe", bm.native_handler()) == 0);
        EXPECT(g_last_text == "b-safe");
        bthread_id_list_destroy(&list);
        std::ostringstream gone;
        bthread::id_status(c, gone);
        EXPECT(gone.str().find("not alive") != std::string::npos);
    });
}
