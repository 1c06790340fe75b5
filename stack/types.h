/*
 * types.h: the state the stack keeps.  All of it lives in memory the
 * integrator hands over: the workspace (one per thread), the connection
 * objects (iip_add_tcp_conn) and the packet wrappers (iip_add_pb).  The
 * integrator must zero the workspace before first use; nothing else needs
 * initialising.
 */
#ifndef IIP_TYPES_H
#define IIP_TYPES_H

/*
 * A packet wrapper: the stack's handle on one of the integrator's packets
 * that it keeps beyond the call that brought it (queued for sending,
 * held out of order, a fragment waiting for reassembly).
 */
struct iip_pb {
	void *pkt;
	struct iip_pb *next;
	struct iip_pb *prev;
	uint32_t seq;		/* TCP: sequence number of the first payload byte */
	uint32_t len;		/* TCP: payload bytes; IP fragment: payload bytes */
	uint32_t off;		/* IP fragment: offset of the payload in the datagram */
	uint16_t head_trim;	/* TCP rx: bytes at the front already delivered */
	uint16_t l3_off;	/* offset of the IP header in the packet data */
	uint8_t tcp_flags;	/* TCP tx: flags to add to segments carrying this data */
	uint8_t fin;		/* TCP rx out of order: the segment carried a FIN */
};

struct iip_pb_queue {
	struct iip_pb *head;
	struct iip_pb *tail;
	uint32_t cnt;
};

/* RFC 9293 3.3.2 */
enum {
	IIP_TCP_STATE_CLOSED = 0,
	IIP_TCP_STATE_SYN_SENT,
	IIP_TCP_STATE_SYN_RECEIVED,
	IIP_TCP_STATE_ESTABLISHED,
	IIP_TCP_STATE_FIN_WAIT_1,
	IIP_TCP_STATE_FIN_WAIT_2,
	IIP_TCP_STATE_CLOSE_WAIT,
	IIP_TCP_STATE_CLOSING,
	IIP_TCP_STATE_LAST_ACK,
	IIP_TCP_STATE_TIME_WAIT
};

/* Congestion controllers (iip_tcp_set_cc) */
#define IIP_TCP_CC_NEWRENO (0)
#define IIP_TCP_CC_CUBIC (1)

#define IIP_TCP_SACK_BLOCKS_MAX (4)	/* blocks we send (RFC 2018 3: 4 fit, 3 with timestamps) */
#define IIP_TCP_SCOREBOARD_MAX (16)	/* SACKed ranges we remember of the peer's blocks */

struct iip_seq_range {
	uint32_t start;
	uint32_t end;
};

struct iip_tcp_conn {
	/* hash chain and the list of every live connection (timers walk it) */
	struct iip_tcp_conn *ht_next;
	struct iip_tcp_conn *all_next;
	struct iip_tcp_conn *all_prev;
	struct iip_tcp_conn *out_next;	/* pending-output list of this iip_run batch */

	uint8_t state;
	uint8_t in_out_list;
	uint8_t app_notified;		/* the app got accepted/connected: it must get closed */
	uint8_t closed_by_app;		/* iip_tcp_close was called */
	uint8_t active_open;		/* opened by iip_tcp_connect */

	/* addresses (network byte order) */
	uint32_t local_ip4_be;
	uint32_t peer_ip4_be;
	uint16_t local_port_be;
	uint16_t peer_port_be;
	uint8_t local_mac[IIP_CONF_L2ADDR_LEN_MAX];
	uint8_t peer_mac[IIP_CONF_L2ADDR_LEN_MAX];

	void *app_opaque;		/* returned by iip_ops_tcp_accepted / connected */

	/* send sequence space (RFC 9293 3.3.1) */
	uint32_t iss;
	uint32_t snd_una;
	uint32_t snd_nxt;
	uint32_t snd_max;		/* highest sequence number sent + 1 */
	uint32_t snd_wnd;		/* peer's window, scaled */
	uint32_t snd_wl1;
	uint32_t snd_wl2;
	uint32_t snd_queued;		/* sequence number after the last queued byte */
	uint32_t max_snd_wnd;		/* largest window the peer offered (SWS, RFC 1122 4.2.3.4) */

	/* receive sequence space */
	uint32_t irs;
	uint32_t rcv_nxt;
	uint32_t rcv_adv;		/* right edge we advertised */
	uint32_t rcv_wnd_sent;		/* window (unscaled bytes) in the last segment sent */

	/* negotiated options (RFC 6691, 7323, 2018) */
	uint16_t snd_mss;		/* largest payload we send per segment */
	uint16_t rcv_mss;		/* MSS we announced */
	uint16_t peer_mss;		/* the peer's MSS option (536 if absent) */
	uint16_t pmtu;			/* path MTU (lowered by ICMP frag-needed) */
	uint8_t snd_wscale;		/* shift applied to windows the peer sends */
	uint8_t rcv_wscale;		/* shift applied to windows we send */
	uint8_t opt_ts;			/* both ends negotiated timestamps */
	uint8_t opt_sack;		/* both ends negotiated SACK */
	uint8_t opt_wscale;		/* both ends negotiated window scaling */
	uint8_t nodelay;		/* Nagle disabled (iip_tcp_set_nodelay) */
	uint8_t cc_algo;
	uint8_t syn_cookie;		/* created from a SYN cookie */
	uint32_t ts_recent;		/* RFC 7323 4.3 */
	uint32_t ts_recent_age_ms;
	uint32_t last_ack_sent;

	/* queues */
	struct iip_pb_queue txq;	/* data queued or in flight, in sequence order */
	struct iip_pb *tx_next_pb;	/* first pb holding unsent data (NULL: none) */
	struct iip_pb_queue ooo;	/* out-of-order received segments, in sequence order */
	uint32_t rx_unconsumed;		/* packets delivered, not yet consumed by the app */

	/* SACK: blocks to send, and the peer's blocks (scoreboard, RFC 6675) */
	struct iip_seq_range sack_send[IIP_TCP_SACK_BLOCKS_MAX];
	uint8_t sack_send_cnt;
	uint8_t scoreboard_cnt;
	uint8_t dupacks;
	uint8_t in_recovery;
	struct iip_seq_range scoreboard[IIP_TCP_SCOREBOARD_MAX];
	uint32_t recover;		/* RFC 6582 "recover" */
	uint32_t high_rxt;		/* RFC 6675 HighRxt */
	uint32_t rescue_rxt;		/* RFC 6675 RescueRxt */
	uint32_t pipe_est;

	/* congestion control (RFC 5681, 9438) */
	uint32_t cwnd;
	uint32_t ssthresh;
	uint32_t bytes_acked;		/* RFC 5681 3.1 appropriate byte counting in CA */
	uint32_t cubic_w_max;
	uint32_t cubic_epoch_ms;
	uint32_t cubic_k_ms;
	uint32_t cubic_origin;
	uint32_t cubic_w_est;

	/* RTT (RFC 6298), all in milliseconds scaled by 8 (srtt) and 4 (rttvar) */
	uint32_t srtt8;
	uint32_t rttvar4;
	uint32_t rto_ms;
	uint32_t rtt_seq;		/* Karn: sequence number being timed */
	uint32_t rtt_start_ms;
	uint8_t rtt_timing;
	uint8_t backoff;		/* consecutive RTO expirations */
	uint8_t retries;		/* retransmissions of the same data */
	uint8_t keepalive_on;
	uint8_t keepalive_probes_sent;
	uint8_t ack_pending;		/* an ACK is owed; sent at the end of the batch */
	uint8_t ack_now;		/* ... immediately at the end of the batch */
	uint8_t fin_queued;		/* the app closed: a FIN follows the queued data */
	uint8_t fin_rcvd;		/* the peer's FIN was received in sequence */
	uint8_t segs_unacked;		/* full segments received since the last ACK */
	uint8_t zwp_probing;
	uint8_t pad0;
	uint32_t fin_seq;		/* sequence number of our FIN */

	/* timers: absolute deadlines in ms; a zero bit in timers_on means off */
	uint8_t timers_on;
	uint32_t t_rtx;			/* retransmission, SYN retry, persist */
	uint32_t t_delack;
	uint32_t t_keepalive;
	uint32_t t_close;		/* TIME-WAIT or FIN-WAIT-2 expiry */
	uint32_t last_rx_ms;		/* for keepalive */
	uint32_t keepalive_idle_ms;
	uint32_t keepalive_intvl_ms;
	uint8_t keepalive_probes;
};

#define IIP_TCP_TIMER_RTX (1U << 0)
#define IIP_TCP_TIMER_DELACK (1U << 1)
#define IIP_TCP_TIMER_KEEPALIVE (1U << 2)
#define IIP_TCP_TIMER_CLOSE (1U << 3)

struct iip_ip4_reasm {
	uint8_t used;
	uint8_t proto;
	uint16_t id_be;
	uint32_t src_be;
	uint32_t dst_be;
	uint32_t expire_ms;
	uint32_t total_len;		/* payload length once the last fragment arrived, else 0 */
	uint32_t received;		/* payload bytes held */
	struct iip_pb_queue frags;	/* sorted by offset, never overlapping */
};

struct iip_workspace {
	uint8_t initialized;
	uint8_t in_run;			/* inside iip_run: output waits for the batch end */
	uint8_t isn_secret_set;
	uint8_t pad0;
	uint16_t mtu;
	uint16_t ip4_id;		/* RFC 6864: IDs of our non-atomic datagrams */
	uint32_t now_ms;		/* the clock, read once per iip_run */
	uint32_t timer_next_ms;		/* no connection timer fires before this */
	uint32_t isn_clock_base;

	struct iip_stats stats;

	struct iip_pb_queue pb_pool;
	uint32_t pb_total;
	struct iip_tcp_conn *conn_pool;
	uint32_t conn_pool_cnt;
	uint32_t conn_total;

	struct iip_tcp_conn *conn_ht[IIP_CONF_TCP_CONN_HT_SIZE];
	struct iip_tcp_conn *conn_all;	/* every connection not in the pool */
	uint32_t conn_live;
	uint32_t syn_received_cnt;
	struct iip_tcp_conn *out_list;	/* connections with output pending in this batch */

	struct iip_ip4_reasm reasm[IIP_CONF_IP4_REASM_SLOTS];

	uint32_t icmp_tokens;
	uint32_t icmp_refill_ms;
	uint32_t challenge_ack_cnt;
	uint32_t challenge_ack_sec;

	uint8_t udp_ports_filter;	/* iip_udp_port_open was used: closed ports answer */
	uint8_t udp_ports_open[65536 / 8];

	uint32_t secret[4];		/* keys ISNs (RFC 6528) and SYN cookies */
	uint32_t pkts_pushed;		/* frames handed to iip_ops_l2_push in this call */
};

#endif /* IIP_TYPES_H */
