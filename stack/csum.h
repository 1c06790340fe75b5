/*
 * csum.h: the Internet checksum (RFC 1071), computed in software when the NIC
 * does not offload it.
 *
 * Partial sums are kept as 32-bit values in host byte order of the 16-bit
 * words as they lie in memory (RFC 1071 2(B): the sum is byte-order
 * independent), so the final folded value can be stored into a header field
 * with no byte swap.  Odd-length pieces of a scatter-gather chain are
 * handled by swapping the partial sum of the piece that starts at an odd
 * offset (RFC 1071 2(B) again).
 */
#ifndef IIP_CSUM_H
#define IIP_CSUM_H

#if defined(__GNUC__) || defined(__clang__)
/* 32-bit loads from any address, allowed to alias packet bytes */
typedef uint32_t __attribute__((__may_alias__, __aligned__(1))) __iip_u32_any;
typedef uint16_t __attribute__((__may_alias__, __aligned__(1))) __iip_u16_any;
#define __IIP_CSUM_WORD_LOADS 1
#endif

static uint32_t __iip_csum_fold32(unsigned long s)
{
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint32_t) s;
}

/* Adds two partial sums (one's complement addition). */
static uint32_t __iip_csum_add(uint32_t a, uint32_t b)
{
	uint32_t s = a + b;
	return s + (s < a); /* end-around carry */
}

/*
 * Partial sum of len bytes at p, as if p started at an even offset.  The
 * result is not folded to 16 bits.
 */
static uint32_t __iip_csum_raw(const void *p, uint32_t len)
{
	const uint8_t *b = (const uint8_t *) p;
	unsigned long s = 0;
#ifdef __IIP_CSUM_WORD_LOADS
	if (sizeof(unsigned long) >= 8) {
		/* 64-bit accumulator: 2^32 additions of 32-bit words cannot overflow */
		unsigned long s1 = 0;
		while (len >= 32) {
			const __iip_u32_any *w = (const __iip_u32_any *) b;
			s += (unsigned long) w[0] + w[1] + w[2] + w[3];
			s1 += (unsigned long) w[4] + w[5] + w[6] + w[7];
			b += 32;
			len -= 32;
		}
		s += s1;
		while (len >= 4) {
			s += *(const __iip_u32_any *) b;
			b += 4;
			len -= 4;
		}
		s = (s & 0xffffffffUL) + (s >> 16 >> 16);
		s = (s & 0xffffffffUL) + (s >> 16 >> 16);
	} else {
		/* 32-bit accumulator of 16-bit words; fold before it can overflow */
		while (len >= 2) {
			uint32_t n = len > 65534 ? 65534 : (len & ~1U);
			len -= n;
			for (; n; n -= 2, b += 2)
				s += *(const __iip_u16_any *) b;
			s = __iip_csum_fold32(s);
		}
	}
	if (len >= 2) {
		s += *(const __iip_u16_any *) b;
		b += 2;
		len -= 2;
	}
	if (len) {
		/* the last odd byte is the first byte of a 16-bit word padded with 0 */
		union { uint16_t v; uint8_t c[2]; } u;
		u.c[0] = *b;
		u.c[1] = 0;
		s += u.v;
	}
#else
	{
		/* portable: read 16-bit words byte by byte in memory order */
		uint32_t hi = 0, lo = 0;
		for (; len >= 2; len -= 2, b += 2) {
			hi += b[0];
			lo += b[1];
		}
		if (len)
			hi += b[0];
		{
			/* re-express the big-endian sum in memory order */
			union { uint16_t v; uint8_t c[2]; } u;
			uint32_t be = __iip_csum_fold32((unsigned long) (hi << 8) + lo);
			u.c[0] = (uint8_t) (be >> 8);
			u.c[1] = (uint8_t) be;
			s = u.v;
		}
	}
#endif
	return __iip_csum_fold32(s);
}

/* Byte-swaps a 16-bit partial sum (for pieces starting at an odd offset). */
static uint32_t __iip_csum_swap(uint32_t s)
{
	s = __iip_csum_fold32(s);
	return ((s & 0xff) << 8) | ((s >> 8) & 0xff);
}

/* Final value to store into a checksum field (memory order, no swap needed). */
static uint16_t __iip_csum_finish(uint32_t s)
{
	return (uint16_t) ~__iip_csum_fold32(s);
}

/* Partial sum of the IPv4 pseudo header (RFC 9293 3.1, RFC 768). */
static uint32_t __iip_csum_pseudo(uint32_t src_be, uint32_t dst_be, uint8_t proto, uint16_t l4_len)
{
	uint16_t w[6];
	w[0] = (uint16_t) (src_be & 0xffff);
	w[1] = (uint16_t) (src_be >> 16);
	w[2] = (uint16_t) (dst_be & 0xffff);
	w[3] = (uint16_t) (dst_be >> 16);
	w[4] = __iip_htons(proto);
	w[5] = __iip_htons(l4_len);
	return __iip_csum_fold32((unsigned long) w[0] + w[1] + w[2] + w[3] + w[4] + w[5]);
}

/* Incremental update (RFC 1624 eqn. 3): field changed from old16 to new16. */
static uint16_t __iip_csum_update16(uint16_t csum, uint16_t old16, uint16_t new16)
{
	uint32_t s = (uint16_t) ~csum;
	s = __iip_csum_add(s, (uint16_t) ~old16);
	s = __iip_csum_add(s, new16);
	return (uint16_t) ~__iip_csum_fold32(s);
}

#endif /* IIP_CSUM_H */
