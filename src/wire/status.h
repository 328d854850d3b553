/* Outcome of parsing untrusted bytes. Each value names the first check that failed, in the
 * order of shared/STYLE.md, so the caller can count the drop under a precise reason. Every
 * *_parse function writes its output only when it returns WIRE_OK. */
#ifndef DPS_WIRE_STATUS_H
#define DPS_WIRE_STATUS_H

#define WIRE_STATUS_LIST(X) \
	X(OK,           "ok") \
	X(TRUNCATED,    "shorter than its fixed header") \
	X(BAD_VERSION,  "wrong version field") \
	X(BAD_HDR_LEN,  "header-length field below minimum or past the buffer") \
	X(BAD_LENGTH,   "total-length field inconsistent with the buffer") \
	X(BAD_CHECKSUM, "checksum mismatch") \
	X(BAD_FIELD,    "field value not allowed") \
	X(BAD_OPTION,   "malformed option")

enum wire_status {
#define WIRE_STATUS_ENUM(name, text) WIRE_##name,
	WIRE_STATUS_LIST(WIRE_STATUS_ENUM)
#undef WIRE_STATUS_ENUM
	WIRE_STATUS_COUNT
};

/* Printable description of a status; never NULL. */
const char *wire_status_str(enum wire_status s);

#endif
