/*
 * io/common/eth_ops.h — the stack's Ethernet (L2) callbacks for backends
 * whose packets are io/common/pkt.h packets carrying Ethernet II frames.
 * The header sits at the start of the packet data: destination (6 bytes),
 * source (6 bytes), EtherType (2 bytes, big-endian).
 *
 * Not here, because they depend on the backend: iip_ops_l2_skip (which
 * frames to ignore), iip_ops_l2_push and iip_ops_l2_flush (transmission).
 */
#ifndef IO_COMMON_ETH_OPS_H
#define IO_COMMON_ETH_OPS_H

#include <stdint.h>
#include <string.h>

#include "pkt.h"

#define IO_ETH_ADDR_LEN 6

/* for iip_ops_l2_skip on a backend that sees frames for other hosts: a frame
 * too short for the header, or unicast to another MAC than ours, is not for
 * the stack (broadcast and multicast are) */
static inline uint8_t io_eth_not_for(const struct io_pkt *pkt, const uint8_t mac[6])
{
	if (pkt->len < 14)
		return 1;
	return !(pkt->data[0] & 1) && memcmp(pkt->data, mac, 6) != 0;
}

static uint16_t iip_ops_l2_hdr_len(void *pkt, void *opaque)
{
	(void) pkt;
	(void) opaque;
	return 14;
}

static uint8_t *iip_ops_l2_hdr_src_ptr(void *pkt, void *opaque)
{
	(void) opaque;
	return ((struct io_pkt *) pkt)->data + IO_ETH_ADDR_LEN;
}

static uint8_t *iip_ops_l2_hdr_dst_ptr(void *pkt, void *opaque)
{
	(void) opaque;
	return ((struct io_pkt *) pkt)->data;
}

/* EtherType as it is on the wire (big-endian), read byte by byte so that
 * the value is right on any host byte order */
static uint16_t iip_ops_l2_ethertype_be(void *pkt, void *opaque)
{
	uint16_t v;
	(void) opaque;
	memcpy(&v, ((struct io_pkt *) pkt)->data + 12, sizeof(v));
	return v;
}

static uint16_t iip_ops_l2_addr_len(void *opaque)
{
	(void) opaque;
	return IO_ETH_ADDR_LEN;
}

static void iip_ops_l2_broadcast_addr(uint8_t bcaddr[], void *opaque)
{
	(void) opaque;
	memset(bcaddr, 0xff, IO_ETH_ADDR_LEN);
}

/* writes the 14-byte header at data+0; the stack sets the length itself */
static void iip_ops_l2_hdr_craft(void *pkt, uint8_t src[], uint8_t dst[], uint16_t ethertype_be, void *opaque)
{
	uint8_t *d = ((struct io_pkt *) pkt)->data;
	(void) opaque;
	memcpy(d, dst, IO_ETH_ADDR_LEN);
	memcpy(d + IO_ETH_ADDR_LEN, src, IO_ETH_ADDR_LEN);
	memcpy(d + 12, &ethertype_be, sizeof(ethertype_be));
}

static uint8_t iip_ops_arp_lhw(void *opaque)
{
	(void) opaque;
	return IO_ETH_ADDR_LEN;
}

static uint8_t iip_ops_arp_lproto(void *opaque)
{
	(void) opaque;
	return 4;
}

#endif /* IO_COMMON_ETH_OPS_H */
