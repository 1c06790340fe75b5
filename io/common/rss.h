/*
 * Receive-side scaling in software: the Toeplitz hash that NICs use to
 * spread flows over receive queues, a 128-entry redirection table (RETA),
 * and the two questions a backend asks of them:
 *
 *   - io_rss_queue_for_frame(): on which queue would a NIC configured with
 *     this key and RETA deliver this received Ethernet frame?  Backends whose
 *     device has no hardware RSS (tap, AF_PACKET, loop, ...) use it to steer
 *     frames to per-thread queues themselves.
 *   - io_rss_queue_for_flow(): on which queue do packets that the *peer* of a
 *     local flow sends to us arrive?  This is what
 *     helper_ip4_get_connection_affinity() answers, so that a client thread
 *     picks a local port whose replies come back to that same thread.
 *
 * Both are derived from the same hash over the same tuple, so they agree by
 * construction; tests/common/test_rss.c checks that on random flows.
 *
 * Header-style: everything is static inline (no unused-function warnings
 * for backends that use only part of it); include it from a backend's main.c.
 * Hosted C (libc) is fine here: this is backend code, not the core.
 */
#ifndef IO_COMMON_RSS_H
#define IO_COMMON_RSS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define IO_RSS_KEY_LEN (40)     /* bytes; what NICs (and Microsoft's spec) use */
#define IO_RSS_RETA_SIZE (128)  /* the low 7 bits of the hash index the RETA */
#define IO_RSS_INPUT_MAX (12)   /* IPv4 src, dst, sport, dport */

/* The key from Microsoft's "Verifying the RSS Hash Calculation"; many NIC
 * drivers use it as their default, and the published test vectors use it. */
static const uint8_t io_rss_key_microsoft[IO_RSS_KEY_LEN] = {
	0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2,
	0x41, 0x67, 0x25, 0x3d, 0x43, 0xa3, 0x8f, 0xb0,
	0xd0, 0xca, 0x2b, 0xcb, 0xae, 0x7b, 0x30, 0xb4,
	0x77, 0xcb, 0x2d, 0xa3, 0x80, 0x30, 0xf2, 0x0c,
	0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa,
};

/* A key whose bit pattern repeats every 16 bits: swapping the two addresses
 * (32-bit fields) or the two ports (16-bit fields) then gives the same hash,
 * so both directions of a flow land on the same queue. */
static const uint8_t io_rss_key_symmetric[IO_RSS_KEY_LEN] = {
	0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a,
	0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a,
	0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a,
	0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a,
	0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a,
};

struct io_rss {
	uint8_t key[IO_RSS_KEY_LEN];
	uint16_t num_queues;
	uint16_t reta[IO_RSS_RETA_SIZE];
	/* byte_table[i][b]: the hash contribution of value b at input byte i.
	 * The Toeplitz hash is linear (XOR) in its input bits, so the hash of an
	 * input is the XOR of one lookup per input byte. */
	uint32_t byte_table[IO_RSS_INPUT_MAX][256];
};

/*
 * The Toeplitz hash, bit by bit, as the specification states it: for every
 * input bit that is set (most significant bit of input[0] first), XOR in the
 * 32 key bits that start at that bit's position.  Requires
 * key_len >= input_len + 4.  Used to build the lookup tables and as the
 * reference the tests compare the fast path to.
 */
static inline uint32_t io_rss_toeplitz(const uint8_t *key, size_t key_len,
				       const uint8_t *input, size_t input_len)
{
	uint32_t result = 0;
	/* window: the next 32 key bits in the high half, refilled bytewise */
	uint64_t window;
	size_t i;
	int bit;

	if (key_len < input_len + 4)
		return 0;
	window = ((uint64_t) key[0] << 56) | ((uint64_t) key[1] << 48) |
		 ((uint64_t) key[2] << 40) | ((uint64_t) key[3] << 32);
	for (i = 0; i < input_len; i++) {
		window |= (uint64_t) key[i + 4] << 24;
		for (bit = 7; bit >= 0; bit--) {
			if ((input[i] >> bit) & 1)
				result ^= (uint32_t) (window >> 32);
			window <<= 1;
		}
	}
	return result;
}

/* Round-robin RETA, the default of Linux drivers and DPDK:
 * entry i -> queue i % num_queues. */
static inline void io_rss_reta_fill_round_robin(struct io_rss *rss)
{
	unsigned i;
	for (i = 0; i < IO_RSS_RETA_SIZE; i++)
		rss->reta[i] = (uint16_t) (i % rss->num_queues);
}

/* Sets up rss for num_queues queues with a 40-byte key (NULL: Microsoft's)
 * and a round-robin RETA.  Returns 0, or -1 if num_queues is 0. */
static inline int io_rss_init(struct io_rss *rss, const uint8_t *key, uint16_t num_queues)
{
	unsigned pos, value;

	if (num_queues == 0)
		return -1;
	memcpy(rss->key, key ? key : io_rss_key_microsoft, IO_RSS_KEY_LEN);
	rss->num_queues = num_queues;
	io_rss_reta_fill_round_robin(rss);
	for (pos = 0; pos < IO_RSS_INPUT_MAX; pos++) {
		for (value = 0; value < 256; value++) {
			/* one byte at position pos = a hash input whose other
			 * bytes are zero; hash only the key window it touches */
			uint8_t one = (uint8_t) value;
			rss->byte_table[pos][value] =
				io_rss_toeplitz(rss->key + pos, IO_RSS_KEY_LEN - pos, &one, 1);
		}
	}
	return 0;
}

/* Replaces the RETA; every entry must name an existing queue.
 * Returns 0, or -1 (RETA unchanged) if an entry is out of range. */
static inline int io_rss_set_reta(struct io_rss *rss, const uint16_t reta[IO_RSS_RETA_SIZE])
{
	unsigned i;
	for (i = 0; i < IO_RSS_RETA_SIZE; i++)
		if (reta[i] >= rss->num_queues)
			return -1;
	memcpy(rss->reta, reta, sizeof(rss->reta));
	return 0;
}

static inline uint32_t io_rss_hash_bytes(const struct io_rss *rss, const uint8_t *input, size_t len)
{
	uint32_t h = 0;
	size_t i;
	for (i = 0; i < len && i < IO_RSS_INPUT_MAX; i++)
		h ^= rss->byte_table[i][input[i]];
	return h;
}

/* Hash of an IPv4 pair, fields in network byte order as they sit in the
 * header: input = src address, dst address. */
static inline uint32_t io_rss_hash_ip4(const struct io_rss *rss, uint32_t src_be, uint32_t dst_be)
{
	uint8_t in[8];
	memcpy(in, &src_be, 4);
	memcpy(in + 4, &dst_be, 4);
	return io_rss_hash_bytes(rss, in, sizeof(in));
}

/* Hash of an IPv4 TCP/UDP 4-tuple, network byte order:
 * input = src address, dst address, src port, dst port. */
static inline uint32_t io_rss_hash_ip4_l4(const struct io_rss *rss, uint32_t src_be, uint32_t dst_be,
					  uint16_t sport_be, uint16_t dport_be)
{
	uint8_t in[12];
	memcpy(in, &src_be, 4);
	memcpy(in + 4, &dst_be, 4);
	memcpy(in + 8, &sport_be, 2);
	memcpy(in + 10, &dport_be, 2);
	return io_rss_hash_bytes(rss, in, sizeof(in));
}

/* What the NIC does with the hash: the low 7 bits index the RETA. */
static inline uint16_t io_rss_queue_for_hash(const struct io_rss *rss, uint32_t hash)
{
	return rss->reta[hash & (IO_RSS_RETA_SIZE - 1)];
}

#define IO_RSS_ETHERTYPE_IPV4 (0x0800)
#define IO_RSS_ETHERTYPE_VLAN (0x8100)
#define IO_RSS_IPPROTO_TCP (6)
#define IO_RSS_IPPROTO_UDP (17)

/*
 * The queue a NIC with this key and RETA would pick for a received frame.
 * Ethernet (optionally one 802.1Q tag) / IPv4 / TCP or UDP, unfragmented,
 * hashes the 4-tuple.  Everything else (ARP, ICMP, other protocols,
 * fragments, truncated or malformed headers) goes to queue 0: such traffic
 * is not tied to a connection, and queue 0 is where the stack's thread 0
 * handles it.  Never reads past frame[len - 1].
 */
static inline uint16_t io_rss_queue_for_frame(const struct io_rss *rss, const uint8_t *frame, size_t len)
{
	size_t off = 12; /* destination and source MAC */
	uint16_t ethertype;
	const uint8_t *ip;
	size_t ip_hlen, ip_total;
	uint32_t src_be, dst_be;
	uint16_t sport_be, dport_be;

	if (frame == NULL || len < off + 2)
		return 0;
	ethertype = (uint16_t) ((frame[off] << 8) | frame[off + 1]);
	off += 2;
	if (ethertype == IO_RSS_ETHERTYPE_VLAN) {
		if (len < off + 4)
			return 0;
		ethertype = (uint16_t) ((frame[off + 2] << 8) | frame[off + 3]);
		off += 4;
	}
	if (ethertype != IO_RSS_ETHERTYPE_IPV4 || len < off + 20)
		return 0;
	ip = frame + off;
	if ((ip[0] >> 4) != 4)
		return 0;
	ip_hlen = (size_t) (ip[0] & 0x0f) * 4;
	ip_total = (size_t) ((ip[2] << 8) | ip[3]);
	if (ip_hlen < 20 || ip_total < ip_hlen || len < off + ip_hlen + 4)
		return 0;
	/* more-fragments flag or a non-zero offset: no (reliable) ports */
	if (((ip[6] & 0x3f) | ip[7]) != 0)
		return 0;
	if (ip[9] != IO_RSS_IPPROTO_TCP && ip[9] != IO_RSS_IPPROTO_UDP)
		return 0;
	memcpy(&src_be, ip + 12, 4);
	memcpy(&dst_be, ip + 16, 4);
	memcpy(&sport_be, ip + ip_hlen, 2);
	memcpy(&dport_be, ip + ip_hlen + 2, 2);
	return io_rss_queue_for_hash(rss, io_rss_hash_ip4_l4(rss, src_be, dst_be, sport_be, dport_be));
}

/*
 * The queue on which packets of a local flow arrive from its peer, i.e.
 * frames with src = peer, dst = local.  Matches io_rss_queue_for_frame() for
 * every such frame; TCP (6) and UDP (17) only, anything else -> queue 0 as
 * in io_rss_queue_for_frame().  Argument order follows
 * helper_ip4_get_connection_affinity().
 */
static inline uint16_t io_rss_queue_for_flow(uint16_t protocol, uint32_t local_ip4_be, uint16_t local_port_be,
					     uint32_t peer_ip4_be, uint16_t peer_port_be,
					     const struct io_rss *rss)
{
	if (protocol != IO_RSS_IPPROTO_TCP && protocol != IO_RSS_IPPROTO_UDP)
		return 0;
	return io_rss_queue_for_hash(rss, io_rss_hash_ip4_l4(rss, peer_ip4_be, local_ip4_be,
							       peer_port_be, local_port_be));
}

static inline int io_rss_hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/*
 * Parses a key given on a command line: 40 bytes as 80 hex digits, bytes
 * optionally separated by ':' (the form ethtool -x prints).  Returns 0, or
 * -1 with a message in err (out is then unspecified).
 */
static inline int io_rss_key_parse_hex(const char *s, uint8_t out[IO_RSS_KEY_LEN], char *err, size_t err_len)
{
	size_t n = 0, i = 0;

	if (s == NULL) {
		snprintf(err, err_len, "RSS key: missing");
		return -1;
	}
	while (s[i] != '\0') {
		int hi, lo;
		if (n > 0 && s[i] == ':')
			i++;
		hi = io_rss_hex_digit(s[i]);
		lo = hi < 0 ? -1 : io_rss_hex_digit(s[i + 1]);
		if (hi < 0 || lo < 0) {
			snprintf(err, err_len, "RSS key \"%s\": expected a hex byte at position %zu", s, i);
			return -1;
		}
		if (n == IO_RSS_KEY_LEN) {
			snprintf(err, err_len, "RSS key \"%s\": longer than %d bytes", s, IO_RSS_KEY_LEN);
			return -1;
		}
		out[n++] = (uint8_t) (hi << 4 | lo);
		i += 2;
	}
	if (n != IO_RSS_KEY_LEN) {
		snprintf(err, err_len, "RSS key \"%s\": %zu bytes, need %d", s, n, IO_RSS_KEY_LEN);
		return -1;
	}
	return 0;
}

#endif /* IO_COMMON_RSS_H */
