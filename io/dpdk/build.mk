# io/dpdk/build.mk — included by an application's Makefile when it is built
# with IOSUB_DIR=<path to io/dpdk> (COMPAT.md section 3).
#
# Needs DPDK (Debian: libdpdk-dev, found through pkg-config libdpdk) and
# pthreads. DPDK's include folders are passed as -isystem so that the
# application's -Wall -Wextra -Werror judges our code, not DPDK's headers.
# The poll-mode drivers (net_tap, net_af_packet, net_memif, ...) are shared
# objects that EAL loads at start from its plugin folder; nothing to link.
DPDK_PKG := libdpdk
DPDK_CFLAGS := $(shell pkg-config --cflags $(DPDK_PKG) 2>/dev/null)
DPDK_LIBS := $(shell pkg-config --libs $(DPDK_PKG) 2>/dev/null)
ifeq ($(DPDK_LIBS),)
$(error io/dpdk needs DPDK: pkg-config libdpdk found nothing (Debian/Ubuntu: apt-get install libdpdk-dev pkg-config))
endif
CFLAGS += -D_GNU_SOURCE $(patsubst -I%,-isystem%,$(DPDK_CFLAGS))
LDLIBS += $(DPDK_LIBS) -lpthread
