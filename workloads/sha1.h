/*
 * sha1.h -- SHA-1 (FIPS 180-4, section 6.1), header-only, for UTS's node generator.
 *
 * UTS names every tree node by a 20-byte SHA-1 digest and derives a child's digest from
 * its parent's (see uts_tree.h), so the hash is the whole per-node cost of the workload
 * and must be exactly SHA-1: the published node counts depend on every bit.
 *
 * Written from the standard: big-endian message words, an 80-word schedule, four rounds
 * of 20 steps with the functions Ch / Parity / Maj and constants K0..K3, and the padding
 * 0x80, zeros, 64-bit big-endian bit length.  Static functions only (the Makefile treats
 * every .c file in workloads/ as a workload, so shared code lives in headers).
 *
 *     sha1_ctx_t c; sha1_init(&c); sha1_update(&c, p, n); ...; sha1_final(&c, digest);
 *     sha1(digest, p, n);  // the same in one call
 *
 * A context belongs to one thread at a time; there is no shared state.
 * Tested against the FIPS / RFC 3174 vectors in tests/c/unit_sha1.c.
 */
#ifndef SCHEDBENCH_SHA1_H
#define SCHEDBENCH_SHA1_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define SHA1_DIGEST_SIZE 20
#define SHA1_BLOCK_SIZE 64

typedef struct sha1_ctx {
    uint32_t h[5];                  /* the running hash H0..H4 */
    uint64_t length;                /* bytes hashed so far */
    uint8_t block[SHA1_BLOCK_SIZE]; /* the partial block not yet compressed */
} sha1_ctx_t;

static inline uint32_t sha1_rotl(uint32_t x, unsigned n) { return (x << n) | (x >> (32 - n)); }

static inline uint32_t sha1_load_be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

static inline void sha1_store_be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

/* One 64-byte block into h (FIPS 180-4, 6.1.2 steps 1-4). */
static inline void sha1_compress(uint32_t h[5], const uint8_t block[SHA1_BLOCK_SIZE])
{
#ifdef SB_SIM
    sim_charge_work(SIM_WORK_SHA1_BLOCK, 1); /* simulated time: the model's cost of a block */
#endif
    uint32_t w[80];
    for (int t = 0; t < 16; t++)
        w[t] = sha1_load_be32(block + 4 * t);
    for (int t = 16; t < 80; t++)
        w[t] = sha1_rotl(w[t - 3] ^ w[t - 8] ^ w[t - 14] ^ w[t - 16], 1);

    uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4];
    for (int t = 0; t < 80; t++) {
        uint32_t f, k;
        if (t < 20) {
            f = (b & c) | (~b & d); /* Ch */
            k = 0x5a827999u;
        } else if (t < 40) {
            f = b ^ c ^ d; /* Parity */
            k = 0x6ed9eba1u;
        } else if (t < 60) {
            f = (b & c) | (b & d) | (c & d); /* Maj */
            k = 0x8f1bbcdcu;
        } else {
            f = b ^ c ^ d; /* Parity */
            k = 0xca62c1d6u;
        }
        uint32_t temp = sha1_rotl(a, 5) + f + e + k + w[t];
        e = d;
        d = c;
        c = sha1_rotl(b, 30);
        b = a;
        a = temp;
    }
    h[0] += a;
    h[1] += b;
    h[2] += c;
    h[3] += d;
    h[4] += e;
}

static inline void sha1_init(sha1_ctx_t *c)
{
    /* FIPS 180-4, 5.3.1: the initial hash value. */
    c->h[0] = 0x67452301u;
    c->h[1] = 0xefcdab89u;
    c->h[2] = 0x98badcfeu;
    c->h[3] = 0x10325476u;
    c->h[4] = 0xc3d2e1f0u;
    c->length = 0;
}

static inline void sha1_update(sha1_ctx_t *c, const void *data, size_t n)
{
    const uint8_t *p = (const uint8_t *)data;
    size_t used = (size_t)(c->length % SHA1_BLOCK_SIZE);
    c->length += n;
    if (used) {
        size_t take = SHA1_BLOCK_SIZE - used;
        if (take > n)
            take = n;
        memcpy(c->block + used, p, take);
        p += take;
        n -= take;
        if (used + take < SHA1_BLOCK_SIZE)
            return;
        sha1_compress(c->h, c->block);
    }
    for (; n >= SHA1_BLOCK_SIZE; p += SHA1_BLOCK_SIZE, n -= SHA1_BLOCK_SIZE)
        sha1_compress(c->h, p);
    memcpy(c->block, p, n);
}

static inline void sha1_final(sha1_ctx_t *c, uint8_t digest[SHA1_DIGEST_SIZE])
{
    /* FIPS 180-4, 5.1.1: append 0x80, zeros up to 56 mod 64, then the bit length. */
    size_t used = (size_t)(c->length % SHA1_BLOCK_SIZE);
    uint64_t bits = c->length * 8;
    c->block[used++] = 0x80;
    if (used > SHA1_BLOCK_SIZE - 8) {
        memset(c->block + used, 0, SHA1_BLOCK_SIZE - used);
        sha1_compress(c->h, c->block);
        used = 0;
    }
    memset(c->block + used, 0, SHA1_BLOCK_SIZE - 8 - used);
    sha1_store_be32(c->block + 56, (uint32_t)(bits >> 32));
    sha1_store_be32(c->block + 60, (uint32_t)bits);
    sha1_compress(c->h, c->block);
    for (int i = 0; i < 5; i++)
        sha1_store_be32(digest + 4 * i, c->h[i]);
}

static inline void sha1(uint8_t digest[SHA1_DIGEST_SIZE], const void *data, size_t n)
{
    sha1_ctx_t c;
    sha1_init(&c);
    sha1_update(&c, data, n);
    sha1_final(&c, digest);
}

#endif /* SCHEDBENCH_SHA1_H */
