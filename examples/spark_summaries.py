"""Summarize an archive of agent runs with Spark, past one machine.

Paths go in, JSON summaries come out, and the summaries are reduced with
`summarize --merge`: each partition of paths runs `normalize --files-from - |
summarize --format json` as an `RDD.pipe` stage, the partition documents are
merged in a second pipe stage on fewer partitions, and the driver merges what
is left into the final report. `--merge` is associative, commutative and
idempotent, so the grouping Spark picks (and a retried task) changes nothing.

    spark-submit examples/spark_summaries.py --format markdown runs/ > report.md
    python3 examples/spark_summaries.py --master 'local[2]' fixtures/

The binaries must be on every executor's PATH (or give `--bin-dir`). Paths
travel through `RDD.pipe` one per line, so a path holding a newline is refused.
"""

import argparse
import os
import shlex
import subprocess
import sys

from pyspark.sql import SparkSession


def input_paths(operands):
    """Every file under the operands, in a stable order."""
    for operand in operands:
        if os.path.isdir(operand):
            for root, dirs, files in os.walk(operand):
                dirs.sort()
                for name in sorted(files):
                    yield os.path.join(root, name)
        else:
            yield operand


def documents(lines):
    """The lines of one pipe stage's output as the single JSON document they form."""
    text = "\n".join(lines)
    return [text] if text.strip() else []


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="+", help="run files or directories of them")
    parser.add_argument("--master", help="Spark master (default: spark-submit's)")
    parser.add_argument("--partitions", type=int, default=0, help="path partitions (default: Spark's parallelism)")
    parser.add_argument("--fan-in", type=int, default=16, help="partition summaries merged per task")
    parser.add_argument("--format", choices=["json", "text", "markdown"], default="json")
    parser.add_argument("--bin-dir", help="where normalize and summarize are (default: PATH)")
    args = parser.parse_args()

    binary = lambda name: os.path.join(args.bin_dir, name) if args.bin_dir else name
    normalize, summarize = shlex.quote(binary("normalize")), shlex.quote(binary("summarize"))

    paths = [os.path.abspath(p) for p in input_paths(args.paths)]
    if any("\n" in p for p in paths):
        sys.exit("spark_summaries: a path holds a newline; RDD.pipe passes one path per line")

    builder = SparkSession.builder.appName("minicode-output summaries")
    if args.master:
        builder = builder.master(args.master)
    spark = builder.getOrCreate()
    sc = spark.sparkContext
    partitions = args.partitions or sc.defaultParallelism

    # Stage 1: one summary document per partition of paths.
    summaries = (
        sc.parallelize(paths, max(1, min(partitions, len(paths))))
        .pipe("sh -c " + shlex.quote(f"{normalize} --files-from - | {summarize} --format json"))
        .mapPartitions(documents)
    )
    # Stage 2: merge them fan-in at a time, on the executors.
    merged_parts = max(1, summaries.getNumPartitions() // args.fan_in)
    merged = summaries.coalesce(merged_parts).pipe(f"{summarize} --merge --format json").mapPartitions(documents)
    parts = merged.collect()
    spark.stop()

    # The last merge, on the driver, writes the report in the format asked for.
    report = subprocess.run(
        [binary("summarize"), "--merge", "--format", args.format],
        input="\n".join(parts).encode(),
        stdout=sys.stdout.buffer,
        check=False,
    )
    sys.exit(report.returncode)


if __name__ == "__main__":
    main()
