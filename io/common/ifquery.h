/*
 * io/common/ifquery.h — asking the kernel about a network interface by
 * name (MAC address, MTU, IPv4 address, up or down) and configuring it,
 * through interface ioctls on a throw-away datagram socket. Used by the
 * backends that sit on a kernel interface: af_packet, af_xdp, tap.
 *
 * Every call returns -1 with errno set on failure (ENODEV: no such
 * interface in this network namespace); the caller words the message.
 */
#ifndef IO_COMMON_IFQUERY_H
#define IO_COMMON_IFQUERY_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

/* ioctl req on interface name (written into ifr->ifr_name; the rest of
 * *ifr is the request's) */
static inline int io_if_ioctl(const char *name, unsigned long req, struct ifreq *ifr)
{
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), rc, saved;
	if (fd < 0)
		return -1;
	snprintf(ifr->ifr_name, sizeof(ifr->ifr_name), "%s", name);
	rc = ioctl(fd, req, ifr);
	saved = errno;
	close(fd);
	errno = saved;
	return rc;
}

static inline int io_if_mac(const char *name, uint8_t mac[6])
{
	struct ifreq ifr;
	memset(&ifr, 0, sizeof(ifr));
	if (io_if_ioctl(name, SIOCGIFHWADDR, &ifr) < 0)
		return -1;
	memcpy(mac, ifr.ifr_hwaddr.sa_data, 6);
	return 0;
}

/* the interface's MTU, or dflt when it cannot be read or is outside the
 * 68..65000 the backends accept */
static inline uint16_t io_if_mtu_or(const char *name, uint16_t dflt)
{
	struct ifreq ifr;
	memset(&ifr, 0, sizeof(ifr));
	if (io_if_ioctl(name, SIOCGIFMTU, &ifr) == 0 && ifr.ifr_mtu >= 68 && ifr.ifr_mtu <= 65000)
		return (uint16_t) ifr.ifr_mtu;
	return dflt;
}

/* the interface's (primary) IPv4 address; -1 when it has none */
static inline int io_if_ip4(const char *name, uint32_t *ip4_be)
{
	struct ifreq ifr;
	memset(&ifr, 0, sizeof(ifr));
	if (io_if_ioctl(name, SIOCGIFADDR, &ifr) < 0)
		return -1;
	*ip4_be = ((struct sockaddr_in *) &ifr.ifr_addr)->sin_addr.s_addr;
	return 0;
}

/* 1 up, 0 down, -1 unknown */
static inline int io_if_is_up(const char *name)
{
	struct ifreq ifr;
	memset(&ifr, 0, sizeof(ifr));
	if (io_if_ioctl(name, SIOCGIFFLAGS, &ifr) < 0)
		return -1;
	return (ifr.ifr_flags & IFF_UP) != 0;
}

#endif /* IO_COMMON_IFQUERY_H */
