# SPDX-License-Identifier: GPL-2.0
#
# rdmap_sw: software iWARP RDMA provider.
#
#   make                 build rdmap_sw.ko against KDIR (see below)
#   make install         install it into /lib/modules/<release>/updates
#   make run             main job: build, boot a VM, attach rsw0, run rping and perftest
#   make check           every test: builds, KUnit, VM tests (what CI runs)
#   make stress          long runs and full matrices make check samples (1 h+)
#   make kunit           KUnit suites on the debug kernel only
#   make bench           rdmap_sw vs siw, rxe, TCP in one VM (~30 min)
#   make deb             the rdmap-sw-dkms and ibverbs-provider-rdmap-sw packages,
#                        built outside the checkout; prints their paths (scripts/deb)
#   make setup           install dependencies (done by the targets above)
#
# KDIR: a kernel build directory.  If unset, the running kernel's
# /lib/modules/$(uname -r)/build, else the project's default Debian 6.12
# kernel (installed by scripts/setup).

# kbuild itself reads ./Kbuild; this file is only the user-facing front end.
SHELL := /bin/bash
RUNNING_KDIR := $(wildcard /lib/modules/$(shell uname -r)/build)
ifeq ($(origin KDIR),undefined)
ifneq ($(RUNNING_KDIR),)
KDIR := $(RUNNING_KDIR)
else
KDIR = $(shell scripts/setup >&2 && . scripts/lib.sh && rsw_kdir 6.12)
endif
endif

.PHONY: all modules install setup run check stress kunit bench deb clean

all: modules

modules:
	$(MAKE) -C $(KDIR) M=$(CURDIR) W=1 modules

# INSTALL_MOD_PATH (a staging root) is honoured by kbuild and depmod alike.
install: modules
	$(MAKE) -C $(KDIR) M=$(CURDIR) INSTALL_MOD_DIR=updates modules_install
	depmod -a $(if $(INSTALL_MOD_PATH),-b $(INSTALL_MOD_PATH)) \
		$$($(MAKE) -s -C $(KDIR) kernelrelease)

setup:
	scripts/setup

run:
	scripts/run

check:
	scripts/check

stress:
	scripts/stress

kunit:
	scripts/setup
	scripts/kunit

bench:
	scripts/bench

deb:
	@scripts/deb

clean:
	$(MAKE) -C $(KDIR) M=$(CURDIR) clean
