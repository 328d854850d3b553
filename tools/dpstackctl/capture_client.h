/* dpstackctl's side of `capture`: where the pcapng goes, and the relay from the daemon. */
#ifndef DPSTACKCTL_CAPTURE_CLIENT_H
#define DPSTACKCTL_CAPTURE_CLIENT_H

/* Takes "-w FILE" or "-w -" out of the command's words (argv[0] is "capture"; *argc is
 * updated) and opens the output: FILE, or stdout for "-" or no -w. Returns the descriptor,
 * or -1 after printing why (an unwritable file; pcapng to a terminal). */
int capture_client_output(int *argc, char **argv);

/* After the daemon's "ok": copies the pcapng stream from fd to out until the daemon ends
 * it, then prints the daemon's summary (packets, capture drops) on stderr. The first
 * SIGINT or SIGTERM asks the daemon to end the capture (the stream then ends cleanly), a
 * second one exits at once. Returns the exit status. */
int capture_client_relay(int fd, int out);

#endif
