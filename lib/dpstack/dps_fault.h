/* The library's SIGSEGV and SIGBUS handler (dps_fault.c), behind the fault-safe copies
 * (dps_ucopy.h), and the application's own dispositions of those signals, which it keeps. */
#ifndef DPS_LIB_FAULT_H
#define DPS_LIB_FAULT_H

#include <signal.h>
#include <stdbool.h>

/* Installs the handler once (the first fault-safe copy does), taking over what the process
 * had for both signals as the application's disposition (a handler of its own, SIG_IGN or
 * SIG_DFL). */
void dps_fault_init(void);

/* sigaction(2) for SIGSEGV and SIGBUS while the handler is installed: the application's
 * disposition is recorded and reported (oldact), the kernel keeps the library's handler with
 * the application's mask and flags. False when sig is not one of them or the handler is not
 * installed (the caller passes the call on); else *rc is the result (0, or -1 with errno). */
bool dps_fault_sigaction(int sig, const struct sigaction *act, struct sigaction *oldact,
			 int *rc);

/* Around execve(2): a disposition of SIG_IGN survives an exec and a handler does not, so
 * the kernel is given the application's SIG_IGN for the new image; restored if it fails. */
void dps_fault_exec_prepare(void);
void dps_fault_exec_failed(void);

#endif
