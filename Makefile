# iip: top-level targets.  `make test` is what CI runs (.ci/run).
.PHONY: all test demo deps clean

all:
	@for d in apps/examples/ping_udp apps/linux_baseline tools/impair; do \
		if [ -f $$d/Makefile ]; then $(MAKE) -C $$d || exit 1; fi; \
	done

# every suite under tests/ (compile, unit, io, common, tools, fuzz, ...)
test:
	bash tests/run_all.sh

# installs what the tests and the demo need (Debian/Ubuntu, as root)
deps:
	bash tools/deps.sh

demo:
	bash tools/demo.sh

clean:
	rm -rf build
	@for d in apps/examples/ping_udp apps/linux_baseline tools/impair; do \
		if [ -f $$d/Makefile ]; then $(MAKE) -C $$d clean; fi; \
	done
