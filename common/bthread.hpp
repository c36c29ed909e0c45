/*
 * bthread.hpp -- brpc's header-only C++ parts, for C++ users of the C library.
 *
 * `#include "bthread.hpp"` (the directory common/, as for bthread.h) gives what brpc's
 * bthread/mutex.h, condition_variable.h, rwlock.h, countdown_event.h, types.h and id.h
 * give a C++ program, under brpc's names:
 *
 *   bthread::Mutex, bthread::ConditionVariable, bthread::RWLock (+ RWLockRdGuard,
 *   RWLockWrGuard), bthread::CountdownEvent (with reset);
 *   std::lock_guard<bthread_mutex_t>, std::unique_lock<bthread_mutex_t>,
 *   std::lock_guard<bthread_rwlock_t> and std::lock_guard<bthread::RWLock> (read or
 *   write, chosen by a bool);
 *   `attr | flags` on bthread_attr_t; ==, <, ... and << on bthread_id_t and bthread_key_t;
 *   bthread_id_create2, bthread_id_create2_ranged, bthread_id_error2,
 *   bthread_id_list_reset2 (+ _pthreadsafe, _bthreadsafe): on_error with a std::string;
 *   bthread::id_value and bthread::id_status, brpc's internal views that its tests read.
 *
 * Everything here is inline over the C API (bthread.h, butex.h); the library stays C.
 * Needs C++11 (C++14 for a default-constructed bthread_once_t, bthread.h).
 *
 * Differences from brpc, all deliberate:
 *   - Failures brpc reports with LOG(FATAL) or CHECK (a lock guard whose lock fails, a
 *     unique_lock locked twice or unlocked while not owning) throw std::system_error here,
 *     as std::mutex and std::unique_lock do: brpc logs, and in a release build carries on.
 *     A constructor whose init fails (ENOMEM) throws std::system_error, as brpc's Mutex
 *     and RWLock do (brpc's ConditionVariable CHECKs instead).
 *   - A destructor ignores a refused destroy (bthread.h: EBUSY while the object is held
 *     or waited on, and it is left intact); brpc CHECKs that its destroy returned 0.
 *   - std::unique_lock<bthread_mutex_t> is also movable, and its operator bool is explicit
 *     (as std's; brpc's converts implicitly).
 *   - `attr | flags` only adds the flags.  brpc encodes the stack type in the low 3 bits of
 *     such an unsigned and CHECKs that the flags leave them clear; this library's
 *     BTHREAD_NOSIGNAL is 1, so there is no such split.  brpc's `attr = unsigned` (a
 *     member operator) has no counterpart: bthread_attr_t is a C struct.
 *   - CountdownEvent::signal's `flush` is accepted and has no effect: the waiters are
 *     woken at once (brpc queues them without waking a worker until bthread_flush).
 *   - bthread_id_error2 passes error_text.c_str(): a text with an embedded NUL is cut there.
 */
#ifndef SCHEDBENCH_BTHREAD_HPP
#define SCHEDBENCH_BTHREAD_HPP

#ifndef __cplusplus
#error "bthread.hpp is the C++ part; C code includes bthread.h"
#endif

#include <atomic>
#include <cstdint>
#include <cstring>
#include <ctime>
#include <mutex>
#include <ostream>
#include <string>
#include <system_error>

#include "bthread.h"
#include "butex.h"

namespace bthread {
namespace detail {

[[noreturn]] inline void throw_errno(int ec, const char *what)
{
    throw std::system_error(std::error_code(ec, std::system_category()), what);
}

// CLOCK_REALTIME now + us, the deadline form of the timed C calls.
inline timespec realtime_after_us(long us)
{
    timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    const long long ns = (long long)t.tv_nsec + (long long)(us % 1000000) * 1000;
    t.tv_sec += us / 1000000 + ns / 1000000000;
    t.tv_nsec = (long)(ns % 1000000000);
    if (t.tv_nsec < 0) {
        t.tv_nsec += 1000000000;
        t.tv_sec -= 1;
    }
    return t;
}

} // namespace detail

// ---- Mutex --------------------------------------------------------------------------

// A bthread_mutex_t with a C++ face (brpc's bthread::Mutex).  Works with
// std::lock_guard<bthread::Mutex> and std::unique_lock<bthread::Mutex>.
class Mutex {
public:
    typedef bthread_mutex_t *native_handler_type;
    Mutex()
    {
        const int ec = bthread_mutex_init(&_mutex, NULL);
        if (ec != 0)
            detail::throw_errno(ec, "Mutex constructor failed");
    }
    ~Mutex() { bthread_mutex_destroy(&_mutex); }
    Mutex(const Mutex &) = delete;
    Mutex &operator=(const Mutex &) = delete;

    native_handler_type native_handler() { return &_mutex; }
    void lock()
    {
        const int ec = bthread_mutex_lock(&_mutex);
        if (ec != 0)
            detail::throw_errno(ec, "Mutex lock failed");
    }
    void unlock() { bthread_mutex_unlock(&_mutex); }
    bool try_lock() { return bthread_mutex_trylock(&_mutex) == 0; }

private:
    bthread_mutex_t _mutex;
};

} // namespace bthread

// ---- std::lock_guard / std::unique_lock of the C types --------------------------------

namespace std {

template <> class lock_guard<bthread_mutex_t> {
public:
    explicit lock_guard(bthread_mutex_t &mutex) : _pmutex(&mutex)
    {
        const int ec = bthread_mutex_lock(_pmutex);
        if (ec != 0)
            bthread::detail::throw_errno(ec, "lock_guard<bthread_mutex_t>: lock failed");
    }
    ~lock_guard() { bthread_mutex_unlock(_pmutex); }
    lock_guard(const lock_guard &) = delete;
    lock_guard &operator=(const lock_guard &) = delete;

private:
    bthread_mutex_t *_pmutex;
};

template <> class unique_lock<bthread_mutex_t> {
public:
    typedef bthread_mutex_t mutex_type;
    unique_lock() noexcept : _mutex(NULL), _owns_lock(false) {}
    explicit unique_lock(mutex_type &mutex) : _mutex(&mutex), _owns_lock(false) { lock(); }
    unique_lock(mutex_type &mutex, defer_lock_t) noexcept : _mutex(&mutex), _owns_lock(false) {}
    unique_lock(mutex_type &mutex, try_to_lock_t)
        : _mutex(&mutex), _owns_lock(bthread_mutex_trylock(&mutex) == 0)
    {
    }
    unique_lock(mutex_type &mutex, adopt_lock_t) noexcept : _mutex(&mutex), _owns_lock(true) {}
    unique_lock(unique_lock &&o) noexcept : _mutex(o._mutex), _owns_lock(o._owns_lock)
    {
        o._mutex = NULL;
        o._owns_lock = false;
    }
    unique_lock &operator=(unique_lock &&o) noexcept
    {
        if (_owns_lock)
            bthread_mutex_unlock(_mutex);
        _mutex = o._mutex;
        _owns_lock = o._owns_lock;
        o._mutex = NULL;
        o._owns_lock = false;
        return *this;
    }
    unique_lock(const unique_lock &) = delete;
    unique_lock &operator=(const unique_lock &) = delete;
    ~unique_lock()
    {
        if (_owns_lock)
            bthread_mutex_unlock(_mutex);
    }

    void lock()
    {
        check_can_lock();
        const int ec = bthread_mutex_lock(_mutex);
        if (ec != 0)
            bthread::detail::throw_errno(ec, "unique_lock<bthread_mutex_t>: lock failed");
        _owns_lock = true;
    }
    bool try_lock()
    {
        check_can_lock();
        _owns_lock = bthread_mutex_trylock(_mutex) == 0;
        return _owns_lock;
    }
    void unlock()
    {
        if (!_owns_lock)
            bthread::detail::throw_errno(EPERM, "unique_lock<bthread_mutex_t>: not owned");
        bthread_mutex_unlock(_mutex);
        _owns_lock = false;
    }
    void swap(unique_lock &rhs) noexcept
    {
        std::swap(_mutex, rhs._mutex);
        std::swap(_owns_lock, rhs._owns_lock);
    }
    mutex_type *release() noexcept
    {
        mutex_type *m = _mutex;
        _mutex = NULL;
        _owns_lock = false;
        return m;
    }
    mutex_type *mutex() const noexcept { return _mutex; }
    bool owns_lock() const noexcept { return _owns_lock; }
    explicit operator bool() const noexcept { return _owns_lock; }

private:
    void check_can_lock() const
    {
        if (!_mutex)
            bthread::detail::throw_errno(EPERM, "unique_lock<bthread_mutex_t>: no mutex");
        if (_owns_lock)
            bthread::detail::throw_errno(EDEADLK, "unique_lock<bthread_mutex_t>: already owned");
    }
    mutex_type *_mutex;
    bool _owns_lock;
};

} // namespace std

namespace bthread {

// ---- ConditionVariable --------------------------------------------------------------

// brpc's bthread::ConditionVariable: wait with a unique_lock of a bthread::Mutex or of a
// bthread_mutex_t.  The timed waits return ETIMEDOUT when the time is up, else 0
// (brpc's convention, not std::cv_status).
class ConditionVariable {
public:
    typedef bthread_cond_t *native_handler_type;
    ConditionVariable()
    {
        const int ec = bthread_cond_init(&_cond, NULL);
        if (ec != 0)
            detail::throw_errno(ec, "ConditionVariable constructor failed");
    }
    ~ConditionVariable() { bthread_cond_destroy(&_cond); }
    ConditionVariable(const ConditionVariable &) = delete;
    ConditionVariable &operator=(const ConditionVariable &) = delete;

    native_handler_type native_handler() { return &_cond; }

    void wait(std::unique_lock<bthread::Mutex> &lock)
    {
        bthread_cond_wait(&_cond, lock.mutex()->native_handler());
    }
    void wait(std::unique_lock<bthread_mutex_t> &lock) { bthread_cond_wait(&_cond, lock.mutex()); }
    int wait_for(std::unique_lock<bthread::Mutex> &lock, long timeout_us)
    {
        return wait_until(lock, detail::realtime_after_us(timeout_us));
    }
    int wait_for(std::unique_lock<bthread_mutex_t> &lock, long timeout_us)
    {
        return wait_until(lock, detail::realtime_after_us(timeout_us));
    }
    int wait_until(std::unique_lock<bthread::Mutex> &lock, timespec duetime)
    {
        return timed(lock.mutex()->native_handler(), duetime);
    }
    int wait_until(std::unique_lock<bthread_mutex_t> &lock, timespec duetime)
    {
        return timed(lock.mutex(), duetime);
    }
    void notify_one() { bthread_cond_signal(&_cond); }
    void notify_all() { bthread_cond_broadcast(&_cond); }

private:
    int timed(bthread_mutex_t *m, const timespec &duetime)
    {
        return bthread_cond_timedwait(&_cond, m, &duetime) == ETIMEDOUT ? ETIMEDOUT : 0;
    }
    bthread_cond_t _cond;
};

// ---- RWLock -------------------------------------------------------------------------

// brpc's bthread::RWLock over bthread_rwlock_t (writer-preferring: sync.c).
class RWLock {
public:
    typedef bthread_rwlock_t *native_handler_type;
    RWLock()
    {
        const int ec = bthread_rwlock_init(&_rwlock, NULL);
        if (ec != 0)
            detail::throw_errno(ec, "RWLock constructor failed");
    }
    ~RWLock() { bthread_rwlock_destroy(&_rwlock); }
    RWLock(const RWLock &) = delete;
    RWLock &operator=(const RWLock &) = delete;

    native_handler_type native_handler() { return &_rwlock; }
    void rdlock()
    {
        const int ec = bthread_rwlock_rdlock(&_rwlock);
        if (ec != 0)
            detail::throw_errno(ec, "RWLock rdlock failed");
    }
    bool try_rdlock() { return bthread_rwlock_tryrdlock(&_rwlock) == 0; }
    bool timed_rdlock(const struct timespec *abstime)
    {
        return bthread_rwlock_timedrdlock(&_rwlock, abstime) == 0;
    }
    void wrlock()
    {
        const int ec = bthread_rwlock_wrlock(&_rwlock);
        if (ec != 0)
            detail::throw_errno(ec, "RWLock wrlock failed");
    }
    bool try_wrlock() { return bthread_rwlock_trywrlock(&_rwlock) == 0; }
    bool timed_wrlock(const struct timespec *abstime)
    {
        return bthread_rwlock_timedwrlock(&_rwlock, abstime) == 0;
    }
    void unlock() { bthread_rwlock_unlock(&_rwlock); }

private:
    bthread_rwlock_t _rwlock;
};

// Read / write lock guards of a bthread_rwlock_t or a bthread::RWLock.
class RWLockRdGuard {
public:
    explicit RWLockRdGuard(bthread_rwlock_t &rwlock) : _rwlock(&rwlock)
    {
        const int ec = bthread_rwlock_rdlock(_rwlock);
        if (ec != 0)
            detail::throw_errno(ec, "RWLockRdGuard: rdlock failed");
    }
    explicit RWLockRdGuard(RWLock &rwlock) : RWLockRdGuard(*rwlock.native_handler()) {}
    ~RWLockRdGuard() { bthread_rwlock_unlock(_rwlock); }
    RWLockRdGuard(const RWLockRdGuard &) = delete;
    RWLockRdGuard &operator=(const RWLockRdGuard &) = delete;

private:
    bthread_rwlock_t *_rwlock;
};

class RWLockWrGuard {
public:
    explicit RWLockWrGuard(bthread_rwlock_t &rwlock) : _rwlock(&rwlock)
    {
        const int ec = bthread_rwlock_wrlock(_rwlock);
        if (ec != 0)
            detail::throw_errno(ec, "RWLockWrGuard: wrlock failed");
    }
    explicit RWLockWrGuard(RWLock &rwlock) : RWLockWrGuard(*rwlock.native_handler()) {}
    ~RWLockWrGuard() { bthread_rwlock_unlock(_rwlock); }
    RWLockWrGuard(const RWLockWrGuard &) = delete;
    RWLockWrGuard &operator=(const RWLockWrGuard &) = delete;

private:
    bthread_rwlock_t *_rwlock;
};

} // namespace bthread

namespace std {

// brpc: a read (read = true) or write lock for the guard's lifetime.
template <> class lock_guard<bthread_rwlock_t> {
public:
    lock_guard(bthread_rwlock_t &rwlock, bool read) : _rwlock(&rwlock)
    {
        const int ec = read ? bthread_rwlock_rdlock(_rwlock) : bthread_rwlock_wrlock(_rwlock);
        if (ec != 0)
            bthread::detail::throw_errno(ec, "lock_guard<bthread_rwlock_t>: lock failed");
    }
    ~lock_guard() { bthread_rwlock_unlock(_rwlock); }
    lock_guard(const lock_guard &) = delete;
    lock_guard &operator=(const lock_guard &) = delete;

private:
    bthread_rwlock_t *_rwlock;
};

template <> class lock_guard<bthread::RWLock> {
public:
    lock_guard(bthread::RWLock &rwlock, bool read) : _guard(*rwlock.native_handler(), read) {}
    lock_guard(const lock_guard &) = delete;
    lock_guard &operator=(const lock_guard &) = delete;

private:
    std::lock_guard<bthread_rwlock_t> _guard;
};

} // namespace std

namespace bthread {

// ---- CountdownEvent -----------------------------------------------------------------

// brpc's bthread::CountdownEvent: wait until signals bring the count to 0 (or below).
// Built, as brpc's, on one butex whose value is the count (butex.h: the value is its
// first member), because reset() needs to replace the count in one step and the C
// bthread_countdown_t offers no such call.  The protocol is sync.c's countdown: signal
// subtracts (release, so a waiter sees what signallers did) and wakes everyone when the
// count reaches 0; a waiter reads the count (acquire) and sleeps on exactly that value,
// which the butex re-checks under its lock, so no wake-up is lost.
// add_count and reset belong between rounds, while nobody waits (as in brpc).
class CountdownEvent {
public:
    // brpc aborts on a negative count; here it throws std::system_error (EINVAL).
    CountdownEvent(int initial_count = 1) : _butex(butex_create())
    {
        if (initial_count < 0) {
            butex_destroy(_butex);
            detail::throw_errno(EINVAL, "CountdownEvent: negative count");
        }
        if (!_butex)
            detail::throw_errno(ENOMEM, "CountdownEvent constructor failed");
        // relaxed: the object is not shared before its constructor returns.
        count().store(initial_count, std::memory_order_relaxed);
    }
    ~CountdownEvent() { butex_destroy(_butex); }
    CountdownEvent(const CountdownEvent &) = delete;
    CountdownEvent &operator=(const CountdownEvent &) = delete;

    // count += v (v > 0; anything else is ignored, as brpc).
    void add_count(int v = 1)
    {
        if (v <= 0)
            return;
        // release: as brpc (what the adder did before is published with the count).
        count().fetch_add(v, std::memory_order_release);
    }
    // count = v (v >= 0; a negative v is ignored, as brpc).
    void reset(int v = 1)
    {
        if (v < 0)
            return;
        // release: as add_count.
        count().exchange(v, std::memory_order_release);
    }
    // count -= sig; at 0 (or below) wake every waiter.  `flush`: see the header.
    void signal(int sig = 1, bool flush = false)
    {
        (void)flush;
        // Copy the butex first: once the count reaches 0 a waiter may return and destroy
        // *this; butex memory is type-stable, so waking it stays safe.
        void *const b = _butex;
        // release: pairs with the waiters' acquire loads.
        const int prev = count().fetch_sub(sig, std::memory_order_release);
        if (prev > sig)
            return;
        butex_wake_all(b);
    }
    // Block until the count is <= 0.  0; never EINTR.
    int wait() { return wait_impl(NULL); }
    // The same with a CLOCK_REALTIME deadline: 0, or ETIMEDOUT.
    int timed_wait(const timespec &duetime) { return wait_impl(&duetime); }

private:
    std::atomic<int> &count() { return *static_cast<std::atomic<int> *>(_butex); }
    int wait_impl(const timespec *duetime)
    {
        for (;;) {
            // acquire: pairs with signal's release subtraction.
            const int seen = count().load(std::memory_order_acquire);
            if (seen <= 0)
                return 0;
            if (butex_wait(_butex, seen, duetime) != 0 && errno != EWOULDBLOCK &&
                errno != EINTR)
                return count().load(std::memory_order_acquire) <= 0 ? 0 : errno;
        }
    }
    void *_butex;
};
static_assert(sizeof(std::atomic<int>) == sizeof(int) && alignof(std::atomic<int>) == alignof(int),
              "CountdownEvent reads a butex's int value as a std::atomic<int>");

} // namespace bthread

// ---- attributes, ids and keys ----------------------------------------------------------

// brpc: BTHREAD_ATTR_NORMAL | BTHREAD_NOSIGNAL (see the header for the difference).
inline bthread_attr_t operator|(const bthread_attr_t &attr, unsigned flags)
{
    bthread_attr_t a = attr;
    a.flags |= flags;
    return a;
}

inline bool operator==(bthread_id_t a, bthread_id_t b) { return a.value == b.value; }
inline bool operator!=(bthread_id_t a, bthread_id_t b) { return !(a == b); }
inline bool operator<(bthread_id_t a, bthread_id_t b) { return a.value < b.value; }
inline bool operator>(bthread_id_t a, bthread_id_t b) { return b < a; }
inline bool operator<=(bthread_id_t a, bthread_id_t b) { return !(b < a); }
inline bool operator>=(bthread_id_t a, bthread_id_t b) { return !(a < b); }
inline std::ostream &operator<<(std::ostream &os, bthread_id_t id) { return os << id.value; }

inline bool operator==(bthread_key_t a, bthread_key_t b)
{
    return a.index == b.index && a.version == b.version;
}
inline bool operator!=(bthread_key_t a, bthread_key_t b) { return !(a == b); }
inline bool operator<(bthread_key_t a, bthread_key_t b)
{
    return a.index != b.index ? a.index < b.index : a.version < b.version;
}
inline bool operator>(bthread_key_t a, bthread_key_t b) { return b < a; }
inline bool operator<=(bthread_key_t a, bthread_key_t b) { return !(b < a); }
inline bool operator>=(bthread_key_t a, bthread_key_t b) { return !(a < b); }
inline std::ostream &operator<<(std::ostream &os, bthread_key_t key)
{
    return os << "bthread_key_t{index=" << key.index << " version=" << key.version << '}';
}

// brpc's C++ id API: on_error gets the error's text as a std::string.  Built on the C
// extension bthread_id_create_text, whose `arg` carries the C++ callback.
typedef int (*bthread_id_on_error2_t)(bthread_id_t id, void *data, int error_code,
                                      const std::string &error_text);

namespace bthread {
namespace detail {
inline int id_on_error2(bthread_id_t id, void *data, int error_code, const char *error_text,
                        void *arg)
{
    bthread_id_on_error2_t fn;
    static_assert(sizeof fn == sizeof arg, "a function pointer travels in a void *");
    std::memcpy(&fn, &arg, sizeof fn);
    return fn(id, data, error_code, std::string(error_text));
}
} // namespace detail

// brpc's internal views of an id (its unit tests read them): the lock word, and the state
// in words (bthread.h: bthread_id_value, bthread_id_describe).
inline uint32_t id_value(bthread_id_t id) { return bthread_id_value(id); }
inline void id_status(bthread_id_t id, std::ostream &os)
{
    const int n = bthread_id_describe(id, NULL, 0);
    std::string s(n > 0 ? (size_t)n + 1 : 1, '\0');
    bthread_id_describe(id, &s[0], s.size());
    s.resize(n > 0 ? (size_t)n : 0);
    os << s << '\n';
}
} // namespace bthread

inline int bthread_id_create2_ranged(bthread_id_t *id, void *data,
                                     bthread_id_on_error2_t on_error, int range)
{
    if (!on_error) // brpc's default: an error destroys the id
        return bthread_id_create_text(id, data, NULL, NULL, range);
    void *arg;
    std::memcpy(&arg, &on_error, sizeof arg);
    return bthread_id_create_text(id, data, bthread::detail::id_on_error2, arg, range);
}
inline int bthread_id_create2(bthread_id_t *id, void *data, bthread_id_on_error2_t on_error)
{
    return bthread_id_create2_ranged(id, data, on_error, 1);
}
inline int bthread_id_error2_verbose(bthread_id_t id, int error_code,
                                     const std::string &error_text, const char *location)
{
    return bthread_id_error_text_verbose(id, error_code, error_text.c_str(), location);
}
#define bthread_id_error2(id, ec, et) bthread_id_error2_verbose(id, ec, et, BTHREAD_ID_HERE)
inline int bthread_id_list_reset2(bthread_id_list_t *list, int error_code,
                                  const std::string &error_text)
{
    return bthread_id_list_reset_text(list, error_code, error_text.c_str());
}
inline int bthread_id_list_reset2_pthreadsafe(bthread_id_list_t *list, int error_code,
                                              const std::string &error_text,
                                              pthread_mutex_t *mutex)
{
    return bthread_id_list_reset_text_pthreadsafe(list, error_code, error_text.c_str(), mutex);
}
inline int bthread_id_list_reset2_bthreadsafe(bthread_id_list_t *list, int error_code,
                                              const std::string &error_text,
                                              bthread_mutex_t *mutex)
{
    return bthread_id_list_reset_text_bthreadsafe(list, error_code, error_text.c_str(), mutex);
}

#endif // SCHEDBENCH_BTHREAD_HPP
