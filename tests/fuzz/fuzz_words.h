/* Shared by the rule grammar targets (fuzz_acl_rule.c, fuzz_flow_rule.c): the fuzzer's bytes
 * as the words of a command line, as dpstackctl and the config file split them. */
#ifndef DPS_FUZZ_WORDS_H
#define DPS_FUZZ_WORDS_H

#include <string.h>

#define FUZZ_MAX_WORDS 24

/* Splits text (modified in place) at blanks into at most FUZZ_MAX_WORDS words. */
static inline int fuzz_split_words(char *text, char **words)
{
	int n = 0;
	char *save = NULL;
	for (char *w = strtok_r(text, " \t\n", &save); w != NULL && n < FUZZ_MAX_WORDS;
	     w = strtok_r(NULL, " \t\n", &save))
		words[n++] = w;
	return n;
}

/* The one port the targets know: "port0". */
static inline int fuzz_port_by_name(void *ctx, const char *name)
{
	(void)ctx;
	return strcmp(name, "port0") == 0 ? 0 : -1;
}

#endif
