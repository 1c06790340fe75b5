/* A small seeded generator (splitmix64): runs with the same -s seed make the
 * same drop/duplicate/reorder/jitter decisions for the same frame sequence. */
#ifndef IMPAIR_RNG_H
#define IMPAIR_RNG_H

#include <stdint.h>

struct rng { uint64_t state; };

static inline uint64_t rng_next(struct rng *r)
{
	uint64_t z = (r->state += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* uniform in [0, 1) with 53 bits */
static inline double rng_unit(struct rng *r)
{
	return (double)(rng_next(r) >> 11) * (1.0 / 9007199254740992.0);
}

/* true with probability P; never draws when P is 0 so that enabling one
 * impairment does not shift the decisions of another */
static inline int rng_chance(struct rng *r, double p)
{
	return p > 0 && rng_unit(r) < p;
}

#endif
