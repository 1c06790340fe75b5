/*
 * apps/examples/tcp_xfer/sha256.h — SHA-256 (FIPS 180-4), streaming, so
 * that the application can print the digest of what it received and a test
 * can compare it with `sha256sum` on the other side.
 *
 * Portable C: one 64-byte block at a time, big-endian words, the 64 round
 * constants (fractional parts of the cube roots of the first 64 primes) and
 * the initial hash (square roots of the first 8 primes). On x86-64 CPUs
 * with the SHA extensions the blocks go through SHA256RNDS2/MSG1/MSG2
 * instead (chosen at run time): about ten times faster, which matters when
 * the receiving thread is also the one that runs the stack.
 */
#ifndef TCP_XFER_SHA256_H
#define TCP_XFER_SHA256_H

#include <stdint.h>
#include <stddef.h>
#include <string.h>
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define SHA256_HAVE_NI 1
#include <cpuid.h>
#include <immintrin.h>
#endif

struct sha256 {
	uint32_t h[8];
	uint64_t total;       /* bytes hashed so far */
	uint8_t block[64];
	uint32_t used;        /* bytes waiting in block */
	void (*blocks)(uint32_t h[8], const uint8_t *p, size_t n); /* n 64-byte blocks */
};

static const uint32_t sha256_k[64] = {
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
	0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
	0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
	0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
	0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
	0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
	0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
	0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

static void sha256_blocks_c(uint32_t h[8], const uint8_t *p, size_t n);
#ifdef SHA256_HAVE_NI
static void sha256_blocks_ni(uint32_t h[8], const uint8_t *p, size_t n);

static int sha256_cpu_has_ni(void)
{
	unsigned a, b, c, d;
	if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & (1u << 9)) || !(c & (1u << 19))) /* SSSE3, SSE4.1 */
		return 0;
	if (__get_cpuid_max(0, NULL) < 7)
		return 0;
	__cpuid_count(7, 0, a, b, c, d);
	return (b >> 29) & 1; /* SHA */
}
#endif

static void sha256_init(struct sha256 *s)
{
	static const uint32_t h0[8] = { 0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
					0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19 };
	memcpy(s->h, h0, sizeof(h0));
	s->total = 0;
	s->used = 0;
	s->blocks = sha256_blocks_c;
#ifdef SHA256_HAVE_NI
	if (sha256_cpu_has_ni())
		s->blocks = sha256_blocks_ni;
#endif
}

static inline uint32_t sha256_ror(uint32_t x, unsigned n)
{
	return (x >> n) | (x << (32 - n));
}

static void sha256_blocks_c(uint32_t h[8], const uint8_t *p, size_t n)
{
	uint32_t w[64], a, b, c, d, e, f, g, hh;
	int i;
	for (; n; n--, p += 64) {
	for (i = 0; i < 16; i++)
		w[i] = (uint32_t) p[4 * i] << 24 | (uint32_t) p[4 * i + 1] << 16 | (uint32_t) p[4 * i + 2] << 8 | p[4 * i + 3];
	for (i = 16; i < 64; i++) {
		uint32_t s0 = sha256_ror(w[i - 15], 7) ^ sha256_ror(w[i - 15], 18) ^ (w[i - 15] >> 3);
		uint32_t s1 = sha256_ror(w[i - 2], 17) ^ sha256_ror(w[i - 2], 19) ^ (w[i - 2] >> 10);
		w[i] = w[i - 16] + s0 + w[i - 7] + s1;
	}
	a = h[0]; b = h[1]; c = h[2]; d = h[3]; e = h[4]; f = h[5]; g = h[6]; hh = h[7];
	for (i = 0; i < 64; i++) {
		uint32_t t1 = hh + (sha256_ror(e, 6) ^ sha256_ror(e, 11) ^ sha256_ror(e, 25)) + ((e & f) ^ (~e & g)) +
			      sha256_k[i] + w[i];
		uint32_t t2 = (sha256_ror(a, 2) ^ sha256_ror(a, 13) ^ sha256_ror(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
		hh = g; g = f; f = e; e = d + t1;
		d = c; c = b; b = a; a = t1 + t2;
	}
	h[0] += a; h[1] += b; h[2] += c; h[3] += d; h[4] += e; h[5] += f; h[6] += g; h[7] += hh;
	}
}

#ifdef SHA256_HAVE_NI
/*
 * The SHA extensions keep the state as two vectors, ABEF and CDGH (lane 3
 * first); SHA256RNDS2 does two rounds, so each group of four message words
 * takes two calls. MSG1 and MSG2 compute the next four schedule words from
 * the last sixteen (sigma0 part, then the w[t-7] addition, then sigma1).
 */
__attribute__((target("sha,sse4.1,ssse3")))
static void sha256_blocks_ni(uint32_t h[8], const uint8_t *p, size_t n)
{
	const __m128i bswap = _mm_set_epi64x(0x0c0d0e0f08090a0bll, 0x0405060700010203ll);
	__m128i abef, cdgh, t, w[4];
	int i;
	t = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *) &h[0]), 0xb1);    /* C D A B */
	cdgh = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *) &h[4]), 0x1b); /* E F G H */
	abef = _mm_alignr_epi8(t, cdgh, 8);
	cdgh = _mm_blend_epi16(cdgh, t, 0xf0);
	for (; n; n--, p += 64) {
		__m128i abef0 = abef, cdgh0 = cdgh;
		for (i = 0; i < 4; i++)
			w[i] = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *) (p + 16 * i)), bswap);
		for (i = 0; i < 16; i++) {
			__m128i k;
			if (i >= 4) { /* words 4i..4i+3 replace 4i-16..4i-13 */
				t = _mm_sha256msg1_epu32(w[i & 3], w[(i + 1) & 3]);
				t = _mm_add_epi32(t, _mm_alignr_epi8(w[(i + 3) & 3], w[(i + 2) & 3], 4));
				w[i & 3] = _mm_sha256msg2_epu32(t, w[(i + 3) & 3]);
			}
			k = _mm_add_epi32(w[i & 3], _mm_loadu_si128((const __m128i *) &sha256_k[4 * i]));
			/* two rounds: the result is the new ABEF, the old ABEF becomes CDGH */
			cdgh = _mm_sha256rnds2_epu32(cdgh, abef, k);
			abef = _mm_sha256rnds2_epu32(abef, cdgh, _mm_shuffle_epi32(k, 0x0e));
		}
		abef = _mm_add_epi32(abef, abef0);
		cdgh = _mm_add_epi32(cdgh, cdgh0);
	}
	t = _mm_shuffle_epi32(abef, 0x1b);
	cdgh = _mm_shuffle_epi32(cdgh, 0xb1);
	_mm_storeu_si128((__m128i *) &h[0], _mm_blend_epi16(t, cdgh, 0xf0));
	_mm_storeu_si128((__m128i *) &h[4], _mm_alignr_epi8(cdgh, t, 8));
}
#endif

static void sha256_update(struct sha256 *s, const uint8_t *p, uint32_t n)
{
	s->total += n;
	if (s->used) {
		uint32_t k = 64 - s->used < n ? 64 - s->used : n;
		memcpy(s->block + s->used, p, k);
		s->used += k;
		p += k;
		n -= k;
		if (s->used < 64)
			return;
		s->blocks(s->h, s->block, 1);
		s->used = 0;
	}
	if (n >= 64) {
		s->blocks(s->h, p, n / 64);
		p += n & ~63u;
		n &= 63;
	}
	memcpy(s->block, p, n);
	s->used = n;
}

/* the digest as 64 lowercase hex digits and a NUL, as sha256sum prints it */
static void sha256_final_hex(struct sha256 *s, char out[65])
{
	uint64_t bits = s->total * 8; /* the message length, taken before padding */
	uint8_t pad[72];
	uint32_t padlen = (s->used < 56 ? 56 : 120) - s->used, i;
	memset(pad, 0, sizeof(pad));
	pad[0] = 0x80;
	for (i = 0; i < 8; i++)
		pad[padlen + i] = (uint8_t) (bits >> (56 - 8 * i));
	sha256_update(s, pad, padlen + 8);
	for (i = 0; i < 32; i++) {
		static const char hex[] = "0123456789abcdef";
		uint8_t byte = (uint8_t) (s->h[i / 4] >> (24 - 8 * (i % 4)));
		out[2 * i] = hex[byte >> 4];
		out[2 * i + 1] = hex[byte & 15];
	}
	out[64] = '\0';
}

#endif /* TCP_XFER_SHA256_H */
