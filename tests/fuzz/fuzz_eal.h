/* The EAL of the fuzz targets that need DPDK: no hugepages, no PCI, no shared config, lcore 0
 * on the first CPU this process may use; cleaned up at exit (the caller's cleanup runs first
 * through fuzz_eal_init's atexit order). */
#ifndef DPS_FUZZ_EAL_H
#define DPS_FUZZ_EAL_H

/* Starts the EAL for program name; aborts on failure. */
void fuzz_eal_init(const char *name);
/* Stops it and removes its runtime directory. */
void fuzz_eal_cleanup(void);

#endif
