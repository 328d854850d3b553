#!/usr/bin/env python3
"""The summary of bench/l3fwd.sh: reads its results (one line per forwarder, family, frame size
and round: "FORWARDER FAMILY SIZE RX_MPPS TX_MPPS"), prints per family and size each
forwarder's median and best Mpps and the ratios dpstackd/testpmd and dpstackd/l3fwd, and writes
the same as JSON. Run by bench/l3fwd.sh, which passes everything in the environment."""
import json
import os
import statistics

FORWARDERS = (("dpstackd", "dpstackd"), ("testpmd", "testpmd io"), ("l3fwd", "DPDK l3fwd"))


def ratio(a, b):
    return round(a / b, 2) if a is not None and b else None


def cell(median, best):
    return f"{median:6.3f} ({best:6.3f})" if median is not None else f"{'-':>15}"


def main():
    env = os.environ
    runs = {}  # (forwarder, family, size) -> [rx Mpps of each round]
    sent = {}
    with open(env["RESULTS"]) as f:
        for line in f:
            fwd, family, size, rx, tx = line.split()
            key = (fwd, int(family), int(size))
            runs.setdefault(key, []).append(float(rx))
            sent.setdefault(key, []).append(float(tx))
    rows = []
    for fam, size in sorted({(k[1], k[2]) for k in runs}):
        row = {"family": fam, "frame_bytes": size}
        for fwd, _ in FORWARDERS:
            r = runs.get((fwd, fam, size))
            row[f"{fwd}_mpps"] = r or []
            row[f"{fwd}_sent_mpps"] = sent.get((fwd, fam, size), [])
            row[f"{fwd}_median_mpps"] = statistics.median(r) if r else None
            row[f"{fwd}_best_mpps"] = max(r) if r else None
        for ref in ("testpmd", "l3fwd"):
            for stat in ("median", "best"):
                row[f"ratio_{ref}_of_{stat}s"] = ratio(row[f"dpstackd_{stat}_mpps"],
                                                       row[f"{ref}_{stat}_mpps"])
        rows.append(row)

    print(f"\nL3 forwarding over a memif pair, 1 forwarding core, UDP frames (bytes with the FCS;"
          f"\nIPv6's smallest is 66), Mpps received back: median (best) of {env['ROUNDS']} runs of"
          f" {env['SECONDS_PER_RUN']}s")
    head = "".join(f" {name:>15}" for _, name in FORWARDERS)
    print(f"  {'':12}{head} {'dps/testpmd':>12} {'dps/l3fwd':>10}")
    for row in rows:
        cells = "".join(" " + cell(row[f"{fwd}_median_mpps"], row[f"{fwd}_best_mpps"])
                        for fwd, _ in FORWARDERS)
        label = f"IPv{row['family']} {row['frame_bytes']} B"
        r_t, r_l = (f"{r:.2f}" if r is not None else "-"
                    for r in (row["ratio_testpmd_of_medians"], row["ratio_l3fwd_of_medians"]))
        print(f"  {label:12}{cells} {r_t:>12} {r_l:>10}")
    print("  (ratios of the medians; noise on a shared machine only ever slows a run down: the"
          "\n   best run is the closest to each forwarder's capacity, the median the typical one)")
    own = {}
    for fam in sorted({row["family"] for row in rows}):
        counter = "ip6.forwarded" if fam == 6 else "ip.forwarded"
        with open(os.path.join(env["WORK"], f"stats{fam}.json")) as f:
            own[f"dpstackd_last_run_ipv{fam}_forwarded"] = json.load(f)["events"][counter]
        print(f"  (the last dpstackd IPv{fam} run forwarded"
              f" {own[f'dpstackd_last_run_ipv{fam}_forwarded']} packets by its own count)")
    print(f"  load average (1, 5, 15 min) before / after: {env['LOAD']}")
    print(f"  the whole run took {env['ELAPSED']} s")
    with open(env["OUT"], "w") as f:
        json.dump({"benchmark": "l3fwd_memif", "rounds": int(env["ROUNDS"]),
                   "seconds": int(env["SECONDS_PER_RUN"]), "sizes": [int(s) for s in env["SIZES"].split()],
                   "load_average_before_after": env["LOAD"],
                   "elapsed_seconds": int(env["ELAPSED"]), **own, "results": rows}, f, indent=1)


if __name__ == "__main__":
    main()
