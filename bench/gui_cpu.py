#!/usr/bin/env python3
"""How much CPU the lab's own window takes from the machine it measures on, under Xvfb with Mesa's software
renderer (a laptop without a GPU driver draws the same way):
  idle     - the window open for 10 s with no input and no run, on an animated step and on a still one;
  in a run - the window's share (main thread and the rasteriser's threads) while a lesson's default run measures
             on the run's own threads; a run started in the window also reports it (backend.window_cpu_cores).
A benchmark, not a test: it prints figures. Usage: bench/gui_cpu.py path/to/dlsys-lab
(runs itself under xvfb-run when no display is set)."""
import os
import subprocess
import sys
import tempfile
import time

IDLE_S = 10


def window_cpu_seconds(pid):
    """CPU seconds of the window's threads: the main thread and Mesa's llvmpipe threads."""
    total = 0.0
    ticks = os.sysconf("SC_CLK_TCK")
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/stat") as f:
                line = f.read()
        except OSError:
            continue
        name = line[line.index("(") + 1:line.rindex(")")]
        fields = line[line.rindex(")") + 2:].split()
        if tid == str(pid) or name.startswith("llvmpipe"):
            total += (int(fields[11]) + int(fields[12])) / ticks  # utime, stime (fields 14 and 15)
    return total


def start(app, *args):
    env = dict(os.environ, DLSYS_LAB_OUT=tempfile.mkdtemp(), XDG_CONFIG_HOME=tempfile.mkdtemp())
    return subprocess.Popen([app, "--size", "1280x720", *args], env=env, stderr=subprocess.DEVNULL)


def idle_cores(app, *args):
    window = start(app, *args)
    try:
        time.sleep(4)  # first frames, fonts, the steps' data
        before = window_cpu_seconds(window.pid)
        time.sleep(IDLE_S)
        return (window_cpu_seconds(window.pid) - before) / IDLE_S
    finally:
        window.kill()
        window.wait()


def process_cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def in_run_cores(app, lesson, window_s=4):
    """The window's cores over `window_s` seconds of a run started with the window, and the run's own cores then
    (the process less the window), which shows the run was still measuring."""
    window = start(app, "--lesson", lesson, "--run")
    try:
        time.sleep(1.5)  # the window is up and the run under way
        window_before, all_before = window_cpu_seconds(window.pid), process_cpu_seconds(window.pid)
        time.sleep(window_s)
        window_cores = (window_cpu_seconds(window.pid) - window_before) / window_s
        run_cores = (process_cpu_seconds(window.pid) - all_before) / window_s - window_cores
        return window_cores, run_cores
    finally:
        window.kill()
        window.wait()


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    app = os.path.abspath(sys.argv[1])
    if not os.environ.get("DISPLAY"):
        os.execvp("xvfb-run", ["xvfb-run", "-a", "-s", "-screen 0 1600x900x24", sys.executable, *sys.argv])
    print(f"window idle {IDLE_S} s, animated step (matmul 1): {idle_cores(app, '--lesson', 'matmul'):.3f} cores")
    print(f"window idle {IDLE_S} s, still step (zero 1):      {idle_cores(app, '--lesson', 'zero'):.3f} cores")
    for lesson in ("matmul", "bubble"):
        window_cores, run_cores = in_run_cores(app, lesson)
        print(f"window during {lesson}'s default run: {window_cores:.3f} cores (the run itself: {run_cores:.2f} cores)")


if __name__ == "__main__":
    main()
