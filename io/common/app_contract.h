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

#endif /* IO_COMMON_APP_CONTRACT_H */
