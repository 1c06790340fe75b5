/* Freestanding compile check written for this repository: defines every
 * callback trivially and references every API function. */
typedef unsigned char uint8_t;
typedef unsigned short uint16_t;
typedef unsigned int uint32_t;
typedef unsigned long uintptr_t;
#ifdef __cplusplus
#define NULL (0)
#else
#define NULL ((void *) 0)
#endif
int printf_ignore(const char *fmt, ...) { (void) fmt; return 0; }
#define IIP_OPS_DEBUG_PRINTF printf_ignore
#include "../../stack/main.c"

static void * iip_ops_pkt_alloc(void *opaque) { (void) opaque; return 0; }
static void iip_ops_pkt_free(void *pkt, void *opaque) { (void) pkt; (void) opaque; }
static void * iip_ops_pkt_get_data(void *pkt, void *opaque) { (void) pkt; (void) opaque; return 0; }
static uint16_t iip_ops_pkt_get_len(void *pkt, void *opaque) { (void) pkt; (void) opaque; return 0; }
static void iip_ops_pkt_set_len(void *pkt, uint16_t len, void *opaque) { (void) pkt; (void) len; (void) opaque; }
static void iip_ops_pkt_increment_head(void *pkt, uint16_t len, void *opaque) { (void) pkt; (void) len; (void) opaque; }
static void iip_ops_pkt_decrement_tail(void *pkt, uint16_t len, void *opaque) { (void) pkt; (void) len; (void) opaque; }
static void * iip_ops_pkt_clone(void *pkt, void *opaque) { (void) pkt; (void) opaque; return 0; }
static void iip_ops_pkt_scatter_gather_chain_append(void *pkt_head, void *pkt_tail, void *opaque) { (void) pkt_head; (void) pkt_tail; (void) opaque; }
static void * iip_ops_pkt_scatter_gather_chain_get_next(void *pkt_head, void *opaque) { (void) pkt_head; (void) opaque; return 0; }
static void iip_ops_util_now_ns(uint32_t t[3], void *opaque) { (void) t; (void) opaque; }
static uint16_t iip_ops_l2_hdr_len(void *pkt, void *opaque) { (void) pkt; (void) opaque; return 0; }
static uint8_t * iip_ops_l2_hdr_src_ptr(void *pkt, void *opaque) { (void) pkt; (void) opaque; return 0; }
static uint8_t * iip_ops_l2_hdr_dst_ptr(void *pkt, void *opaque) { (void) pkt; (void) opaque; return 0; }
static uint16_t iip_ops_l2_ethertype_be(void *pkt, void *opaque) { (void) pkt; (void) opaque; return 0; }
static uint16_t iip_ops_l2_addr_len(void *opaque) { (void) opaque; return 0; }
static void iip_ops_l2_broadcast_addr(uint8_t bcaddr[], void *opaque) { (void) bcaddr; (void) opaque; }
static void iip_ops_l2_hdr_craft(void *pkt, uint8_t src[], uint8_t dst[], uint16_t ethertype_be, void *opaque) { (void) pkt; (void) src; (void) dst; (void) ethertype_be; (void) opaque; }
static uint8_t iip_ops_l2_skip(void *pkt, void *opaque) { (void) pkt; (void) opaque; return 0; }
static void iip_ops_l2_flush(void *opaque) { (void) opaque; }
static void iip_ops_l2_push(void *pkt, void *opaque) { (void) pkt; (void) opaque; }
static uint8_t iip_ops_arp_lhw(void *opaque) { (void) opaque; return 0; }
static uint8_t iip_ops_arp_lproto(void *opaque) { (void) opaque; return 0; }
static uint8_t iip_ops_nic_feature_offload_tx_scatter_gather(void *opaque) { (void) opaque; return 0; }
static uint8_t iip_ops_nic_feature_offload_ip4_rx_checksum(void *opaque) { (void) opaque; return 0; }
static uint8_t iip_ops_nic_feature_offload_ip4_tx_checksum(void *opaque) { (void) opaque; return 0; }
static uint8_t iip_ops_nic_feature_offload_tcp_rx_checksum(void *opaque) { (void) opaque; return 0; }
static uint8_t iip_ops_nic_feature_offload_tcp_tx_checksum(void *opaque) { (void) opaque; return 0; }
static uint8_t iip_ops_nic_feature_offload_tcp_tx_tso(void *opaque) { (void) opaque; return 0; }
static uint8_t iip_ops_nic_feature_offload_udp_rx_checksum(void *opaque) { (void) opaque; return 0; }
static uint8_t iip_ops_nic_feature_offload_udp_tx_checksum(void *opaque) { (void) opaque; return 0; }
static uint8_t iip_ops_nic_feature_offload_udp_tx_tso(void *opaque) { (void) opaque; return 0; }
static uint8_t iip_ops_nic_offload_ip4_rx_checksum(void *pkt, void *opaque) { (void) pkt; (void) opaque; return 0; }
static uint8_t iip_ops_nic_offload_tcp_rx_checksum(void *pkt, void *opaque) { (void) pkt; (void) opaque; return 0; }
static uint8_t iip_ops_nic_offload_udp_rx_checksum(void *pkt, void *opaque) { (void) pkt; (void) opaque; return 0; }
static void iip_ops_nic_offload_ip4_tx_checksum_mark(void *pkt, void *opaque) { (void) pkt; (void) opaque; }
static void iip_ops_nic_offload_tcp_tx_checksum_mark(void *pkt, void *opaque) { (void) pkt; (void) opaque; }
static void iip_ops_nic_offload_tcp_tx_tso_mark(void *pkt, void *opaque) { (void) pkt; (void) opaque; }
static void iip_ops_nic_offload_udp_tx_checksum_mark(void *pkt, void *opaque) { (void) pkt; (void) opaque; }
static void iip_ops_nic_offload_udp_tx_tso_mark(void *pkt, void *opaque) { (void) pkt; (void) opaque; }
static void iip_ops_arp_reply(void *context, void *pkt, void *opaque) { (void) context; (void) pkt; (void) opaque; }
static void iip_ops_icmp_reply(void *context, void *pkt, void *opaque) { (void) context; (void) pkt; (void) opaque; }
static uint8_t iip_ops_tcp_accept(void *context, void *pkt, void *opaque) { (void) context; (void) pkt; (void) opaque; return 0; }
static void * iip_ops_tcp_accepted(void *context, void *handle, void *pkt, void *opaque) { (void) context; (void) handle; (void) pkt; (void) opaque; return 0; }
static void * iip_ops_tcp_connected(void *context, void *handle, void *pkt, void *opaque) { (void) context; (void) handle; (void) pkt; (void) opaque; return 0; }
static void iip_ops_tcp_payload(void *context, void *handle, void *pkt, void *tcp_opaque, uint16_t head_off, uint16_t tail_off, void *opaque) { (void) context; (void) handle; (void) pkt; (void) tcp_opaque; (void) head_off; (void) tail_off; (void) opaque; }
static void iip_ops_tcp_acked(void *context, void *handle, void *pkt, void *tcp_opaque, void *opaque) { (void) context; (void) handle; (void) pkt; (void) tcp_opaque; (void) opaque; }
static void iip_ops_tcp_closed(void *handle, uint8_t local_mac[], uint32_t local_ip4_be, uint16_t local_port_be, uint8_t peer_mac[], uint32_t peer_ip4_be, uint16_t peer_port_be, void *tcp_opaque, void *opaque) { (void) handle; (void) local_mac; (void) local_ip4_be; (void) local_port_be; (void) peer_mac; (void) peer_ip4_be; (void) peer_port_be; (void) tcp_opaque; (void) opaque; }
static void iip_ops_udp_payload(void *context, void *pkt, void *opaque) { (void) context; (void) pkt; (void) opaque; }

void _start(void)
{
	(void) iip_run;
	(void) iip_udp_send;
	(void) iip_tcp_connect;
	(void) iip_tcp_rxbuf_consumed;
	(void) iip_tcp_close;
	(void) iip_tcp_send;
	(void) iip_arp_request;
	(void) iip_add_tcp_conn;
	(void) iip_add_pb;
	(void) iip_tcp_conn_size;
	(void) iip_pb_size;
	(void) iip_workspace_size;
}
