/* Printable names of parse outcomes, from the one list in status.h. */
#include "status.h"

static const char *const wire_status_text[WIRE_STATUS_COUNT] = {
#define WIRE_STATUS_TEXT(name, text) [WIRE_##name] = text,
	WIRE_STATUS_LIST(WIRE_STATUS_TEXT)
#undef WIRE_STATUS_TEXT
};

const char *wire_status_str(enum wire_status s)
{
	/* The cast also catches negative values of an out-of-range enum. */
	if ((unsigned)s >= WIRE_STATUS_COUNT)
		return "unknown status";
	return wire_status_text[s];
}
