/*
 * io/tap/steer.h — which queue of a multi-queue tap receives a flow.
 *
 * Left alone, the kernel picks a tap queue from a flow table it learns from
 * the queue we last sent a flow's packets on, and for flows it does not
 * know (new ones, or idle for 3 s: the table ages out) from a hash with a
 * random per-boot seed. Neither can be predicted by
 * helper_ip4_get_connection_affinity, and a flow that moves to another
 * thread meets a workspace that does not know it (which answers RST). So
 * with more than one queue we attach a steering program (TUNSETSTEERINGEBPF)
 * that computes a hash we can compute too:
 *
 *   h = src_ip ^ dst_ip ^ src_port ^ dst_port      (host-order values)
 *   h ^= h >> 16;  h ^= h >> 8;  queue = h % nqueues
 *
 * for IPv4 TCP/UDP frames that are not fragments; every other frame (ARP,
 * ICMP, fragments) goes to queue 0. The hash is symmetric (swapping source
 * and destination gives the same value), so "frames the peer sends us" and
 * "frames we send" agree without caring about direction. It is not
 * Toeplitz: the kernel only needs a value, and this one fits in a few BPF
 * instructions without tables.
 */
#ifndef IO_TAP_STEER_H
#define IO_TAP_STEER_H

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/bpf.h>
#include <sys/syscall.h>

/* the C side of the program below */
static inline uint16_t tap_steer_queue(uint16_t protocol, uint32_t a_be, uint16_t a_port_be, uint32_t b_be,
				       uint16_t b_port_be, uint16_t nqueues)
{
	uint32_t h;
	if (nqueues <= 1 || (protocol != 6 && protocol != 17))
		return 0;
	h = ntohl(a_be) ^ ntohl(b_be) ^ ntohs(a_port_be) ^ ntohs(b_port_be);
	h ^= h >> 16;
	h ^= h >> 8;
	return (uint16_t) (h % nqueues);
}

/* the same choice for an Ethernet frame (for the mis-steering counter) */
static inline uint16_t tap_steer_queue_of_frame(const uint8_t *f, uint32_t len, uint16_t nqueues)
{
	uint32_t ihl, s, d;
	uint16_t sp, dp;
	if (nqueues <= 1 || len < 14 + 20 || f[12] != 0x08 || f[13] != 0x00)
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
	return tap_steer_queue(f[23], s, sp, d, dp, nqueues);
}

#define TAP_BPF_INSN(c, d, s, o, i) ((struct bpf_insn) { .code = (c), .dst_reg = (d), .src_reg = (s), .off = (o), .imm = (i) })

/*
 * Loads the steering program for nqueues queues; returns its fd or -1 with
 * errno set. Packet access uses the classic LD_ABS/LD_IND instructions
 * (allowed for socket-filter programs, which tun steering programs are);
 * they return host-order values and end the program with 0 when the frame
 * is too short, which sends such frames to queue 0.
 */
static inline int tap_steer_load(uint16_t nqueues, char *log, size_t log_len)
{
	enum { R0 = 0, R6 = 6, R7 = 7, R8 = 8, R9 = 9 };
	struct bpf_insn prog[] = {
		TAP_BPF_INSN(BPF_ALU64 | BPF_MOV | BPF_X, R6, 1, 0, 0),          /* r6 = ctx (skb) */
		TAP_BPF_INSN(BPF_LD | BPF_ABS | BPF_H, 0, 0, 0, 12),             /* ethertype */
		TAP_BPF_INSN(BPF_JMP | BPF_JNE | BPF_K, R0, 0, 26, 0x0800),      /* -> ret0 */
		TAP_BPF_INSN(BPF_LD | BPF_ABS | BPF_H, 0, 0, 0, 20),             /* flags + fragment offset */
		TAP_BPF_INSN(BPF_JMP | BPF_JSET | BPF_K, R0, 0, 24, 0x3fff),     /* fragment -> ret0 */
		TAP_BPF_INSN(BPF_LD | BPF_ABS | BPF_B, 0, 0, 0, 23),             /* protocol */
		TAP_BPF_INSN(BPF_JMP | BPF_JEQ | BPF_K, R0, 0, 1, 6),            /* TCP */
		TAP_BPF_INSN(BPF_JMP | BPF_JNE | BPF_K, R0, 0, 21, 17),          /* not UDP -> ret0 */
		TAP_BPF_INSN(BPF_LD | BPF_ABS | BPF_W, 0, 0, 0, 26),             /* source address */
		TAP_BPF_INSN(BPF_ALU64 | BPF_MOV | BPF_X, R7, R0, 0, 0),
		TAP_BPF_INSN(BPF_LD | BPF_ABS | BPF_W, 0, 0, 0, 30),             /* destination address */
		TAP_BPF_INSN(BPF_ALU64 | BPF_XOR | BPF_X, R7, R0, 0, 0),
		TAP_BPF_INSN(BPF_LD | BPF_ABS | BPF_B, 0, 0, 0, 14),             /* version + IHL */
		TAP_BPF_INSN(BPF_ALU64 | BPF_AND | BPF_K, R0, 0, 0, 0x0f),
		TAP_BPF_INSN(BPF_ALU64 | BPF_LSH | BPF_K, R0, 0, 0, 2),
		TAP_BPF_INSN(BPF_ALU64 | BPF_MOV | BPF_X, R8, R0, 0, 0),          /* r8 = IP header length */
		TAP_BPF_INSN(BPF_LD | BPF_IND | BPF_H, 0, R8, 0, 14),            /* source port */
		TAP_BPF_INSN(BPF_ALU64 | BPF_XOR | BPF_X, R7, R0, 0, 0),
		TAP_BPF_INSN(BPF_LD | BPF_IND | BPF_H, 0, R8, 0, 16),            /* destination port */
		TAP_BPF_INSN(BPF_ALU64 | BPF_XOR | BPF_X, R7, R0, 0, 0),
		TAP_BPF_INSN(BPF_ALU | BPF_MOV | BPF_X, R9, R7, 0, 0),          /* fold, 32-bit */
		TAP_BPF_INSN(BPF_ALU | BPF_RSH | BPF_K, R9, 0, 0, 16),
		TAP_BPF_INSN(BPF_ALU | BPF_XOR | BPF_X, R7, R9, 0, 0),
		TAP_BPF_INSN(BPF_ALU | BPF_MOV | BPF_X, R9, R7, 0, 0),
		TAP_BPF_INSN(BPF_ALU | BPF_RSH | BPF_K, R9, 0, 0, 8),
		TAP_BPF_INSN(BPF_ALU | BPF_XOR | BPF_X, R7, R9, 0, 0),
		TAP_BPF_INSN(BPF_ALU | BPF_MOD | BPF_K, R7, 0, 0, nqueues),
		TAP_BPF_INSN(BPF_ALU64 | BPF_MOV | BPF_X, R0, R7, 0, 0),
		TAP_BPF_INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
		TAP_BPF_INSN(BPF_ALU64 | BPF_MOV | BPF_K, R0, 0, 0, 0),           /* ret0 */
		TAP_BPF_INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
	};
	union bpf_attr attr;
	static const char license[] = "GPL";
	memset(&attr, 0, sizeof(attr));
	attr.prog_type = BPF_PROG_TYPE_SOCKET_FILTER;
	attr.insns = (uint64_t) (uintptr_t) prog;
	attr.insn_cnt = (uint32_t) (sizeof(prog) / sizeof(prog[0]));
	attr.license = (uint64_t) (uintptr_t) license;
	if (log && log_len) {
		log[0] = '\0';
		attr.log_buf = (uint64_t) (uintptr_t) log;
		attr.log_size = (uint32_t) log_len;
		attr.log_level = 1;
	}
	return (int) syscall(__NR_bpf, BPF_PROG_LOAD, &attr, sizeof(attr));
}

#endif /* IO_TAP_STEER_H */
