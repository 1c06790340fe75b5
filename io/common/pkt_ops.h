/*
 * io/common/pkt_ops.h — the stack's packet callbacks (iip_ops_pkt_*) and the
 * per-packet offload marks/results (iip_ops_nic_offload_*), implemented on
 * io/common/pkt.h for any software backend.
 *
 * Before including, the backend defines how to find the calling thread's
 * pool from the opaque pointer the stack passes to every callback:
 *
 *   #define IO_PKT_POOL_OF(opaque) (&((struct my_thread *) ((void **) (opaque))[0])->pool)
 *
 * The NIC feature callbacks (iip_ops_nic_feature_offload_*) are not here:
 * what a NIC offers is the backend's business.
 */
#ifndef IO_COMMON_PKT_OPS_H
#define IO_COMMON_PKT_OPS_H

#include "pkt.h"

#ifndef IO_PKT_POOL_OF
#error "define IO_PKT_POOL_OF(opaque) before including io/common/pkt_ops.h"
#endif

/* a fresh segment: length 0, data at the start of the buffer; NULL when the
 * pool is exhausted (the stack must cope) */
static void *iip_ops_pkt_alloc(void *opaque)
{
	return io_pkt_alloc(IO_PKT_POOL_OF(opaque));
}

/* frees the whole chain, like rte_pktmbuf_free */
static void iip_ops_pkt_free(void *pkt, void *opaque)
{
	(void) opaque;
	if (pkt)
		io_pkt_free((struct io_pkt *) pkt);
}

static void *iip_ops_pkt_get_data(void *pkt, void *opaque)
{
	(void) opaque;
	return ((struct io_pkt *) pkt)->data;
}

/* length of this one segment (rte_pktmbuf_data_len) */
static uint16_t iip_ops_pkt_get_len(void *pkt, void *opaque)
{
	(void) opaque;
	return ((struct io_pkt *) pkt)->len;
}

static void iip_ops_pkt_set_len(void *pkt, uint16_t len, void *opaque)
{
	(void) opaque;
	io_pkt_set_len((struct io_pkt *) pkt, len);
}

static void iip_ops_pkt_increment_head(void *pkt, uint16_t len, void *opaque)
{
	(void) opaque;
	io_pkt_adj((struct io_pkt *) pkt, len);
}

static void iip_ops_pkt_decrement_tail(void *pkt, uint16_t len, void *opaque)
{
	(void) opaque;
	io_pkt_trim((struct io_pkt *) pkt, len);
}

/* clones every segment of the chain (new descriptors from the caller's
 * pool, buffer reference counts + 1), like rte_pktmbuf_clone */
static void *iip_ops_pkt_clone(void *pkt, void *opaque)
{
	return io_pkt_clone(IO_PKT_POOL_OF(opaque), (struct io_pkt *) pkt);
}

static void iip_ops_pkt_scatter_gather_chain_append(void *pkt_head, void *pkt_tail, void *opaque)
{
	(void) opaque;
	io_pkt_chain_append((struct io_pkt *) pkt_head, (struct io_pkt *) pkt_tail);
}

static void *iip_ops_pkt_scatter_gather_chain_get_next(void *pkt_head, void *opaque)
{
	(void) opaque;
	return io_pkt_next((struct io_pkt *) pkt_head);
}

/* ---- offload marks (transmit) and results (receive) ---------------------- */

static inline void io_pkt_mark(void *pkt, uint32_t flag)
{
	((struct io_pkt *) pkt)->flags |= flag;
}

static void iip_ops_nic_offload_ip4_tx_checksum_mark(void *pkt, void *opaque)
{
	(void) opaque;
	io_pkt_mark(pkt, IO_PKT_F_TX_IP4_CSUM);
}

static void iip_ops_nic_offload_tcp_tx_checksum_mark(void *pkt, void *opaque)
{
	(void) opaque;
	io_pkt_mark(pkt, IO_PKT_F_TX_TCP_CSUM);
}

static void iip_ops_nic_offload_tcp_tx_tso_mark(void *pkt, void *opaque)
{
	(void) opaque;
	io_pkt_mark(pkt, IO_PKT_F_TX_TCP_TSO);
}

static void iip_ops_nic_offload_udp_tx_checksum_mark(void *pkt, void *opaque)
{
	(void) opaque;
	io_pkt_mark(pkt, IO_PKT_F_TX_UDP_CSUM);
}

static void iip_ops_nic_offload_udp_tx_tso_mark(void *pkt, void *opaque)
{
	(void) opaque;
	io_pkt_mark(pkt, IO_PKT_F_TX_UDP_TSO);
}

/* 1 = the NIC checked the checksum and it is good, 0 = bad or not checked */
static uint8_t iip_ops_nic_offload_ip4_rx_checksum(void *pkt, void *opaque)
{
	(void) opaque;
	return (((struct io_pkt *) pkt)->flags & IO_PKT_F_RX_IP4_GOOD) ? 1 : 0;
}

static uint8_t iip_ops_nic_offload_tcp_rx_checksum(void *pkt, void *opaque)
{
	(void) opaque;
	return (((struct io_pkt *) pkt)->flags & IO_PKT_F_RX_TCP_GOOD) ? 1 : 0;
}

static uint8_t iip_ops_nic_offload_udp_rx_checksum(void *pkt, void *opaque)
{
	(void) opaque;
	return (((struct io_pkt *) pkt)->flags & IO_PKT_F_RX_UDP_GOOD) ? 1 : 0;
}

#endif /* IO_COMMON_PKT_OPS_H */
