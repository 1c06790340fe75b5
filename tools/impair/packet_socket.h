/* AF_PACKET access to one interface: the bridge's only contact with the
 * kernel's network devices. */
#ifndef IMPAIR_PACKET_SOCKET_H
#define IMPAIR_PACKET_SOCKET_H

#include <stddef.h>
#include <sys/types.h>

/* Opens a non-blocking, promiscuous raw socket bound to IFNAME that does not
 * see the frames this host sends itself. Returns the fd, or -1 with a
 * human-readable reason in ERR. */
int packet_socket_open(const char *ifname, char *err, size_t errlen);

/* Receives one frame that arrived on the interface into BUF (CAP bytes).
 * Returns the frame's full length (which may exceed CAP: truncated), 0 when
 * nothing is pending, -1 on error (errno set). */
ssize_t packet_socket_recv(int fd, void *buf, size_t cap);

enum send_result { SEND_OK, SEND_WOULD_BLOCK, SEND_FAILED };

/* Transmits one frame unmodified on the socket's interface. */
enum send_result packet_socket_send(int fd, const void *frame, size_t len);

#endif
