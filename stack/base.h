/*
 * base.h: the few primitives the core needs, with no header and no libc.
 *
 * The integrator defines uint8_t, uint16_t, uint32_t, uintptr_t, NULL and
 * IIP_OPS_DEBUG_PRINTF before including stack/main.c.  Everything here can be
 * overridden the same way (e.g. "#define __iip_memcpy memcpy" after including
 * <string.h>, which every program on a hosted system should do: the fallbacks
 * below are byte loops).
 */
#ifndef IIP_BASE_H
#define IIP_BASE_H

#if defined(__GNUC__) || defined(__clang__)
#define __iip_unused_fn __attribute__((unused))
#define __iip_likely(x) __builtin_expect(!!(x), 1)
#define __iip_unlikely(x) __builtin_expect(!!(x), 0)
#define __iip_trap() __builtin_trap()
#else
#define __iip_unused_fn
#define __iip_likely(x) (x)
#define __iip_unlikely(x) (x)
#define __iip_trap() do { *((volatile int *) 0) = 0; } while (1)
#endif

#ifndef __iip_memcpy
#define __iip_memcpy __iip_memcpy_fallback
#endif
#ifndef __iip_memset
#define __iip_memset __iip_memset_fallback
#endif
#ifndef __iip_memcmp
#define __iip_memcmp __iip_memcmp_fallback
#endif
#ifndef __iip_memmove
#define __iip_memmove __iip_memmove_fallback
#endif

static __iip_unused_fn void *__iip_memcpy_fallback(void *dst, const void *src, uintptr_t n)
{
	uint8_t *d = (uint8_t *) dst;
	const uint8_t *s = (const uint8_t *) src;
	while (n--)
		*d++ = *s++;
	return dst;
}

static __iip_unused_fn void *__iip_memset_fallback(void *dst, int c, uintptr_t n)
{
	uint8_t *d = (uint8_t *) dst;
	while (n--)
		*d++ = (uint8_t) c;
	return dst;
}

static __iip_unused_fn int __iip_memcmp_fallback(const void *a, const void *b, uintptr_t n)
{
	const uint8_t *x = (const uint8_t *) a, *y = (const uint8_t *) b;
	for (; n; n--, x++, y++)
		if (*x != *y)
			return *x < *y ? -1 : 1;
	return 0;
}

static __iip_unused_fn void *__iip_memmove_fallback(void *dst, const void *src, uintptr_t n)
{
	uint8_t *d = (uint8_t *) dst;
	const uint8_t *s = (const uint8_t *) src;
	if (d < s) {
		while (n--)
			*d++ = *s++;
	} else if (d > s) {
		d += n;
		s += n;
		while (n--)
			*--d = *--s;
	}
	return dst;
}

/*
 * Byte order without knowing the host's: build the big-endian representation
 * byte by byte through a union.  Compilers turn this into one bswap (or
 * nothing on a big-endian host).
 */
#ifndef __iip_htons
static __iip_unused_fn uint16_t __iip_bo16(uint16_t v)
{
	union { uint16_t v; uint8_t b[2]; } u;
	u.b[0] = (uint8_t) (v >> 8);
	u.b[1] = (uint8_t) v;
	return u.v;
}
#define __iip_htons(x) __iip_bo16((uint16_t) (x))
#define __iip_ntohs(x) __iip_bo16((uint16_t) (x))
#endif
#ifndef __iip_htonl
static __iip_unused_fn uint32_t __iip_bo32(uint32_t v)
{
	union { uint32_t v; uint8_t b[4]; } u;
	u.b[0] = (uint8_t) (v >> 24);
	u.b[1] = (uint8_t) (v >> 16);
	u.b[2] = (uint8_t) (v >> 8);
	u.b[3] = (uint8_t) v;
	return u.v;
}
#define __iip_htonl(x) __iip_bo32((uint32_t) (x))
#define __iip_ntohl(x) __iip_bo32((uint32_t) (x))
#endif

/* Assertions guard the stack's own invariants only, never input. */
#ifndef __iip_assert
#define __iip_assert(cond) \
	do { \
		if (__iip_unlikely(!(cond))) { \
			IIP_OPS_DEBUG_PRINTF("iip: assertion failed: %s (%s:%u)\n", #cond, __FILE__, (unsigned) __LINE__); \
			__iip_trap(); \
		} \
	} while (0)
#endif

#define __iip_min(a, b) ((a) < (b) ? (a) : (b))
#define __iip_max(a, b) ((a) > (b) ? (a) : (b))

/*
 * Sequence-space and wrapping-clock comparisons (RFC 9293 3.4, RFC 1982):
 * a precedes b when the 32-bit difference a - b has its top bit set.  Written
 * without signed conversions, which C89 leaves implementation-defined.
 */
#define __iip_seq_lt(a, b) ((((uint32_t) ((uint32_t) (a) - (uint32_t) (b))) & 0x80000000U) != 0)
#define __iip_seq_le(a, b) ((uint32_t) (a) == (uint32_t) (b) || __iip_seq_lt(a, b))
#define __iip_seq_gt(a, b) __iip_seq_lt(b, a)
#define __iip_seq_ge(a, b) __iip_seq_le(b, a)

#endif /* IIP_BASE_H */
