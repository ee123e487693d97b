"""ncu_source_stalls.py — where a kernel's warps wait, by SASS instruction: reads the CSV that
`ncu --page source --print-source sass --csv ...` prints (one row per instruction with its
stall samples) and prints the total by stall reason and the TOP instructions with their two
largest stall reasons.  Usage: python3 bench/scripts/ncu_source_stalls.py FILE.csv [TOP]
(the ncu output may have the kernel's own prints before the CSV header; they are skipped)."""
import csv
import io
import sys


def read_rows(path):
    lines = open(path).read().split("\n")
    start = next(k for k, line in enumerate(lines) if line.startswith('"Address"'))
    rows = list(csv.reader(io.StringIO("\n".join(lines[start:]))))
    return rows[0], [r for r in rows[1:] if len(r) == len(rows[0])]


def main():
    header, data = read_rows(sys.argv[1])
    top = int(sys.argv[2]) if len(sys.argv) > 2 else 25
    samples = header.index("Warp Stall Sampling (All Samples)")
    stalls = [k for k, name in enumerate(header) if name.startswith("stall_")]
    total = sum(float(r[samples] or 0) for r in data)
    by_reason = {header[k]: sum(float(r[k] or 0) for r in data) for k in stalls}
    print("total samples", total)
    print(sorted(((round(v), n) for n, v in by_reason.items() if v), reverse=True)[:10])
    for r in sorted(data, key=lambda r: -float(r[samples] or 0))[:top]:
        worst = sorted(((float(r[k] or 0), header[k]) for k in stalls), reverse=True)[:2]
        print("%6s %5.1f%%  %-60s %s" % (r[0], 100 * float(r[samples] or 0) / total, r[1][:60],
                                        " ".join("%s=%d" % (n[6:], v) for v, n in worst if v)))


if __name__ == "__main__":
    main()
