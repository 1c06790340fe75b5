/*
 * io/af_xdp/nic_rss.h — the NIC's own receive-side scaling, read from the
 * driver (-S nic), so that helper_ip4_get_connection_affinity can name the
 * queue a hardware-RSS NIC picks without any software steering.
 *
 * What is read (ethtool ioctls, as `ethtool -x` and `ethtool -n ...
 * rx-flow-hash` do): the hash function (must be Toeplitz), the 40-byte key,
 * the indirection table (queue = table[hash % size]), and which fields the
 * NIC hashes for TCP and UDP over IPv4 (the 4-tuple, or only the addresses).
 * Anything we cannot reproduce is refused with a message saying how to
 * configure the NIC (ethtool -X / -N), never guessed.
 *
 * Tested here only for its refusal: veth reports no RSS configuration.
 */
#ifndef IO_AF_XDP_NIC_RSS_H
#define IO_AF_XDP_NIC_RSS_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>

#include "../common/rss.h"
#include "ifinfo.h"

/* hfunc bit 0 is Toeplitz (the kernel's ETH_RSS_HASH_TOP_BIT) */
#define AFX_RSS_HFUNC_TOEPLITZ 0x01u

struct afx_nic_rss {
	struct io_rss rss;        /* the NIC's key; its RETA is not used */
	uint32_t *indir;          /* queue of each hash bucket */
	uint32_t indir_size;
	int tcp_ports, udp_ports; /* 1: ports are hashed too, 0: addresses only */
};

static inline int afx_nic_rss_ethtool(const char *ifname, void *cmd)
{
	struct ifreq ifr;
	memset(&ifr, 0, sizeof(ifr));
	ifr.ifr_data = cmd;
	return io_if_ioctl(ifname, SIOCETHTOOL, &ifr);
}

/* which fields the NIC hashes for flow_type: 1 = 4-tuple, 0 = addresses only, -1 = neither */
static inline int afx_nic_rss_fields(const char *ifname, uint32_t flow_type)
{
	struct ethtool_rxnfc nfc;
	const uint64_t addrs = RXH_IP_SRC | RXH_IP_DST, ports = RXH_L4_B_0_1 | RXH_L4_B_2_3;
	memset(&nfc, 0, sizeof(nfc));
	nfc.cmd = ETHTOOL_GRXFH;
	nfc.flow_type = flow_type;
	if (afx_nic_rss_ethtool(ifname, &nfc) != 0)
		return -1;
	if ((nfc.data & (addrs | ports)) == (addrs | ports))
		return 1;
	if ((nfc.data & addrs) == addrs && !(nfc.data & ports))
		return 0;
	return -1;
}

/* reads the NIC's RSS for nqueues threads; 0, or -1 with a message in err */
static inline int afx_nic_rss_read(const char *ifname, uint16_t nqueues, struct afx_nic_rss *out, char *err,
				   size_t err_len)
{
	struct ethtool_rxfh head, *full;
	uint32_t i;
	memset(out, 0, sizeof(*out));
	memset(&head, 0, sizeof(head));
	head.cmd = ETHTOOL_GRSSH;
	if (afx_nic_rss_ethtool(ifname, &head) != 0) {
		snprintf(err, err_len, "%s does not report its RSS configuration (%s): use -S sw", ifname, strerror(errno));
		return -1;
	}
	if (head.key_size != IO_RSS_KEY_LEN || !head.indir_size) {
		snprintf(err, err_len, "%s: RSS key of %u bytes, table of %u entries: need a 40-byte Toeplitz key; use -S sw",
			 ifname, head.key_size, head.indir_size);
		return -1;
	}
	if (head.hfunc && !(head.hfunc & AFX_RSS_HFUNC_TOEPLITZ)) {
		snprintf(err, err_len, "%s: RSS hash function is not Toeplitz (hfunc 0x%x): ethtool -X %s hfunc toeplitz, "
			 "or -S sw", ifname, head.hfunc, ifname);
		return -1;
	}
	full = calloc(1, sizeof(*full) + head.indir_size * sizeof(uint32_t) + head.key_size);
	if (!full) {
		snprintf(err, err_len, "out of memory");
		return -1;
	}
	full->cmd = ETHTOOL_GRSSH;
	full->indir_size = head.indir_size;
	full->key_size = head.key_size;
	if (afx_nic_rss_ethtool(ifname, full) != 0) {
		snprintf(err, err_len, "%s: reading the RSS table failed: %s", ifname, strerror(errno));
		free(full);
		return -1;
	}
	out->indir_size = full->indir_size;
	out->indir = malloc(out->indir_size * sizeof(uint32_t));
	if (!out->indir) {
		free(full);
		snprintf(err, err_len, "out of memory");
		return -1;
	}
	memcpy(out->indir, full->rss_config, out->indir_size * sizeof(uint32_t));
	io_rss_init(&out->rss, (const uint8_t *) (full->rss_config + full->indir_size), nqueues);
	free(full);
	for (i = 0; i < out->indir_size; i++)
		if (out->indir[i] >= nqueues) {
			snprintf(err, err_len, "%s: the RSS table sends flows to queue %u, which has no thread: "
				 "ethtool -X %s equal %u", ifname, out->indir[i], ifname, nqueues);
			free(out->indir);
			out->indir = NULL;
			return -1;
		}
	out->tcp_ports = afx_nic_rss_fields(ifname, TCP_V4_FLOW);
	out->udp_ports = afx_nic_rss_fields(ifname, UDP_V4_FLOW);
	if (out->tcp_ports < 0 || out->udp_ports < 0) {
		snprintf(err, err_len, "%s: cannot tell which fields the NIC hashes for TCP/UDP over IPv4: "
			 "ethtool -N %s rx-flow-hash tcp4 sdfn (and udp4 sdfn), or -S sw", ifname, ifname);
		free(out->indir);
		out->indir = NULL;
		return -1;
	}
	return 0;
}

/* the queue the NIC picks for frames peer -> local of this flow */
static inline uint16_t afx_nic_rss_queue(const struct afx_nic_rss *n, uint16_t protocol, uint32_t local_ip4_be,
					 uint16_t local_port_be, uint32_t peer_ip4_be, uint16_t peer_port_be)
{
	uint32_t hash;
	int ports = protocol == IO_RSS_IPPROTO_TCP ? n->tcp_ports : protocol == IO_RSS_IPPROTO_UDP ? n->udp_ports : 0;
	hash = ports ? io_rss_hash_ip4_l4(&n->rss, peer_ip4_be, local_ip4_be, peer_port_be, local_port_be)
		     : io_rss_hash_ip4(&n->rss, peer_ip4_be, local_ip4_be);
	return (uint16_t) n->indir[hash % n->indir_size];
}

#endif /* IO_AF_XDP_NIC_RSS_H */
