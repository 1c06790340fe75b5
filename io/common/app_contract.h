/*
 * io/common/app_contract.h — the application's side of the contract
 * (COMPAT.md section 3), declared for the backend, which calls these from
 * __iosub_main and its threads; the application defines them.
 */
#ifndef IO_COMMON_APP_CONTRACT_H
#define IO_COMMON_APP_CONTRACT_H

#include <stdint.h>

static void *__app_init(int argc, char *const *argv);
static void *__app_thread_init(void *workspace, uint16_t core_id, void *opaque);
static void __app_loop(void *workspace, uint8_t mac[], uint32_t ip4_be, uint32_t *next_us, void *opaque);
static uint8_t __app_should_stop(void *opaque);
static void __app_exit(void *app_global);

/*
 * An application need not use every call of the stack, nor the affinity
 * helper: naming them in __iosub_main keeps -Wunused-function quiet. A
 * macro, because it names what is defined after this file is included.
 */
#define IO_STACK_CALLS_MAY_GO_UNUSED() \
	do { \
		(void) iip_run; (void) iip_udp_send; (void) iip_tcp_connect; (void) iip_tcp_rxbuf_consumed; \
		(void) iip_tcp_close; (void) iip_tcp_send; (void) iip_arp_request; (void) iip_add_tcp_conn; \
		(void) iip_add_pb; (void) iip_tcp_conn_size; (void) iip_pb_size; (void) iip_workspace_size; \
		(void) helper_ip4_get_connection_affinity; \
	} while (0)

#endif /* IO_COMMON_APP_CONTRACT_H */
