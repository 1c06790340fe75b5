/*
 * io/threadmodel/msg.h — what travels between a networking thread and its
 * application thread: one fixed-size message per event (the stack's
 * callbacks, networking -> application) or per operation (the API calls
 * and packet returns, application -> networking).
 *
 * A message carries the call's arguments by value (MACs are copied: the
 * stack's arrays do not outlive the callback) and packets by pointer:
 * packets in events are clones the networking thread made (the stack frees
 * the originals when the callback returns), packets in operations came
 * from the networking thread's pool through the supply ring.  Every packet
 * is allocated and freed on the networking thread.
 */
#ifndef IO_THREADMODEL_MSG_H
#define IO_THREADMODEL_MSG_H

#include <stdint.h>

enum tm_kind {
	/* events: networking thread -> application thread */
	TM_EV_ARP_REPLY = 1,
	TM_EV_ICMP_REPLY,
	TM_EV_TCP_ACCEPT,     /* synchronous: the networking thread waits for the answer */
	TM_EV_TCP_ACCEPTED,   /* synchronous */
	TM_EV_TCP_CONNECTED,  /* synchronous */
	TM_EV_TCP_PAYLOAD,
	TM_EV_TCP_ACKED,
	TM_EV_TCP_CLOSED,
	TM_EV_UDP_PAYLOAD,
	/* operations: application thread -> networking thread */
	TM_OP_TCP_SEND,
	TM_OP_TCP_CLOSE,
	TM_OP_TCP_RXBUF_CONSUMED,
	TM_OP_TCP_CONNECT,    /* synchronous: the application thread waits for the result */
	TM_OP_UDP_SEND,
	TM_OP_ARP_REQUEST,
	TM_OP_PKT_FREE,
	TM_OP_PKT_CLONE,      /* synchronous */
};

struct tm_msg {
	uint8_t kind;
	uint16_t u16[3];      /* ports (local, peer), head/tail offsets, tcp flags, count */
	uint32_t stamp;       /* operations on a handle: closed events the app had seen */
	uint32_t local_ip4_be, peer_ip4_be;
	void *ws, *handle, *pkt, *tcp_opaque;
	uint8_t local_mac[IIP_CONF_L2ADDR_LEN_MAX], peer_mac[IIP_CONF_L2ADDR_LEN_MAX];
};

#endif
