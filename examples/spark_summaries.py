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
    """What the executors read: each operand file, and each entry of an operand directory.
    `normalize` walks a directory itself, reading the session files it recognises and
    skipping the others, so an archive is spread over the executors by its subdirectories
    (a project, a day) without listing its files here."""
    for operand in operands:
        if os.path.isdir(operand):
            for name in sorted(os.listdir(operand)):
                yield os.path.join(operand, name)
        else:
            yield operand


def group(path):
    """The partition key: a file's directory, so that a session resumed in a second file
    beside the first is read in one process; a directory is a group of its own."""
    return path if os.path.isdir(path) else os.path.dirname(path)


def documents(lines):
    """The lines of one pipe stage's output as the single JSON document they form."""
    text = "\n".join(lines)
    return [text] if text.strip() else []


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="+", help="run files, session files, or directories of them")
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

    # Stage 1: one summary document per partition of paths, each group in one partition and
    # no partition empty (an empty list would have normalize read an empty stdin: a run
    # with nothing recognised).
    groups = {g: i for i, g in enumerate(sorted({group(p) for p in paths}))}
    slices = max(1, min(partitions, len(groups)))
    summaries = (
        sc.parallelize(paths)
        .keyBy(group)
        .partitionBy(slices, lambda g: groups[g] % slices)
        .mapPartitions(lambda pairs: sorted(path for _, path in pairs))
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
