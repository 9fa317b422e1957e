"""Log-analytics pipeline: parse raw request logs, enrich each record, write per-record JSON.

Standard library only. Run: python3 pipeline.py --records 40000
"""
import argparse
import glob
import hashlib
import json
import os
import random
import shutil
import time


def make_raw_logs(folder, n_files, per_file, seed=7):
    """Create the input: n_files text logs of per_file lines each."""
    rng = random.Random(seed)
    os.makedirs(folder, exist_ok=True)
    paths = []
    for i in range(n_files):
        path = os.path.join(folder, f"access-{i:03d}.log")
        with open(path, "w") as fh:
            for _ in range(per_file):
                user = rng.randrange(10_000)
                status = rng.choice([200, 200, 200, 301, 404, 500])
                latency = rng.expovariate(1 / 40.0)
                fh.write(f"user={user} status={status} latency_ms={latency:.3f} path=/api/v{rng.randrange(3)}/items\n")
        paths.append(path)
    return paths


def parse_line(line):
    fields = dict(part.split("=", 1) for part in line.split())
    return {
        "user": int(fields["user"]),
        "status": int(fields["status"]),
        "latency_ms": float(fields["latency_ms"]),
        "path": fields["path"],
    }


def enrich(record):
    """CPU-heavy per-record work: a salted key-stretching fingerprint of the user."""
    digest = str(record["user"]).encode()
    for _ in range(150):
        digest = hashlib.sha256(digest + b"salt").digest()
    record["fingerprint"] = digest.hex()[:16]
    record["slow"] = record["latency_ms"] > 100.0
    return record


def process_file(path):
    with open(path) as fh:
        return [enrich(parse_line(line)) for line in fh]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--records", type=int, default=40000)
    parser.add_argument("--workdir", default="work")
    args = parser.parse_args()

    shutil.rmtree(args.workdir, ignore_errors=True)
    raw_dir = os.path.join(args.workdir, "raw")
    make_raw_logs(raw_dir, 8, args.records // 8)
    out_dir = os.path.join(args.workdir, "out")
    os.makedirs(out_dir, exist_ok=True)
    out_path = os.path.join(out_dir, "enriched.jsonl")

    start = time.perf_counter()
    files = sorted(glob.glob(os.path.join(raw_dir, "*.log")))
    results = []
    for path in files:
        results.append(process_file(path))

    slow = 0
    for batch in results:
        for record in batch:
            # Append one row: an open/write/close round trip for every record.
            with open(out_path, "a") as fh:
                fh.write(json.dumps(record) + "\n")
            slow += record["slow"]
    elapsed = time.perf_counter() - start

    total = sum(len(b) for b in results)
    print(f"records={total} slow={slow}")
    print(f"throughput={total / elapsed:.1f} records/s")
    shutil.rmtree(args.workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
