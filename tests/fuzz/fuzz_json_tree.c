/* libFuzzer target: json_tree_parse (dpstackctl's JSON reader) on arbitrary bytes. It either
 * refuses them or gives a tree whose links only point forward and inside it, whose keys and
 * strings are C strings inside the input's buffer (decoded in place), and in which every
 * member of an object is found by its key. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_check.h"
#include "json_tree.h"

static bool in_buffer(const char *p, const char *buf, size_t len)
{
	return p >= buf && (size_t)(p - buf) < len && memchr(p, '\0', len - (size_t)(p - buf));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = malloc(size + 1); /* one spare byte: a NUL the parser must not need */
	FUZZ_CHECK(buf != NULL);
	memcpy(buf, data, size);
	buf[size] = 'x';
	struct json_tree t;
	int rc = json_tree_parse(&t, buf, size);
	FUZZ_CHECK(rc == 0 || rc == -EINVAL || rc == -ENOMEM);
	for (size_t i = 0; rc == 0 && i < t.n; i++) {
		const struct json_node *n = &t.nodes[i];
		FUZZ_CHECK(n->child == -1 || ((size_t)n->child > i && (size_t)n->child < t.n));
		FUZZ_CHECK(n->next == -1 || ((size_t)n->next > i && (size_t)n->next < t.n));
		FUZZ_CHECK(n->child == -1 || n->type == JSON_ARRAY || n->type == JSON_OBJECT);
		if (n->type == JSON_STRING)
			FUZZ_CHECK(in_buffer(n->str, buf, size));
		if (n->type != JSON_OBJECT)
			continue;
		for (int c = n->child; c >= 0; c = t.nodes[c].next) {
			FUZZ_CHECK(in_buffer(t.nodes[c].key, buf, size));
			int found = json_tree_get(&t, (int)i, t.nodes[c].key);
			FUZZ_CHECK(found >= 0 && strcmp(t.nodes[found].key, t.nodes[c].key) == 0);
		}
	}
	if (rc == 0)
		json_tree_free(&t);
	free(buf);
	return 0;
}
