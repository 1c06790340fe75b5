/*
 * io/common/flow_hash.h — the symmetric flow hash the tap and af_packet
 * backends steer with, on the C side.
 *
 * Both backends let the kernel pick the thread that receives a frame (a tap
 * queue, a PACKET_FANOUT member) through a small program they load (eBPF
 * in io/tap/steer.h, classic BPF in io/af_packet/fanout.h). Those programs
 * compute this hash, so helper_ip4_get_connection_affinity can compute the
 * same choice:
 *
 *   h = src_ip ^ dst_ip ^ src_port ^ dst_port      (host byte order)
 *   h ^= h >> 16;  h ^= h >> 8;  member = h % nmembers
 *
 * for IPv4 TCP/UDP frames that are not fragments; every other frame (ARP,
 * ICMP, fragments) goes to member 0. The hash is symmetric (swapping source
 * and destination gives the same value), so "frames the peer sends us" and
 * "frames we send" agree without caring about direction. It is not Toeplitz
 * (io/common/rss.h): the kernel only needs a value, and this one fits in a
 * few BPF instructions without tables.
 */
#ifndef IO_COMMON_FLOW_HASH_H
#define IO_COMMON_FLOW_HASH_H

#include <stdint.h>
#include <string.h>
#include <arpa/inet.h>

/* which of nmembers receives the flow (0 when there is only one) */
static inline uint16_t io_flow_hash_member(uint16_t protocol, uint32_t a_be, uint16_t a_port_be, uint32_t b_be,
					   uint16_t b_port_be, uint16_t nmembers)
{
	uint32_t h;
	if (nmembers <= 1 || (protocol != 6 && protocol != 17))
		return 0;
	h = ntohl(a_be) ^ ntohl(b_be) ^ ntohs(a_port_be) ^ ntohs(b_port_be);
	h ^= h >> 16;
	h ^= h >> 8;
	return (uint16_t) (h % nmembers);
}

/* the same choice for an Ethernet frame (for the mis-steering counters) */
static inline uint16_t io_flow_hash_member_of_frame(const uint8_t *f, uint32_t len, uint16_t nmembers)
{
	uint32_t ihl, s, d;
	uint16_t sp, dp;
	if (nmembers <= 1 || len < 14 + 20 || f[12] != 0x08 || f[13] != 0x00)
		return 0;
	if (((f[20] & 0x3f) | f[21]) || (f[23] != 6 && f[23] != 17))
		return 0;
	ihl = (uint32_t) (f[14] & 0x0f) * 4;
	if (len < 14 + ihl + 4)
		return 0;
	memcpy(&s, f + 26, 4);
	memcpy(&d, f + 30, 4);
	memcpy(&sp, f + 14 + ihl, 2);
	memcpy(&dp, f + 14 + ihl + 2, 2);
	return io_flow_hash_member(f[23], s, sp, d, dp, nmembers);
}

#endif /* IO_COMMON_FLOW_HASH_H */
