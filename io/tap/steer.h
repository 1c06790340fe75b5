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
 * that computes the symmetric flow hash of ../common/flow_hash.h, whose C
 * side helper_ip4_get_connection_affinity calls (the af_packet backend's
 * fanout program computes the same). This file is the eBPF program.
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

#include "../common/flow_hash.h"

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
