# apps/app.mk — the build rule every application shares (COMPAT.md section 3).
#
# An application's Makefile sets what is its own, then includes this file:
#
#   APP_DEPS  the app's files besides main.c that a rebuild depends on
#             (its headers; may use $(ROOT), the repository root)
#   OUT       default name of the binary (this file's default: a.out)
#
# and is built with
#
#   IOSUB_DIR=<backend folder> make      e.g. IOSUB_DIR=io/loop make
#
# IOSUB_DIR may be given relative to the app's folder, relative to the
# repository root (IOSUB_DIR=io/loop), relative to apps/examples (as written
# for an app one level up: IOSUB_DIR=../../io/loop) or absolute; default:
# the loop backend. IIP_DIR selects the stack (default: the repository's
# stack/). EXTRA_CFLAGS adds compiler flags. The backend's build.mk adds its
# own flags and libraries.
ROOT := $(abspath $(dir $(lastword $(MAKEFILE_LIST)))/..)
IOSUB_DIR ?= $(ROOT)/io/loop
IIP_DIR ?= $(ROOT)/stack
OUT ?= a.out

IOSUB_ABS := $(abspath $(IOSUB_DIR))
ifeq ($(wildcard $(IOSUB_ABS)/build.mk),)
IOSUB_ABS := $(abspath $(ROOT)/$(IOSUB_DIR))
endif
ifeq ($(wildcard $(IOSUB_ABS)/build.mk),)
IOSUB_ABS := $(abspath $(ROOT)/apps/examples/$(IOSUB_DIR))
endif
ifeq ($(wildcard $(IOSUB_ABS)/build.mk),)
$(error IOSUB_DIR=$(IOSUB_DIR) has no build.mk: give a backend folder, e.g. IOSUB_DIR=io/loop)
endif
IIP_ABS := $(abspath $(IIP_DIR))

CFLAGS ?= -O2 -g
CFLAGS += -std=gnu11 -Wall -Wextra -Werror $(EXTRA_CFLAGS)
CPPFLAGS += -DIIP_MAIN_C=\"$(IIP_ABS)/main.c\" -DIOSUB_MAIN_C=\"$(IOSUB_ABS)/main.c\"

include $(IOSUB_ABS)/build.mk

SRCS := main.c $(APP_DEPS) $(wildcard $(IIP_ABS)/*.c $(IIP_ABS)/*.h \
	$(IOSUB_ABS)/*.c $(IOSUB_ABS)/*.h $(ROOT)/io/common/*.h)

$(OUT): $(SRCS) Makefile $(ROOT)/apps/app.mk
	$(CC) $(CPPFLAGS) $(CFLAGS) main.c -o $@ $(LDFLAGS) $(LDLIBS)

clean:
	rm -f $(OUT)

.PHONY: clean
