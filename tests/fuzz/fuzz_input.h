/*
 * fuzz_input.h: the layout of a fuzz input, shared by the target
 * (fuzz_frames.c) and the corpus generator (gen_corpus.c).  README.md
 * describes it in prose.  Every byte has a meaning whatever its value, and a
 * truncated input just ends early, so every mutation is a valid input.
 *
 *   byte 0  config: FZ_CFG_* (bit 7: TCP state-driving mode)
 *   byte 1  NIC features at start (FZ_F_*)
 *   byte 2  application behaviour at start (FZ_A_*)
 *   TCP mode only: byte n, then 3 bytes per scripted connection (see below)
 *   then operations until the input ends: one opcode byte (value % FZ_OP_COUNT)
 *   and its arguments.
 */
#ifndef TESTS_FUZZ_FUZZ_INPUT_H
#define TESTS_FUZZ_FUZZ_INPUT_H

/* NIC features (byte 1 of an input; FZ_OP_FEATURES) */
#define FZ_F_SG (1U << 0)
#define FZ_F_IP4_RX (1U << 1)
#define FZ_F_IP4_TX (1U << 2)
#define FZ_F_TCP_RX (1U << 3)
#define FZ_F_TCP_TX (1U << 4)
#define FZ_F_TSO (1U << 5)
#define FZ_F_UDP_RX (1U << 6)
#define FZ_F_UDP_TX (1U << 7)

/* application behaviour (byte 2; FZ_OP_APP) */
#define FZ_A_ACCEPT (1U << 0)		/* accept SYNs to any port (else only port 80) */
#define FZ_A_CONSUME (1U << 1)		/* iip_tcp_rxbuf_consumed from the payload callback */
#define FZ_A_ECHO (1U << 2)		/* send received TCP data back */
#define FZ_A_CLOSE_ON_FIN (1U << 3)	/* iip_tcp_close when the peer's FIN arrives */
#define FZ_A_STREAM (1U << 4)		/* send another segment when data is acked */
#define FZ_A_UDP_ECHO (1U << 5)		/* send received datagrams back */
#define FZ_A_CLOSE_EARLY (1U << 6)	/* iip_tcp_close right in accepted/connected */
#define FZ_A_GREET (1U << 7)		/* send a greeting in accepted/connected */

/* byte 0 */
#define FZ_CFG_POOLS(b) ((b) & 3)		/* 0: 8 conns/64 wrappers, 1: 32/512, 2: 64/1024, 3: 2/16 */
#define FZ_CFG_MTU(b) (((b) >> 2) & 3)		/* 0: 1500, 1: 576, 2: 9000, 3: 1280 */
#define FZ_CFG_UDP_FILTER (1U << 4)		/* iip_udp_port_open(7) and (53): other ports are closed */
#define FZ_CFG_CUBIC (1U << 5)			/* the app sets CUBIC on every connection */
#define FZ_CFG_TCP_MODE (1U << 7)

/*
 * TCP mode setup: byte n (1 + n % 4 connections), then per connection
 *   c0: bit 0 active open (else passive), bit 1 MSS, bit 2 window scale,
 *       bit 3 SACK-permitted, bit 4 timestamps (options the peer offers),
 *       bits 5-7 the peer's ISN choice (7: just below 2^32, to wrap)
 *   c1: target state (FZ_ST_*, value % FZ_ST_COUNT)
 *   c2: parameter (segments of data, window scale shift, ...)
 */
enum {
	FZ_ST_ESTABLISHED = 0,
	FZ_ST_DATA_IN_FLIGHT,	/* c2 % 8 + 1 segments sent, unacknowledged */
	FZ_ST_OOO_QUEUED,	/* c2 % 4 + 1 segments received with holes before them */
	FZ_ST_PEER_ZERO_WINDOW,	/* our data acked with window 0, more queued: persist timer */
	FZ_ST_OUR_WINDOW_FULL,	/* the app stops consuming, the peer fills the window */
	FZ_ST_FIN_WAIT_1,
	FZ_ST_FIN_WAIT_2,
	FZ_ST_CLOSE_WAIT,
	FZ_ST_CLOSING,
	FZ_ST_LAST_ACK,
	FZ_ST_TIME_WAIT,
	FZ_ST_SYN_RECEIVED,	/* passive: no final ACK */
	FZ_ST_SYN_SENT,		/* active: no SYN-ACK */
	FZ_ST_RECOVERY,		/* data in flight, then four duplicate ACKs (with SACK blocks if negotiated) */
	FZ_ST_COUNT
};

/* operations */
enum {
	/* flags(1) [s(1) if FZ_FR_CHAIN] len(2) bytes(len): one frame in one iip_run */
	FZ_OP_FRAME = 0,
	/* n(1): 1 + n % 4 frames (each as FZ_OP_FRAME's arguments) in one iip_run */
	FZ_OP_BATCH,
	/* v(1): advance the clock (v < 100: 10 v ms; < 200: v - 100 s; < 250: v - 200 min; else 3 h), then iip_run */
	FZ_OP_CLOCK,
	/* v(1): NIC features */
	FZ_OP_FEATURES,
	/* v(1): application behaviour */
	FZ_OP_APP,
	/* handle(1) len(2) flags(1): iip_tcp_send of len % 9001 bytes (0: an empty
	 * packet), as a two-segment chain if flags bit 7 is set (both refused) */
	FZ_OP_TCP_SEND,
	/* handle(1): iip_tcp_close */
	FZ_OP_TCP_CLOSE,
	/* sel(1) lport(2) pport(2): iip_tcp_connect to 10.0.0.2 (sel bit 0: 10.0.0.3) */
	FZ_OP_TCP_CONNECT,
	/* len(2) sport(1) dport(1): iip_udp_send to 10.0.0.2 of len % 9000 bytes (len >= 65400: len bytes) */
	FZ_OP_UDP_SEND,
	/* ip(1): iip_arp_request for 10.0.0.ip */
	FZ_OP_ARP_REQUEST,
	/* handle(1) cnt(1): iip_tcp_rxbuf_consumed */
	FZ_OP_CONSUME,
	/* a segment on a live connection or a fresh 4-tuple, see FZ_SEG_* */
	FZ_OP_TCP_SEG,
	/* handle(1) v(1): nodelay (bit 0), keepalive (bit 1, 1 s idle), CUBIC (bit 2) */
	FZ_OP_CONN_OPT,
	/* v(1): from now on every v-th packet allocation or clone fails (0: none) */
	FZ_OP_ALLOC_FAIL,
	/* n(1) base(1): 1 + n % 32 SYNs from fresh ports (backlog, pool exhaustion, cookies) */
	FZ_OP_SYN_FLOOD,
	/* proto(1) len(2) unit(1) order(1): a datagram cut into fragments, see FZ_FRAG_* */
	FZ_OP_FRAGS,
	/* conn(1) code(1) mtu(2) seq_delta(2): ICMP destination unreachable quoting a
	 * live connection's segment at snd_una + seq_delta (path MTU discovery) */
	FZ_OP_ICMP_ERR,
	FZ_OP_COUNT
};

/* FZ_OP_FRAME flags */
#define FZ_FR_FIX_IP_CSUM (1U << 0)	/* recompute the IPv4 header checksum */
#define FZ_FR_FIX_L4_CSUM (1U << 1)	/* recompute the TCP/UDP/ICMP checksum */
#define FZ_FR_NIC_CSUM_BAD (1U << 2)	/* the (offloading) NIC reports a bad checksum */
#define FZ_FR_CHAIN (1U << 3)		/* byte s follows the flags: deliver as a chain split at 1 + s */
#define FZ_FR_ADDRESS (1U << 4)		/* write our MAC and IPv4 address as destination, the peer's as source */
#define FZ_FR_L2_SKIP (1U << 5)		/* iip_ops_l2_skip says the link layer consumed it */

/*
 * FZ_OP_TCP_SEG: conn(1) flags(1) sel(1) seq_delta(2) ack_delta(2) win(2) plen(2) [options]
 *   conn: bit 7 clear: the (conn % live)-th live connection; set: a fresh
 *         4-tuple from 10.0.0.2 port 20000 + 7 * (conn & 63) to port 80
 *   sel bits 0-1: seq base: rcv_nxt, right window edge, irs, middle of window
 *       bits 2-3: ack base: snd_una, snd_nxt, snd_max, snd_una - max window
 *       bits 4-6: options: FZ_SEG_OPT_*
 *       bit 7: the deltas are multiplied by 256
 *   plen: payload bytes, % 4096
 */
enum {
	FZ_SEG_OPT_NONE = 0,
	FZ_SEG_OPT_TS,		/* timestamps: our clock, echoing the stack's */
	FZ_SEG_OPT_TS_SACK,	/* and n(1) SACK blocks of start(2) len(2), relative to the ack base */
	FZ_SEG_OPT_SACK,	/* SACK blocks only */
	FZ_SEG_OPT_SYN,		/* mss(2) ws(1): MSS, window scale, SACK-permitted, timestamps */
	FZ_SEG_OPT_TS_OLD,	/* a timestamp older than the stack's ts_recent by d(2) (PAWS) */
	FZ_SEG_OPT_RAW,		/* len(1) bytes: raw option bytes (len % 41, padded to 4) */
	FZ_SEG_OPT_TS_ZERO_ECR	/* timestamps with a zero echo */
};

/*
 * FZ_OP_FRAGS: proto: bits 0-1 UDP, ICMP echo, TCP SYN, protocol 200;
 *   bit 2: the fragments in one iip_run; len: payload % 9000;
 *   unit: fragment payload 8 * (1 + unit % 64), at most 16 fragments sent;
 *   order bits: FZ_FRAG_*
 */
#define FZ_FRAG_REVERSE (1U << 0)
#define FZ_FRAG_DUPLICATE (1U << 1)	/* the first fragment twice */
#define FZ_FRAG_OVERLAP (1U << 2)	/* the second fragment starts 8 bytes early */
#define FZ_FRAG_DROP_ONE (1U << 3)	/* the last fragment is lost: waits for the timeout */
#define FZ_FRAG_MF_LAST (1U << 4)	/* the last fragment claims more follow */
#define FZ_FRAG_BAD_CSUM (1U << 5)	/* the L4 checksum is wrong */

#endif /* TESTS_FUZZ_FUZZ_INPUT_H */
