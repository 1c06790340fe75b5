/*
 * stats.h: per-workspace counters.  Every packet the stack drops is counted
 * under the reason it was dropped for; nothing is dropped silently.
 *
 * The list is an X-macro so that the structure, the names printed by
 * iip_stats_name() and any future export stay in one place.  Read the
 * counters with iip_stats_get() (see docs/api.md).
 */
#ifndef IIP_STATS_H
#define IIP_STATS_H

#define IIP_STATS_LIST(X) \
	X(rx_frames)			/* frames given to iip_run */ \
	X(rx_l2_skipped)		/* iip_ops_l2_skip asked to ignore */ \
	X(rx_l2_not_for_us)		/* unicast to another MAC */ \
	X(rx_l2_unknown_ethertype) \
	X(rx_arp) \
	X(rx_arp_malformed)		/* truncated, bad hw/proto type or lengths */ \
	X(rx_arp_not_for_us) \
	X(tx_arp_reply) \
	X(tx_arp_request) \
	X(rx_ip4) \
	X(rx_ip4_truncated)		/* shorter than a header / than total length */ \
	X(rx_ip4_bad_version) \
	X(rx_ip4_bad_hdr_len)		/* IHL < 5 or beyond the packet */ \
	X(rx_ip4_bad_total_len) \
	X(rx_ip4_bad_csum) \
	X(rx_ip4_bad_options) \
	X(rx_ip4_bad_src)		/* broadcast, multicast or loopback source */ \
	X(rx_ip4_not_for_us) \
	X(rx_ip4_unknown_proto) \
	X(rx_ip4_frags) \
	X(rx_ip4_frag_bad)		/* overlapping, too long, inconsistent */ \
	X(rx_ip4_frag_timeout)		/* datagrams dropped unfinished */ \
	X(rx_ip4_frag_evicted)		/* dropped to make room for a newer one */ \
	X(rx_ip4_reassembled) \
	X(tx_ip4) \
	X(tx_ip4_frags) \
	X(rx_icmp) \
	X(rx_icmp_malformed)		/* truncated or bad checksum */ \
	X(rx_icmp_echo_request) \
	X(rx_icmp_echo_reply) \
	X(rx_icmp_unreach) \
	X(rx_icmp_other) \
	X(tx_icmp_echo_reply) \
	X(tx_icmp_unreach) \
	X(tx_icmp_rate_limited)		/* errors not sent because of the rate limit */ \
	X(rx_udp) \
	X(rx_udp_malformed)		/* truncated or bad length */ \
	X(rx_udp_bad_csum) \
	X(rx_udp_port_closed)		/* answered with ICMP port unreachable */ \
	X(tx_udp) \
	X(tx_udp_refused)		/* iip_udp_send refused the packet */ \
	X(rx_tcp) \
	X(rx_tcp_malformed)		/* truncated, bad data offset */ \
	X(rx_tcp_bad_csum) \
	X(rx_tcp_bad_options) \
	X(rx_tcp_no_conn)		/* answered with RST */ \
	X(rx_tcp_refused)		/* SYN refused by iip_ops_tcp_accept */ \
	X(rx_tcp_conn_exhausted)	/* SYN with no free connection */ \
	X(rx_tcp_syn_cookie_sent) \
	X(rx_tcp_syn_cookie_ok) \
	X(rx_tcp_syn_cookie_bad) \
	X(rx_tcp_bad_seq)		/* not acceptable, answered with an ACK */ \
	X(rx_tcp_bad_ack)		/* acknowledges unsent data or too old */ \
	X(rx_tcp_paws)			/* RFC 7323 5.3 PAWS rejection */ \
	X(rx_tcp_rst) \
	X(rx_tcp_rst_ignored)		/* out of window */ \
	X(rx_tcp_challenge_ack)		/* RFC 5961 challenge ACKs sent */ \
	X(rx_tcp_challenge_ack_limited) \
	X(rx_tcp_ooo)			/* out-of-order segments queued */ \
	X(rx_tcp_ooo_dropped)		/* out-of-order segments not queued (limit, no pb) */ \
	X(rx_tcp_dup)			/* wholly duplicate segments */ \
	X(rx_tcp_fast_path)		/* header prediction hits */ \
	X(rx_tcp_data_after_close)	/* data after the app closed its read side */ \
	X(tx_tcp_segs) \
	X(tx_tcp_rst) \
	X(tx_tcp_retrans)		/* segments retransmitted */ \
	X(tx_tcp_rto)			/* retransmission timeouts */ \
	X(tx_tcp_fast_retrans)		/* fast retransmits / recovery entries */ \
	X(tx_tcp_zwp)			/* zero-window probes */ \
	X(tx_tcp_keepalive) \
	X(tx_tcp_refused)		/* iip_tcp_send refused the packet */ \
	X(tcp_conn_opened) \
	X(tcp_conn_closed) \
	X(tcp_conn_reset)		/* ended by a RST (a TIME-WAIT cut short is not counted) */ \
	X(tcp_conn_timed_out) \
	X(tcp_icmp_mtu) \
	X(pkt_alloc_failed)		/* iip_ops_pkt_alloc or clone returned NULL */ \
	X(pb_exhausted)			/* no iip_pb left in the pool */

struct iip_stats {
#define IIP_STATS_FIELD(n) unsigned long n;
	IIP_STATS_LIST(IIP_STATS_FIELD)
#undef IIP_STATS_FIELD
};

#define IIP_STATS_INC(ws, name) ((ws)->stats.name++)

#endif /* IIP_STATS_H */
