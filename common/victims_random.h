/*
 * victims_random.h -- brpc's victim order: a random start and a random stride coprime
 * with the number of other workers, so one round visits every other worker exactly
 * once, and two thieves that start together rarely walk the same path.
 *
 * Binds VICTIM_ITER_T / VICTIM_BEGIN / VICTIM_NEXT for variant.h.  Uses the core's
 * worker_index(), worker_count() and worker_random() (sched.c).
 */
#ifndef SCHEDBENCH_VICTIMS_RANDOM_H
#define SCHEDBENCH_VICTIMS_RANDOM_H

typedef struct victims_random_iter {
    int self, others, pos, stride, left;
} victims_random_iter_t;

static inline int vr_gcd(int a, int b)
{
    while (b) {
        int t = a % b;
        a = b;
        b = t;
    }
    return a;
}

static inline void victims_random_begin(victims_random_iter_t *it, int self, int n,
                                        uint64_t r)
{
    it->self = self;
    it->others = n - 1;
    it->left = n - 1;
    it->pos = it->stride = 0;
    if (it->others <= 0)
        return;
    it->pos = (int)(r % (uint64_t)it->others);
    int s = 1 + (int)((r >> 32) % (uint64_t)it->others); /* 1 .. others */
    while (vr_gcd(s, it->others) != 1)
        s = s % it->others + 1;
    it->stride = s;
}

/* The next victim's index, or -1 when the round is over. */
static inline int victims_random_next(victims_random_iter_t *it)
{
    if (it->left <= 0)
        return -1;
    it->left--;
    int j = it->pos;
    it->pos = (it->pos + it->stride) % it->others;
    return j < it->self ? j : j + 1; /* skip ourselves */
}

#define VICTIM_ITER_T victims_random_iter_t
#define VICTIM_BEGIN(w, it) \
    victims_random_begin((it), worker_index(w), worker_count(), worker_random(w))
#define VICTIM_NEXT(w, it) victims_random_next(it)

#endif /* SCHEDBENCH_VICTIMS_RANDOM_H */
