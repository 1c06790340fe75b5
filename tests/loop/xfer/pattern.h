/*
 * tests/loop/xfer/pattern.h — what xfer sends: the stream format and the
 * byte pattern every receiver checks.
 *
 * Each direction of a connection is one stream: a 16-byte header (magic
 * "iipx", connection id as big-endian u32, payload size as big-endian u64)
 * then the payload, whose byte k is a function of (connection id,
 * direction, k): a byte out of place, from another connection or direction,
 * or altered on the way differs from what the receiver computes.
 */
#ifndef XFER_PATTERN_H
#define XFER_PATTERN_H

#include <stdint.h>
#include <string.h>
#include <arpa/inet.h>

#define XFER_MAGIC 0x69697078u        /* "iipx" */
#define XFER_HDR_LEN 16u

static uint64_t xfer_mix(uint64_t x)
{
	/* splitmix64 finaliser: every input bit changes every output bit */
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

static uint64_t xfer_key(uint32_t id, uint32_t dir)
{
	return xfer_mix(((uint64_t) id << 1 | dir) ^ 0x1234567890abcdefull);
}

/*
 * Payload word w of a stream (bytes 8w .. 8w+7, least significant first):
 * unique per offset (multiplying by an odd constant is a bijection) and per
 * stream (the key is a random-looking 64-bit value per id and direction),
 * and cheap: one multiply per 8 bytes, so checking a gigabyte costs little
 * next to the stack's own work.
 */
static uint64_t xfer_word(uint64_t key, uint64_t w)
{
	return (w * 0x9e3779b97f4a7c15ull) ^ key;
}

/* the word as it lies in memory (little-endian byte order on every host) */
static uint64_t xfer_word_mem(uint64_t key, uint64_t w)
{
	uint64_t v = xfer_word(key, w);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	v = __builtin_bswap64(v);
#endif
	return v;
}

static uint8_t xfer_byte(uint64_t key, uint64_t off)
{
	return (uint8_t) (xfer_word(key, off >> 3) >> ((off & 7) * 8));
}

static void xfer_fill(uint64_t key, uint64_t off, uint8_t *p, uint32_t n)
{
	while (n && (off & 7)) {
		*p++ = xfer_byte(key, off++);
		n--;
	}
	while (n >= 8) {
		uint64_t v = xfer_word_mem(key, off >> 3);
		memcpy(p, &v, 8);
		p += 8;
		off += 8;
		n -= 8;
	}
	while (n) {
		*p++ = xfer_byte(key, off++);
		n--;
	}
}

/* number of bytes of p[0..n) that differ from the pattern at off */
static uint64_t xfer_check(uint64_t key, uint64_t off, const uint8_t *p, uint32_t n)
{
	uint64_t bad = 0;
	while (n && (off & 7)) {
		bad += *p++ != xfer_byte(key, off++);
		n--;
	}
	while (n >= 8) {
		uint64_t v = xfer_word_mem(key, off >> 3), got;
		memcpy(&got, p, 8);
		if (got != v) {
			uint64_t x = got ^ v;
			int i;
			for (i = 0; i < 8; i++)
				bad += ((x >> (i * 8)) & 0xff) != 0;
		}
		p += 8;
		off += 8;
		n -= 8;
	}
	while (n) {
		bad += *p++ != xfer_byte(key, off++);
		n--;
	}
	return bad;
}

static void xfer_hdr(uint8_t h[XFER_HDR_LEN], uint32_t id, uint64_t payload)
{
	uint32_t w[4];
	w[0] = htonl(XFER_MAGIC);
	w[1] = htonl(id);
	w[2] = htonl((uint32_t) (payload >> 32));
	w[3] = htonl((uint32_t) payload);
	memcpy(h, w, XFER_HDR_LEN);
}

#endif /* XFER_PATTERN_H */
