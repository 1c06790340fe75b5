/*
 * io/af_xdp/ifinfo.h — what the AF_XDP backend learns about its interface
 * from the kernel before it opens any socket: index, MAC address, first
 * IPv4 address, MTU and number of receive queues.
 *
 * Every failure comes back as a message for the user (the interface does
 * not exist in this network namespace, has no IPv4 address, ...), never as
 * an abort: a wrong -i is a user error, not a bug.
 */
#ifndef IO_AF_XDP_IFINFO_H
#define IO_AF_XDP_IFINFO_H

#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include "../common/ifquery.h"

struct afx_ifinfo {
	char name[IF_NAMESIZE];
	unsigned int index;
	uint8_t mac[6];
	uint32_t ip4_be;        /* 0 if the interface has none */
	uint32_t mtu;
	uint32_t rx_queues;     /* queues an AF_XDP socket can bind to */
	const char *rx_queues_from;
};

/*
 * Receive queues: ethtool's channel count when the driver reports one
 * (combined channels, else rx channels), otherwise the rx-N entries under
 * /sys/class/net/IF/queues (what veth exposes as its real_num_rx_queues).
 */
static inline uint32_t afx_ifinfo_rx_queues(const char *name, const char **from)
{
	struct ethtool_channels ch;
	struct ifreq ifr;
	uint32_t n = 0;
	char path[128];
	memset(&ch, 0, sizeof(ch));
	memset(&ifr, 0, sizeof(ifr));
	ch.cmd = ETHTOOL_GCHANNELS;
	ifr.ifr_data = (char *) &ch;
	if (io_if_ioctl(name, SIOCETHTOOL, &ifr) == 0 && (ch.combined_count || ch.rx_count)) {
		*from = "ethtool channels";
		return ch.combined_count > ch.rx_count ? ch.combined_count : ch.rx_count;
	}
	for (;;) {
		snprintf(path, sizeof(path), "/sys/class/net/%s/queues/rx-%u", name, n);
		if (access(path, F_OK) != 0)
			break;
		n++;
	}
	*from = "sysfs rx-N queues";
	return n;
}

/* fills info for interface name; returns 0, or -1 with a message in err */
static inline int afx_ifinfo_get(const char *name, struct afx_ifinfo *info, char *err, size_t err_len)
{
	struct ifreq ifr;
	struct ifaddrs *ifa_list, *ifa;
	memset(info, 0, sizeof(*info));
	if (strlen(name) >= IF_NAMESIZE) {
		snprintf(err, err_len, "interface name '%s' is longer than %d characters", name, IF_NAMESIZE - 1);
		return -1;
	}
	snprintf(info->name, sizeof(info->name), "%s", name);
	info->index = if_nametoindex(name);
	if (!info->index) {
		snprintf(err, err_len, "interface '%s' not found in this network namespace (%s)", name, strerror(errno));
		return -1;
	}
	memset(&ifr, 0, sizeof(ifr));
	if (io_if_ioctl(name, SIOCGIFHWADDR, &ifr) != 0) {
		snprintf(err, err_len, "interface '%s': cannot read its MAC address: %s", name, strerror(errno));
		return -1;
	}
	if (ifr.ifr_hwaddr.sa_family != 1 /* ARPHRD_ETHER */) {
		snprintf(err, err_len, "interface '%s' is not an Ethernet device (hardware type %u)", name,
			 (unsigned) ifr.ifr_hwaddr.sa_family);
		return -1;
	}
	memcpy(info->mac, ifr.ifr_hwaddr.sa_data, 6);
	memset(&ifr, 0, sizeof(ifr));
	if (io_if_ioctl(name, SIOCGIFMTU, &ifr) != 0) {
		snprintf(err, err_len, "interface '%s': cannot read its MTU: %s", name, strerror(errno));
		return -1;
	}
	info->mtu = (uint32_t) ifr.ifr_mtu;
	if (getifaddrs(&ifa_list) == 0) {
		for (ifa = ifa_list; ifa; ifa = ifa->ifa_next) {
			if (ifa->ifa_addr && ifa->ifa_addr->sa_family == AF_INET && !strcmp(ifa->ifa_name, name)) {
				info->ip4_be = ((struct sockaddr_in *) ifa->ifa_addr)->sin_addr.s_addr;
				break;
			}
		}
		freeifaddrs(ifa_list);
	}
	info->rx_queues = afx_ifinfo_rx_queues(name, &info->rx_queues_from);
	return 0;
}

#endif /* IO_AF_XDP_IFINFO_H */
