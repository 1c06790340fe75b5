# io/threadmodel/build.mk — the thread-model layer, a backend that wraps
# another one (README.md):
#
#   IOSUB_DIR=io/threadmodel INNER_IOSUB_DIR=io/loop make       (in any app's folder)
#
# INNER_IOSUB_DIR may be absolute, relative to the current folder or to the
# repository root.  The application's IIP_MAIN_C (the stack) is replaced by
# stack_view.h, which includes that stack and renames what the layer stands
# in for; the wrapped backend's build.mk adds its own flags and libraries.
TM_DIR := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))
TM_ROOT := $(abspath $(TM_DIR)/../..)

ifeq ($(strip $(INNER_IOSUB_DIR)),)
$(error io/threadmodel wraps a backend: give INNER_IOSUB_DIR=<backend folder>, e.g. INNER_IOSUB_DIR=io/loop)
endif
TM_INNER := $(abspath $(INNER_IOSUB_DIR))
ifeq ($(wildcard $(TM_INNER)/build.mk),)
TM_INNER := $(abspath $(TM_ROOT)/$(INNER_IOSUB_DIR))
endif
ifeq ($(wildcard $(TM_INNER)/build.mk),)
$(error INNER_IOSUB_DIR=$(INNER_IOSUB_DIR) has no build.mk: give a backend folder, e.g. INNER_IOSUB_DIR=io/loop)
endif
ifeq ($(TM_INNER),$(TM_DIR))
$(error INNER_IOSUB_DIR must be another backend than io/threadmodel itself)
endif

TM_IIP_FLAG := $(filter -DIIP_MAIN_C=%,$(CPPFLAGS))
ifeq ($(TM_IIP_FLAG),)
TM_IIP_FLAG := -DIIP_MAIN_C=\"$(TM_ROOT)/stack/main.c\"
endif
CPPFLAGS := $(filter-out -DIIP_MAIN_C=%,$(CPPFLAGS)) \
	$(patsubst -DIIP_MAIN_C=%,-DTHREADMODEL_IIP_MAIN_C=%,$(TM_IIP_FLAG)) \
	-DIIP_MAIN_C=\"$(TM_DIR)/stack_view.h\" \
	-DTHREADMODEL_INNER_MAIN_C=\"$(TM_INNER)/main.c\"

include $(TM_INNER)/build.mk
CFLAGS += -D_GNU_SOURCE
LDLIBS += -lpthread
