/* The monitor's two outputs of one view (monitor_rates.h): a screen of tables, like top's,
 * and one JSON object on one line. Both are written into a ctl_out buffer, the daemon's own
 * text and JSON writer (src/ctl/ctl_out.h), so a frame leaves in one write. */
#ifndef DPS_TOOLS_MONITOR_SHOW_H
#define DPS_TOOLS_MONITOR_SHOW_H

#include "ctl_out.h"
#include "monitor_rates.h"

/* One line: {"time": ISO 8601 UTC, "interval_s", "ports": [...], "workers": [...],
 * "drops_per_s": {...}}, rates per second and bits per second, non-zero drop rates only. */
void mon_show_json(struct ctl_out *o, const struct mon_view *v);

/* The tables (without terminal escapes: the caller fits them to the screen). */
void mon_show_text(struct ctl_out *o, const struct mon_view *v, const char *path,
		   double interval_s);

#endif
