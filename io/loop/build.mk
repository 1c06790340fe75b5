# io/loop/build.mk — included by an application's Makefile when it is built
# with IOSUB_DIR=<path to io/loop> (COMPAT.md section 3). The loop backend
# needs only libc (getrandom, clock_gettime, getopt, inet_pton).
CFLAGS += -D_GNU_SOURCE
LDLIBS += -lpthread
