#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Runs a GoogleTest shard of the sanitized build once more when, and only
when, LeakSanitizer's stop-the-world tracer crashed at exit ("Tracer caught
signal 11" / "LeakSanitizer has encountered a fatal error"). That crash is in
the sanitizer runtime while it suspends the process's threads for the leak
scan, intermittent and unrelated to the code under test (an open upstream
issue: google/sanitizers#1353, whose workaround is a rerun); it is not a leak
report, which reads "ERROR: LeakSanitizer: detected memory leaks" and fails
the shard as any other sanitizer report does. A second tracer crash fails
the shard too.

  lsan-tracer-retry.py <command...>   (lit's GoogleTest format, run_under)
"""
import subprocess
import sys

TRACER = ("Tracer caught signal", "LeakSanitizer has encountered a fatal error")


def main():
    cmd = sys.argv[1:]
    for attempt in (1, 2):
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        out, err = p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")
        tracer_crash = p.returncode != 0 and all(s in err for s in TRACER) and \
            "detected memory leaks" not in err
        if not tracer_crash or attempt == 2:
            sys.stdout.write(out)
            sys.stderr.write(err)
            if tracer_crash:
                sys.stderr.write("lsan-tracer-retry: the tracer crashed again\n")
            return p.returncode
        sys.stderr.write("lsan-tracer-retry: LeakSanitizer's tracer crashed at exit "
                         "(google/sanitizers#1353); running the shard again\n")
    return 1


if __name__ == "__main__":
    sys.exit(main())
