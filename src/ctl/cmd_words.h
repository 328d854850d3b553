/* The words that select a control command (cmd.c's table), and, when a command line matches
 * none, which of its words is wrong. Pure C over plain strings, so it is unit-tested alone. */
#ifndef DPS_CTL_CMD_WORDS_H
#define DPS_CTL_CMD_WORDS_H

#include <stddef.h>

/* How many of argv's leading words spell words ("ip route add"); 0 when they do not. */
int cmd_words_match(const char *words, int argc, char *const *argv);

/* For a command line that selects no command (or a bare prefix such as "ip"): writes into msg
 * a message that blames the first word that no command continues with, and lists the words
 * that would have been valid there ("unknown ip subcommand 'stats' (valid: addr, route)").
 * table holds n word strings. */
void cmd_words_blame(const char *const *table, size_t n, int argc, char *const *argv,
		     char *msg, size_t msglen);

#endif
