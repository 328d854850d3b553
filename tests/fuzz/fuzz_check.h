/* Shared by the libFuzzer targets: a check that survives NDEBUG and stops the fuzzer. */
#ifndef DPS_FUZZ_CHECK_H
#define DPS_FUZZ_CHECK_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define FUZZ_CHECK(cond) \
	do { \
		if (!(cond)) { \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
			abort(); \
		} \
	} while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif
