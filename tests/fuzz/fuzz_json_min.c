/* libFuzzer target: json_min_parse_object (the iperf3 service's JSON reader) on arbitrary
 * bytes. An arena as long as the input must always be enough; on success every key and
 * string is a C string inside the arena of the length reported, json_min_find finds every
 * key, and a second parse gives the same answer. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_check.h"
#include "json_min.h"

#define MEMBERS 8

static bool in_arena(const char *p, size_t n, const char *arena, size_t len)
{
	return p >= arena && n < len && (size_t)(p - arena) <= len - n - 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct json_min_member m[MEMBERS], again[MEMBERS];
	char *arena = malloc(size + 1), *arena2 = malloc(size + 1);
	FUZZ_CHECK(arena != NULL && arena2 != NULL);
	int rc = json_min_parse_object((const char *)data, size, m, MEMBERS, arena, size);
	FUZZ_CHECK(rc == -EINVAL || rc == -E2BIG || (rc >= 0 && rc <= MEMBERS));
	int rc2 = json_min_parse_object((const char *)data, size, again, MEMBERS, arena2, size);
	FUZZ_CHECK(rc2 == rc);
	for (int i = 0; i < rc; i++) {
		size_t klen = strnlen(m[i].key, size);
		FUZZ_CHECK(in_arena(m[i].key, klen, arena, size));
		FUZZ_CHECK(json_min_find(m, (size_t)rc, m[i].key) != NULL);
		FUZZ_CHECK(m[i].type == again[i].type);
		if (m[i].type == JSON_MIN_STRING) {
			FUZZ_CHECK(in_arena(m[i].str, m[i].str_len, arena, size));
			FUZZ_CHECK(strlen(m[i].str) == m[i].str_len);
		}
		if (m[i].type == JSON_MIN_NUMBER && m[i].is_int)
			FUZZ_CHECK(m[i].i == again[i].i);
	}
	free(arena);
	free(arena2);
	return 0;
}
