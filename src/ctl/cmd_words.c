#include "cmd_words.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* The k-th word (from 0) of a space-separated list, as a pointer and length; false past the
 * end. */
static bool word_at(const char *words, int k, const char **w, size_t *len)
{
	const char *p = words;
	for (int i = 0;; i++) {
		size_t n = strcspn(p, " ");
		if (n == 0)
			return false;
		if (i == k) {
			*w = p;
			*len = n;
			return true;
		}
		p += n;
		p += *p == ' ';
	}
}

/* Whether the first k words of words are argv[0..k). */
static bool prefix_matches(const char *words, int k, char *const *argv)
{
	for (int i = 0; i < k; i++) {
		const char *w;
		size_t n;
		if (!word_at(words, i, &w, &n) || strlen(argv[i]) != n ||
		    strncmp(argv[i], w, n) != 0)
			return false;
	}
	return true;
}

int cmd_words_match(const char *words, int argc, char *const *argv)
{
	int n = 0;
	const char *w;
	size_t len;
	while (word_at(words, n, &w, &len))
		n++;
	return n <= argc && prefix_matches(words, n, argv) ? n : 0;
}

/* Appends to msg (truncating quietly: the message is for a human). */
__attribute__((format(printf, 4, 5)))
static void msg_add(char *msg, size_t msglen, size_t *used, const char *fmt, ...)
{
	if (*used >= msglen)
		return;
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(msg + *used, msglen - *used, fmt, ap);
	va_end(ap);
	if (n > 0)
		*used += (size_t)n;
}

void cmd_words_blame(const char *const *table, size_t n, int argc, char *const *argv,
		     char *msg, size_t msglen)
{
	if (msglen == 0)
		return;
	msg[0] = '\0';
	/* depth: how many leading words some command shares with argv. */
	int depth = 0;
	for (size_t i = 0; i < n; i++)
		while (depth < argc && prefix_matches(table[i], depth + 1, argv))
			depth++;
	size_t used = 0;
	if (depth == 0) {
		msg_add(msg, msglen, &used, "unknown command '%s'", argv[0]);
	} else {
		msg_add(msg, msglen, &used, depth < argc ? "unknown %s" : "'%s", argv[0]);
		for (int k = 1; k < depth; k++)
			msg_add(msg, msglen, &used, " %s", argv[k]);
		if (depth < argc)
			msg_add(msg, msglen, &used, " subcommand '%s'", argv[depth]);
		else
			msg_add(msg, msglen, &used, "' needs a subcommand");
	}
	/* The words that could come there, each once, in the table's order; options (`ip -6
	 * route`) are no subcommands and the usage lists them. */
	const char *sep = " (valid: ";
	for (size_t i = 0; i < n; i++) {
		const char *w;
		size_t len;
		if (!prefix_matches(table[i], depth, argv) || !word_at(table[i], depth, &w, &len) ||
		    w[0] == '-')
			continue;
		bool seen = false;
		for (size_t j = 0; j < i && !seen; j++) {
			const char *v;
			size_t vlen;
			seen = prefix_matches(table[j], depth, argv) &&
			       word_at(table[j], depth, &v, &vlen) && vlen == len &&
			       strncmp(v, w, len) == 0;
		}
		if (seen)
			continue;
		msg_add(msg, msglen, &used, "%s%.*s", sep, (int)len, w);
		sep = ", ";
	}
	if (sep[0] == ',')
		msg_add(msg, msglen, &used, ")");
}
