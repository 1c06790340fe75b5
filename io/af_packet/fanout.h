/*
 * io/af_packet/fanout.h — spreading received frames over the threads' packet
 * sockets so that helper_ip4_get_connection_affinity can tell which thread
 * gets a flow.
 *
 * PACKET_FANOUT_HASH would use the kernel's flow hash, whose seed is random
 * per boot, so its choice cannot be predicted; CPU and QM depend on where
 * the frame was received, not on the flow. We use PACKET_FANOUT_CBPF with a
 * classic BPF program computing the symmetric flow hash of
 * ../common/flow_hash.h (the one the tap backend steers with), whose C side
 * helper_ip4_get_connection_affinity calls. This file is the program.
 * Members are numbered in the order their sockets joined the group, so the
 * backend joins them in thread order before any thread runs.
 *
 * The program reads the IPv4 header through SKF_NET_OFF (offsets from the
 * network header), which is right whether or not the link-layer header is
 * in front of skb->data when the fanout runs (it is not, on receive).
 */
#ifndef IO_AF_PACKET_FANOUT_H
#define IO_AF_PACKET_FANOUT_H

#include <stdint.h>
#include <string.h>
#include <arpa/inet.h>
#include <linux/filter.h>
#include <linux/if_ether.h>

#include "../common/flow_hash.h"

#define AFP_NET(k) ((uint32_t) (SKF_NET_OFF + (k)))

/* fills prog (at least 32 entries) and returns the number of instructions */
static inline unsigned short afp_fanout_program(struct sock_filter *prog, uint16_t nmembers)
{
	const struct sock_filter p[] = {
		BPF_STMT(BPF_LD | BPF_H | BPF_ABS, (uint32_t) (SKF_AD_OFF + SKF_AD_PROTOCOL)), /* 0: ethertype */
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ETH_P_IP, 0, 26),                           /* 1: -> ret0 */
		BPF_STMT(BPF_LD | BPF_H | BPF_ABS, AFP_NET(6)),                                 /* 2: fragment */
		BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, 0x3fff, 24, 0),                             /* 3: -> ret0 */
		BPF_STMT(BPF_LD | BPF_B | BPF_ABS, AFP_NET(9)),                                 /* 4: protocol */
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 6, 1, 0),                                   /* 5: TCP -> 7 */
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 17, 0, 21),                                 /* 6: not UDP -> ret0 */
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, AFP_NET(12)),                                /* 7: source */
		BPF_STMT(BPF_MISC | BPF_TAX, 0),                                                /* 8 */
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, AFP_NET(16)),                                /* 9: destination */
		BPF_STMT(BPF_ALU | BPF_XOR | BPF_X, 0),                                         /* 10 */
		BPF_STMT(BPF_ST, 0),                                                            /* 11: M[0] = addresses */
		BPF_STMT(BPF_LDX | BPF_B | BPF_MSH, AFP_NET(0)),                                /* 12: X = IHL * 4 */
		BPF_STMT(BPF_LD | BPF_H | BPF_IND, AFP_NET(0)),                                 /* 13: source port */
		BPF_STMT(BPF_ST, 1),                                                            /* 14 */
		BPF_STMT(BPF_LD | BPF_H | BPF_IND, AFP_NET(2)),                                 /* 15: destination port */
		BPF_STMT(BPF_LDX | BPF_W | BPF_MEM, 1),                                         /* 16 */
		BPF_STMT(BPF_ALU | BPF_XOR | BPF_X, 0),                                         /* 17 */
		BPF_STMT(BPF_LDX | BPF_W | BPF_MEM, 0),                                         /* 18 */
		BPF_STMT(BPF_ALU | BPF_XOR | BPF_X, 0),                                         /* 19: A = h */
		BPF_STMT(BPF_MISC | BPF_TAX, 0),                                                /* 20: X = h */
		BPF_STMT(BPF_ALU | BPF_RSH | BPF_K, 16),                                        /* 21 */
		BPF_STMT(BPF_ALU | BPF_XOR | BPF_X, 0),                                         /* 22: h ^= h >> 16 */
		BPF_STMT(BPF_MISC | BPF_TAX, 0),                                                /* 23 */
		BPF_STMT(BPF_ALU | BPF_RSH | BPF_K, 8),                                         /* 24 */
		BPF_STMT(BPF_ALU | BPF_XOR | BPF_X, 0),                                         /* 25: h ^= h >> 8 */
		BPF_STMT(BPF_ALU | BPF_MOD | BPF_K, nmembers),                                  /* 26 */
		BPF_STMT(BPF_RET | BPF_A, 0),                                                   /* 27 */
		BPF_STMT(BPF_RET | BPF_K, 0),                                                   /* 28: ret0 */
	};
	unsigned short i, n = (unsigned short) (sizeof(p) / sizeof(p[0]));
	for (i = 0; i < n; i++)
		prog[i] = p[i];
	return n;
}

#endif /* IO_AF_PACKET_FANOUT_H */
