/* AF_PACKET sockets: plain recvfrom/sendto, one frame per call. Simple and
 * fast enough for test traffic; the bridge is a test tool, not a datapath. */
#include "packet_socket.h"

#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#ifndef PACKET_IGNORE_OUTGOING
#define PACKET_IGNORE_OUTGOING 23
#endif

/* Large socket buffers absorb bursts while the bridge is busy with the other
 * direction; FORCE variants ignore rmem_max/wmem_max (we are root). */
static void enlarge_buffers(int fd)
{
	int size = 8 * 1024 * 1024;
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size)) != 0)
		(void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
	if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &size, sizeof(size)) != 0)
		(void)setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, sizeof(size));
}

int packet_socket_open(const char *ifname, char *err, size_t errlen)
{
	if (strlen(ifname) >= IFNAMSIZ) {
		snprintf(err, errlen, "interface name '%s' is longer than %d characters", ifname, IFNAMSIZ - 1);
		return -1;
	}
	unsigned int ifindex = if_nametoindex(ifname);
	if (ifindex == 0) {
		snprintf(err, errlen, "no interface '%s' in this network namespace", ifname);
		return -1;
	}
	/* protocol 0: the socket receives nothing until bind() names the
	 * interface, so no frame of another interface slips in before that */
	int fd = socket(AF_PACKET, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		if (errno == EPERM || errno == EACCES)
			snprintf(err, errlen, "opening an AF_PACKET socket needs root (CAP_NET_RAW)");
		else
			snprintf(err, errlen, "socket(AF_PACKET): %s", strerror(errno));
		return -1;
	}
	int one = 1;
	/* the frames we transmit on this interface would otherwise come back
	 * to us as PACKET_OUTGOING and be forwarded again: a loop */
	(void)setsockopt(fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof(one));
	enlarge_buffers(fd);

	struct sockaddr_ll addr;
	memset(&addr, 0, sizeof(addr));
	addr.sll_family = AF_PACKET;
	addr.sll_protocol = htons(ETH_P_ALL);
	addr.sll_ifindex = (int)ifindex;
	if (bind(fd, (struct sockaddr *)&addr, sizeof(addr)) != 0) {
		snprintf(err, errlen, "bind to '%s': %s", ifname, strerror(errno));
		close(fd);
		return -1;
	}
	struct packet_mreq mreq;
	memset(&mreq, 0, sizeof(mreq));
	mreq.mr_ifindex = (int)ifindex;
	mreq.mr_type = PACKET_MR_PROMISC;
	if (setsockopt(fd, SOL_PACKET, PACKET_ADD_MEMBERSHIP, &mreq, sizeof(mreq)) != 0) {
		snprintf(err, errlen, "promiscuous mode on '%s': %s", ifname, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

ssize_t packet_socket_recv(int fd, void *buf, size_t cap)
{
	for (;;) {
		struct sockaddr_ll from;
		socklen_t fromlen = sizeof(from);
		/* MSG_TRUNC: return the real length so oversize frames are
		 * detected instead of being forwarded cut short */
		ssize_t n = recvfrom(fd, buf, cap, MSG_TRUNC, (struct sockaddr *)&from, &fromlen);
		if (n < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return 0;
			if (errno == EINTR)
				continue;
			return -1;
		}
		/* older kernels lack PACKET_IGNORE_OUTGOING: filter here too */
		if (from.sll_pkttype == PACKET_OUTGOING)
			continue;
		if (n == 0)
			continue;
		return n;
	}
}

enum send_result packet_socket_send(int fd, const void *frame, size_t len)
{
	for (;;) {
		ssize_t n = send(fd, frame, len, 0);
		if (n == (ssize_t)len)
			return SEND_OK;
		if (n >= 0)
			return SEND_FAILED;
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS)
			return SEND_WOULD_BLOCK;
		return SEND_FAILED;
	}
}
