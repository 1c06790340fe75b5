/*
 * io/common/stack_setup.h — what every backend does to give a thread (or a
 * loop host) its stack: a workspace with its arrays of connections and
 * packet wrappers, and an ISN secret from getrandom (RFC 6528:
 * unpredictable, one per run and workspace). The counters printed at exit
 * are in stack_counters.h (they need the stack's statistics extension).
 *
 * Include after the stack (it calls iip_*).
 */
#ifndef IO_COMMON_STACK_SETUP_H
#define IO_COMMON_STACK_SETUP_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/types.h>

/*
 * Allocates a workspace, nconn connections and npb packet wrappers and
 * hands the two arrays to the workspace. -1 when out of memory; what was
 * allocated is in the three pointers either way (free() them).
 */
static inline int io_stack_create(void **workspace, void **conns, uint32_t nconn, void **pbs, uint32_t npb)
{
	uint32_t i;
	*workspace = calloc(1, iip_workspace_size());
	*conns = calloc(nconn, iip_tcp_conn_size());
	*pbs = calloc(npb, iip_pb_size());
	if (!*workspace || !*conns || !*pbs)
		return -1;
	for (i = 0; i < nconn; i++)
		iip_add_tcp_conn(*workspace, (uint8_t *) *conns + (size_t) i * iip_tcp_conn_size());
	for (i = 0; i < npb; i++)
		iip_add_pb(*workspace, (uint8_t *) *pbs + (size_t) i * iip_pb_size());
	return 0;
}

/* a fresh random ISN secret; on failure says so on stderr after "who: " and
 * returns -1 */
static inline int io_stack_random_isn_secret(void *workspace, const char *who)
{
	uint8_t key[16];
	if (getrandom(key, sizeof(key), 0) != (ssize_t) sizeof(key)) {
		fprintf(stderr, "%s: getrandom failed: %s\n", who, strerror(errno));
		return -1;
	}
	iip_set_isn_secret(workspace, key);
	return 0;
}

#endif /* IO_COMMON_STACK_SETUP_H */
