/*
 * io/common/nic_features.h — the nine iip_ops_nic_feature_offload_*
 * callbacks, answered from one mask of IO_NIC_F_* bits: what the backend
 * offers the stack (turned on with -F). The backend defines
 *
 *   static uint32_t io_nic_features(void *opaque);
 *
 * before including this file. UDP segmentation offload is never offered.
 */
#ifndef IO_COMMON_NIC_FEATURES_H
#define IO_COMMON_NIC_FEATURES_H

#include <stdint.h>

#define IO_NIC_F_SG       (1u << 0)  /* transmit from segment chains */
#define IO_NIC_F_L4_CSUM  (1u << 1)  /* TCP and UDP checksums, both directions */
#define IO_NIC_F_TSO      (1u << 2)  /* TCP segmentation */
#define IO_NIC_F_IP4_CSUM (1u << 3)  /* IPv4 header checksum, both directions */

static uint32_t io_nic_features(void *opaque);

static uint8_t io_nic_has(void *opaque, uint32_t f)
{
	return (io_nic_features(opaque) & f) ? 1 : 0;
}

static uint8_t iip_ops_nic_feature_offload_tx_scatter_gather(void *opaque) { return io_nic_has(opaque, IO_NIC_F_SG); }
static uint8_t iip_ops_nic_feature_offload_ip4_rx_checksum(void *opaque) { return io_nic_has(opaque, IO_NIC_F_IP4_CSUM); }
static uint8_t iip_ops_nic_feature_offload_ip4_tx_checksum(void *opaque) { return io_nic_has(opaque, IO_NIC_F_IP4_CSUM); }
static uint8_t iip_ops_nic_feature_offload_tcp_rx_checksum(void *opaque) { return io_nic_has(opaque, IO_NIC_F_L4_CSUM); }
static uint8_t iip_ops_nic_feature_offload_tcp_tx_checksum(void *opaque) { return io_nic_has(opaque, IO_NIC_F_L4_CSUM); }
static uint8_t iip_ops_nic_feature_offload_tcp_tx_tso(void *opaque) { return io_nic_has(opaque, IO_NIC_F_TSO); }
static uint8_t iip_ops_nic_feature_offload_udp_rx_checksum(void *opaque) { return io_nic_has(opaque, IO_NIC_F_L4_CSUM); }
static uint8_t iip_ops_nic_feature_offload_udp_tx_checksum(void *opaque) { return io_nic_has(opaque, IO_NIC_F_L4_CSUM); }
static uint8_t iip_ops_nic_feature_offload_udp_tx_tso(void *opaque) { (void) opaque; return 0; }

#endif /* IO_COMMON_NIC_FEATURES_H */
