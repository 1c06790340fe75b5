/*
 * wire.h: packet formats.  Field names are part of the public helper surface
 * (COMPAT.md section 2); every field ending in _be is big-endian.  All
 * structures are naturally aligned, so no packing attribute is needed.
 */
#ifndef IIP_WIRE_H
#define IIP_WIRE_H

#define IIP_ETHERTYPE_IP4 (0x0800)
#define IIP_ETHERTYPE_ARP (0x0806)

#define IIP_IP4_PROTO_ICMP (1)
#define IIP_IP4_PROTO_TCP (6)
#define IIP_IP4_PROTO_UDP (17)

/* RFC 791 3.1 */
struct iip_ip4_hdr {
	uint8_t vl;		/* version (high nibble), header length in words */
	uint8_t tos;
	uint16_t len_be;	/* total length */
	uint16_t id_be;
	uint16_t off_be;	/* flags (RF, DF, MF) and fragment offset in 8 B units */
	uint8_t ttl;
	uint8_t proto;
	uint16_t csum_be;
	uint32_t src_be;
	uint32_t dst_be;
};
#define IIP_IP4_OFF_RF (0x8000)
#define IIP_IP4_OFF_DF (0x4000)
#define IIP_IP4_OFF_MF (0x2000)
#define IIP_IP4_OFF_MASK (0x1fff)

/* RFC 826; the addresses follow, their lengths given by lhw and lproto */
struct iip_arp_hdr {
	uint16_t hw_be;
	uint16_t proto_be;
	uint8_t lhw;
	uint8_t lproto;
	uint16_t op_be;
};
#define IIP_ARP_HW_ETHERNET (1)
#define IIP_ARP_OP_REQUEST (1)
#define IIP_ARP_OP_REPLY (2)

/* RFC 792 */
struct iip_icmp_hdr {
	uint8_t type;
	uint8_t code;
	uint16_t csum_be;
	struct {
		uint16_t id_be;
		uint16_t seq_be;
	} echo;
};
#define IIP_ICMP_TYPE_ECHO_REPLY (0)
#define IIP_ICMP_TYPE_DEST_UNREACH (3)
#define IIP_ICMP_TYPE_ECHO_REQUEST (8)
#define IIP_ICMP_TYPE_TIME_EXCEEDED (11)
#define IIP_ICMP_CODE_PROTO_UNREACH (2)
#define IIP_ICMP_CODE_PORT_UNREACH (3)
#define IIP_ICMP_CODE_FRAG_NEEDED (4)

/*
 * RFC 9293 3.1.  "flags" is the 16-bit word at offset 12 as it sits in
 * memory: data offset in the high nibble of its first byte, the flag bits in
 * its second byte.  Use the IIP_TCP_* helpers below rather than the raw word.
 */
struct iip_tcp_hdr {
	uint16_t src_be;
	uint16_t dst_be;
	uint32_t seq_be;
	uint32_t ack_seq_be;
	uint16_t flags;
	uint16_t win_be;
	uint16_t csum_be;
	uint16_t urg_p_be;
};
#define IIP_TCP_FLAG_FIN (0x01)
#define IIP_TCP_FLAG_SYN (0x02)
#define IIP_TCP_FLAG_RST (0x04)
#define IIP_TCP_FLAG_PSH (0x08)
#define IIP_TCP_FLAG_ACK (0x10)
#define IIP_TCP_FLAG_URG (0x20)
#define IIP_TCP_FLAG_ECE (0x40)
#define IIP_TCP_FLAG_CWR (0x80)
#define IIP_TCP_HDR_DOFF(th) (((const uint8_t *) (th))[12] >> 4)
#define IIP_TCP_HDR_FLAGS(th) (((const uint8_t *) (th))[13])

#define IIP_TCP_OPT_EOL (0)
#define IIP_TCP_OPT_NOP (1)
#define IIP_TCP_OPT_MSS (2)
#define IIP_TCP_OPT_WSCALE (3)
#define IIP_TCP_OPT_SACK_PERM (4)
#define IIP_TCP_OPT_SACK (5)
#define IIP_TCP_OPT_TIMESTAMP (8)

/* RFC 768 */
struct iip_udp_hdr {
	uint16_t src_be;
	uint16_t dst_be;
	uint16_t len_be;
	uint16_t csum_be;
};

/*
 * Accessors over a packet object; they expect a variable named "opaque" in
 * scope, as the integrator callbacks have.  They do not validate: use them on
 * packets the stack handed you (it validated them) or that you built.
 */
#define PB_IP4(__b) ((struct iip_ip4_hdr *) ((uintptr_t) iip_ops_pkt_get_data((__b), opaque) + iip_ops_l2_hdr_len((__b), opaque)))
#define PB_ARP(__b) ((struct iip_arp_hdr *) (PB_IP4(__b)))
#define PB_ARP_HW_SENDER(__b) ((uint8_t *) ((uintptr_t) PB_ARP(__b) + sizeof(struct iip_arp_hdr)))
#define PB_ARP_IP_SENDER(__b) ((uint8_t *) ((uintptr_t) PB_ARP_HW_SENDER(__b) + PB_ARP(__b)->lhw))
#define PB_ARP_HW_TARGET(__b) ((uint8_t *) ((uintptr_t) PB_ARP_IP_SENDER(__b) + PB_ARP(__b)->lproto))
#define PB_ARP_IP_TARGET(__b) ((uint8_t *) ((uintptr_t) PB_ARP_HW_TARGET(__b) + PB_ARP(__b)->lhw))
#define PB_IP4_HDR_LEN(__b) ((uint16_t) ((PB_IP4(__b)->vl & 0x0f) * 4))
#define PB_ICMP(__b) ((struct iip_icmp_hdr *) ((uintptr_t) PB_IP4(__b) + PB_IP4_HDR_LEN(__b)))
#define PB_ICMP_PAYLOAD(__b) ((uint8_t *) ((uintptr_t) PB_ICMP(__b) + sizeof(struct iip_icmp_hdr)))
#define PB_ICMP_PAYLOAD_LEN(__b) ((uint16_t) (__iip_ntohs(PB_IP4(__b)->len_be) - PB_IP4_HDR_LEN(__b) - sizeof(struct iip_icmp_hdr)))
#define PB_TCP(__b) ((struct iip_tcp_hdr *) ((uintptr_t) PB_IP4(__b) + PB_IP4_HDR_LEN(__b)))
#define PB_TCP_HDR_LEN(__b) ((uint16_t) IIP_TCP_HDR_DOFF(PB_TCP(__b)))
#define PB_TCP_HDR_HAS_FIN(__b) ((IIP_TCP_HDR_FLAGS(PB_TCP(__b)) & IIP_TCP_FLAG_FIN) != 0)
#define PB_TCP_HDR_HAS_SYN(__b) ((IIP_TCP_HDR_FLAGS(PB_TCP(__b)) & IIP_TCP_FLAG_SYN) != 0)
#define PB_TCP_HDR_HAS_RST(__b) ((IIP_TCP_HDR_FLAGS(PB_TCP(__b)) & IIP_TCP_FLAG_RST) != 0)
#define PB_TCP_HDR_HAS_ACK(__b) ((IIP_TCP_HDR_FLAGS(PB_TCP(__b)) & IIP_TCP_FLAG_ACK) != 0)
#define PB_TCP_PAYLOAD(__b) ((uint8_t *) ((uintptr_t) PB_TCP(__b) + PB_TCP_HDR_LEN(__b) * 4))
#define PB_TCP_PAYLOAD_LEN(__b) ((uint16_t) (__iip_ntohs(PB_IP4(__b)->len_be) - PB_IP4_HDR_LEN(__b) - PB_TCP_HDR_LEN(__b) * 4))
#define PB_UDP(__b) ((struct iip_udp_hdr *) ((uintptr_t) PB_IP4(__b) + PB_IP4_HDR_LEN(__b)))
#define PB_UDP_PAYLOAD(__b) ((uint8_t *) ((uintptr_t) PB_UDP(__b) + sizeof(struct iip_udp_hdr)))
#define PB_UDP_PAYLOAD_LEN(__b) ((uint16_t) (__iip_ntohs(PB_UDP(__b)->len_be) - sizeof(struct iip_udp_hdr)))

#endif /* IIP_WIRE_H */
