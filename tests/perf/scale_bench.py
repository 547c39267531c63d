#!/usr/bin/python3
"""scale_bench.py: gasnetrun at scale on network-namespace hosts (32 hosts x 16 ranks by
default): start-to-exit of hello against Open MPI's mpirun on the same hosts in the same run,
the all-to-all AM and barrier-loop programs, resident memory per rank, and the cost of each
phase of start-up (for the model in docs/scale.md: tests/perf/scale_model.py fits it).

It builds its own fake hosts (as tests/netcluster.py does; needs root) and prints one record
per result like the C benchmarks (--json: one JSON object per line). Results (H hosts, P ranks
per host, N = H x P):

  hello_udp_deg32    gasnetrun -n N (examples/hello_ring, udp), agent tree out-degree 32
  hello_udp_deg2     the same, out-degree 2
  hello_ofi_deg32    the same on ofi (tcp;ofi_rxm)
  mpirun_hello       mpirun -n N on the same hosts (tests/perf/mpi_hello.c)
  mpirun_hello_sleep the same MPI hello waiting as gasnetrun's ranks do (mpi_hello.c sleep:
                     nonblocking calls tested every 50 us, asleep in between); MPI's own
                     polling waits never finished 512 ranks on 2 cores (docs/scale.md)
  mpirun_true        mpirun -n N of /bin/true on the same hosts: its launch alone, no MPI
                     start-up (a lower bound of any MPI job's start-to-exit; at 512 ranks on 2
                     cores it is the baseline that ends: docs/scale.md)
  ratio_udp          hello_udp_deg32 / mpirun_hello (medians of the same run; likewise ratio_ofi)
  ratio_udp_sleep    hello_udp_deg32 / mpirun_hello_sleep
  ratio_udp_true     hello_udp_deg32 / mpirun_true
  alltoall_udp       alltoall_test (every rank to every rank) start to exit (likewise _ofi)
  barrier_udp        barrier_test (a loop of barriers) start to exit (likewise _ofi)
  rss_udp            peak resident memory (VmHWM) per rank during barrier_udp, at N ranks and
                     at 64 ranks (4 hosts x 16); also the private (anonymous) part
  bytes_udp          bytes each rank received from the bootstrap collectives (gasnetrun -v),
                     and any "STARTUP" line of the ranks' statistics files (GASNET_STATSFILE)
  phases             start-up phase by phase (tests/c/startup_probe and gasnetrun -v) at
                     --phase-hosts (default 2,8,32) x P ranks, out-degree 32 and 2, plus the
                     cost of one ssh connection and of one agent start on its own

usage: scale_bench.py [--json] [--repeats N] [--hosts H] [--ppn P] [--only NAME[,NAME...]]
                      [--phase-hosts 2,8,32] [--phase-repeats N]"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))
from netcluster import Cluster, pids_in_namespaces, why_not_available  # noqa: E402

BUILD = ROOT / "build"
GASNETRUN = BUILD / "bin" / "gasnetrun"
RESULTS = ["hello_udp_deg32", "hello_udp_deg2", "hello_ofi_deg32", "mpirun_hello", "mpirun_hello_sleep",
           "mpirun_true", "ratio_udp", "ratio_udp_sleep", "ratio_udp_true",
           "ratio_ofi", "alltoall_udp", "alltoall_ofi", "barrier_udp", "barrier_ofi", "rss_udp",
           "bytes_udp", "phases"]
# ofi_rxm's bounce buffers are 16 KiB each by default, about 35 MiB in every rank: 512 ranks
# on this one machine's 23 GiB need 4 KiB ones (11 MiB a rank; docs/scale.md).
OFI_ENV = {"GASNET_OFI_PROVIDER": "tcp;ofi_rxm", "FI_OFI_RXM_BUFFER_SIZE": "4096"}
# Open MPI's own settings for start-up at scale, for mpirun_hello_sleep: every process fetches
# a peer's modex data when it first talks to it (PMIx's direct modex, as gasnetrun's on-demand
# addresses), and MPI_Init and MPI_Finalize end without a barrier of the whole job (its waits
# poll every 100 us: 512 of them on 2 cores starve the daemons that would end them).
MPI_SCALE_MCA = ["--mca", "async_mpi_init", "1"]
BARRIER_ROUNDS = "20"  # barrier_test: 20 anonymous barriers, then its 300 of other kinds
TIMEOUT = 600


class Failed(Exception):
    pass


def program(conduit: str, kind: str, name: str) -> Path:
    return BUILD / conduit / kind / f"{name}-seq"


def run(argv: list[str], env: dict[str, str], timeout: float = TIMEOUT
        ) -> tuple[float, float, str, str]:
    """Runs a job; (wall-clock start, seconds to exit, stdout, stderr). A failed job is an
    error of the benchmark: its figures would mean nothing."""
    start = time.time()
    began = time.monotonic()
    try:
        proc = subprocess.run(argv, env=env, capture_output=True, text=True,
                              stdin=subprocess.DEVNULL, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise Failed(f"{' '.join(argv[8:11])} ... did not end within {timeout:g} s") from None
    seconds = time.monotonic() - began
    if proc.returncode != 0:
        raise Failed(f"{' '.join(argv[-4:])} failed ({proc.returncode}): {proc.stderr[-1500:]}")
    return start, seconds, proc.stdout, proc.stderr


def busy_cpu_seconds() -> float:
    """User, nice, system, irq and softirq time of every CPU so far (/proc/stat)."""
    fields = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:8]]
    user, nice, system, _idle, _iowait, irq, softirq = fields
    return (user + nice + system + irq + softirq) / os.sysconf("SC_CLK_TCK")


def record(name: str, conduit: str, ranks: int, hosts: int, unit: str, samples: list[float],
           as_json: bool, better: str = "lower", **extra: object) -> None:
    median = statistics.median(samples)
    if as_json:
        print(json.dumps({"bench": name, "path": "ssh", "conduit": conduit, "ranks": ranks,
                          "hosts": hosts, "size": 0, "unit": unit, "better": better,
                          "median": median, "min": min(samples), "max": max(samples),
                          "n": len(samples), "iters": 1, "env": {}, **extra}))
    else:
        more = " ".join(f"{k}={v}" for k, v in extra.items())
        print(f"{name:<22} {conduit:<4} {ranks:>5} ranks {hosts:>3} hosts {median:12.3f} "
              f"{min(samples):12.3f} {max(samples):12.3f}  {unit} {more}")
    sys.stdout.flush()


class Bench:
    def __init__(self, cluster: Cluster, hosts: int, ppn: int, repeats: int, as_json: bool,
                 mpi_hello: Path, tmp: Path) -> None:
        self.cluster = cluster
        self.hosts = hosts
        self.ppn = ppn
        self.repeats = repeats
        self.json = as_json
        self.mpi_hello = mpi_hello
        self.tmp = tmp
        self.base = {k: v for k, v in os.environ.items()
                     if not k.startswith(("GASNET_", "GASNETRUN_", "OMPI_"))}
        # The fake hosts share this machine's cores: ranks must give them up while they wait.
        self.env = {**self.base, "GASNET_SSH_OPTIONS": f"-F {cluster.ssh_config}",
                    "GASNET_WAIT_MODE": "block"}

    def gasnetrun(self, hosts: int, args: list[str]) -> list[str]:
        return self.cluster.inside(1, [str(GASNETRUN), "-n", str(hosts * self.ppn), "-H",
                                       ",".join(self.cluster.hosts(hosts)), *args])

    def mpirun(self, hosts: int, *program: str) -> list[str]:
        return self.cluster.inside(1, [
            "mpirun", "--allow-run-as-root", "--oversubscribe", "-n", str(hosts * self.ppn),
            "-H", ",".join(f"{h}:{self.ppn}" for h in self.cluster.hosts(hosts)),
            "--mca", "plm_rsh_args", f"-F {self.cluster.ssh_config}",
            "--mca", "btl", "self,vader,tcp",
            # (its ranks cannot block; yielding is the nearest to gasnetrun's block mode)
            "--mca", "mpi_yield_when_idle", "1", *(program or [str(self.mpi_hello)])])

    # ---- start to exit ------------------------------------------------------------------
    def start_to_exit(self, only: list[str]) -> None:
        hello = {c: str(program(c, "examples", "hello_ring")) for c in ("udp", "ofi")}
        runs = {
            "hello_udp_deg32": (self.gasnetrun(self.hosts, [hello["udp"]]),
                                {**self.env, "GASNET_SSH_OUT_DEGREE": "32"}),
            "hello_udp_deg2": (self.gasnetrun(self.hosts, [hello["udp"]]),
                               {**self.env, "GASNET_SSH_OUT_DEGREE": "2"}),
            "hello_ofi_deg32": (self.gasnetrun(self.hosts, [hello["ofi"]]),
                                {**self.env, **OFI_ENV, "GASNET_SSH_OUT_DEGREE": "32"}),
            "mpirun_hello": (self.mpirun(self.hosts), self.base),
            "mpirun_hello_sleep": (self.mpirun(self.hosts, *MPI_SCALE_MCA, str(self.mpi_hello),
                                               "sleep"), self.base),
            "mpirun_true": (self.mpirun(self.hosts, "/bin/true"), self.base),
        }
        needs = {"ratio_udp": ["hello_udp_deg32", "mpirun_hello"],
                 "ratio_ofi": ["hello_ofi_deg32", "mpirun_hello"],
                 "ratio_udp_sleep": ["hello_udp_deg32", "mpirun_hello_sleep"],
                 "ratio_udp_true": ["hello_udp_deg32", "mpirun_true"]}
        wanted = [n for n in runs if n in only or any(n in needs[r] for r in needs if r in only)]
        samples: dict[str, list[float]] = {n: [] for n in wanted}
        cpu: dict[str, list[float]] = {n: [] for n in wanted}
        for _ in range(self.repeats):
            for name in wanted:  # interleaved: every configuration sees the same machine state
                argv, env = runs[name]
                before = busy_cpu_seconds()
                samples[name].append(run(argv, env)[1])
                cpu[name].append(busy_cpu_seconds() - before)
        n = self.hosts * self.ppn
        for name in wanted:
            if name in only:
                conduit = "ofi" if "ofi" in name else "mpi" if "mpirun" in name else "udp"
                # cpu_s: the whole machine's busy CPU-seconds over the job (all hosts share it)
                record(name, conduit, n, self.hosts, "s", samples[name], self.json,
                       cpu_s=round(statistics.median(cpu[name]), 2))
        for ratio, (ours, theirs) in needs.items():
            if ratio in only:
                value = statistics.median(samples[ours]) / statistics.median(samples[theirs])
                record(ratio, ours.split("_")[1], n, self.hosts, "x", [value], self.json)

    def programs(self, only: list[str]) -> None:
        """The all-to-all AM test and the barrier loop: each must pass; their start-to-exit
        times are recorded (one run each: they are checks more than benchmarks)."""
        n = self.hosts * self.ppn
        for conduit, extra in (("udp", {}), ("ofi", OFI_ENV)):
            for name, prog, args in (("alltoall", "alltoall_test", ["2"]),
                                     ("barrier", "barrier_test", [BARRIER_ROUNDS])):
                if f"{name}_{conduit}" not in only:
                    continue
                _, seconds, out, _ = run(self.gasnetrun(self.hosts, [
                    str(program(conduit, "tests", prog)), *args]), {**self.env, **extra})
                passed = out.count(f"{prog}: rank")
                if passed != n or "FAILED" in out:
                    raise Failed(f"{prog} on {conduit}: {passed} of {n} ranks passed")
                record(f"{name}_{conduit}", conduit, n, self.hosts, "s", [seconds], self.json)

    # ---- memory and bytes ------------------------------------------------------------------
    def memory(self, hosts: int) -> None:
        """Peak resident memory of every rank of a barrier loop, sampled from /proc while it
        runs (VmHWM only grows: the last sample of each rank is its peak)."""
        prog = str(program("udp", "tests", "barrier_test"))
        job = subprocess.Popen(self.gasnetrun(hosts, [prog, BARRIER_ROUNDS]), env=self.env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                               stdin=subprocess.DEVNULL, text=True)
        peak: dict[int, dict[str, int]] = {}
        while job.poll() is None:
            for pid in pids_in_namespaces(self.cluster.prefix):
                try:
                    if Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0] != \
                            prog.encode():
                        continue
                    status = Path(f"/proc/{pid}/status").read_text()
                except OSError:
                    continue
                fields = dict(re.findall(r"^(VmHWM|VmRSS|RssAnon|RssShmem):\s+(\d+) kB",
                                         status, re.M))
                if "VmHWM" in fields:
                    peak[pid] = {k: int(v) for k, v in fields.items()}
            time.sleep(0.2)
        err = job.stderr.read() if job.stderr else ""
        if job.returncode != 0:
            raise Failed(f"barrier_test for memory failed ({job.returncode}): {err[-1500:]}")
        n = hosts * self.ppn
        if len(peak) < n:
            raise Failed(f"sampled {len(peak)} of {n} ranks' memory: the job ran too briefly")
        hwm = [p["VmHWM"] / 1024 for p in peak.values()]
        anon = [p.get("RssAnon", 0) / 1024 for p in peak.values()]
        record("rss_udp", "udp", n, hosts, "MiB", hwm, self.json,
               private_mib=round(statistics.median(anon), 2))

    def startup_bytes(self) -> None:
        """What every rank received from the bootstrap collectives (the sum of -v's
        "collective K done: B bytes to every rank"), and the ranks' own count if their
        statistics carry one (a line with STARTUP)."""
        n = self.hosts * self.ppn
        stats = self.tmp / "stats"
        stats.mkdir(exist_ok=True)
        _, _, _, err = run(self.gasnetrun(self.hosts, [
            "-v", str(program("udp", "examples", "hello_ring"))]),
            {**self.env, "GASNET_STATSFILE": f"{stats}/rank-%"})
        sizes = [int(b) for b in re.findall(r"bootstrap collective \d+ done: (\d+) bytes", err)]
        record("bytes_udp", "udp", n, self.hosts, "bytes", [float(sum(sizes))], self.json,
               collectives=len(sizes))
        # "STARTUP B bytes from the spawner (E exchanges, L lookups), peak resident K KiB"
        counted, lookups, peaks = [], [], []
        for path in stats.glob("rank-*"):
            text = path.read_text(errors="replace")
            if found := re.search(r"STARTUP (\d+) bytes", text):
                counted.append(float(found[1]))
            if found := re.search(r"STARTUP .*?(\d+) lookups", text):
                lookups.append(float(found[1]))
            if found := re.search(r"STARTUP .*peak resident (\d+) KiB", text):
                peaks.append(float(found[1]) / 1024)
        if counted:
            record("bytes_udp_stats", "udp", n, self.hosts, "bytes", counted, self.json,
                   lookups=statistics.median(lookups) if lookups else None,
                   peak_mib=round(statistics.median(peaks), 2) if peaks else None)

    # ---- phases ------------------------------------------------------------------------
    def phases(self, host_counts: list[int], repeats: int) -> None:
        self.alone()
        probe = str(program("udp", "tests", "startup_probe"))
        for hosts in host_counts:
            for degree in (32, 2):
                found: dict[str, list[float]] = {}
                depth = 0
                for _ in range(repeats):
                    start, seconds, out, err = run(self.gasnetrun(hosts, ["-v", probe]),
                                                   {**self.env,
                                                    "GASNET_SSH_OUT_DEGREE": str(degree)})
                    steps, depth = split_phases(start, seconds, out, err, hosts * self.ppn)
                    for name, value in steps.items():
                        found.setdefault(name, []).append(value)
                for name, values in found.items():
                    record(f"phase_{name}", "udp", hosts * self.ppn, hosts, "s", values,
                           self.json, degree=degree, depth=depth)

    def alone(self) -> None:
        """One ssh connection, and one agent start over it (the agent's interpreter and its
        imports, ending at once on its empty instructions), from h1 to h2."""
        ssh = ["ssh", "-F", str(self.cluster.ssh_config), self.cluster.address(2)]
        entry = BUILD / "python" / "gasnetrun_entry.py"
        agent = [*ssh, f"{sys.executable} {entry} --agent < /dev/null; true"]
        for name, argv in (("ssh", [*ssh, "true"]), ("ssh_agent", agent)):
            times = []
            for _ in range(5):
                began = time.monotonic()
                subprocess.run(self.cluster.inside(1, argv), env=self.base, check=True,
                               capture_output=True, timeout=60)
                times.append(time.monotonic() - began)
            record(f"alone_{name}", "none", 0, 1, "s", times, self.json)


STAMP = re.compile(r"^gasnetrun: \+([\d.]+) s: (.*)$", re.M)
PROBE = re.compile(r"^startup_probe: rank (\d+) main ([\d.]+) init ([\d.]+) attach ([\d.]+) "
                   r"barrier ([\d.]+)$", re.M)


def split_phases(start: float, seconds: float, out: str, err: str, n: int
                 ) -> tuple[dict[str, float], int]:
    """The phases of one job from gasnetrun -v's start-up times (seconds since it started)
    and the probe's wall-clock stamps (the same clock on every namespace host). Each phase
    ends when its last rank or host is done: the critical path."""
    stamps = {what: float(t) for t, what in STAMP.findall(err)}
    first = next((t for what, t in stamps.items() if what.startswith("starting ")), None)
    spawned = next(((t, int(m[1])) for what, t in stamps.items()
                    if (m := re.match(r"(\d+) agent\(s\) started", what))), None)
    checked = next((t for what, t in stamps.items() if what.startswith("every host checked")),
                   None)
    depth = next((int(m[1]) for what in stamps
                  if (m := re.search(r"depth (\d+)\)", what))), 0)
    ranks = [tuple(map(float, m[1:])) for m in PROBE.findall(out)]
    if first is None or checked is None or spawned is None or len(ranks) != n:
        raise Failed(f"the probe job reported {len(ranks)} of {n} ranks, or -v lacked its "
                     f"start-up times: {err[-1500:]}")
    last = [max(r[i] for r in ranks) - start for i in range(4)]
    # The parent's own share of starting a child (forking its ssh), paid once per child.
    spawn = (spawned[0] - first) / max(1, spawned[1])
    return ({"launcher": first, "spawn_per_child": spawn, "agents": checked - first,
             "fork_exec": last[0] - checked,
             "init": last[1] - last[0], "attach": last[2] - last[1],
             "barrier": last[3] - last[2], "exit": seconds - last[3], "total": seconds},
            depth)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--hosts", type=int, default=32)
    parser.add_argument("--ppn", type=int, default=16)
    parser.add_argument("--only", default="")
    parser.add_argument("--phase-hosts", default="2,8,32")
    parser.add_argument("--phase-repeats", type=int, default=3)
    args = parser.parse_args()
    only = [n for n in args.only.split(",") if n] or RESULTS
    unknown = [n for n in only if n not in RESULTS]
    if unknown:
        return usage(f"--only {','.join(unknown)}: no such result (accepted: "
                     f"{', '.join(RESULTS)})")
    for flag, value, low, high in (("--repeats", args.repeats, 1, 100),
                                   ("--hosts", args.hosts, 2, 80),
                                   ("--ppn", args.ppn, 1, 64),
                                   ("--phase-repeats", args.phase_repeats, 1, 100)):
        if not low <= value <= high:
            return usage(f"{flag} {value}: must be a whole number from {low} to {high}")
    try:
        phase_hosts = [int(h) for h in args.phase_hosts.split(",")]
    except ValueError:
        phase_hosts = []
    if not phase_hosts or any(not 2 <= h <= 80 for h in phase_hosts):
        return usage(f"--phase-hosts {args.phase_hosts}: must be host counts from 2 to 80, "
                     "comma-separated (e.g. 2,8,32)")
    why = why_not_available()
    missing = [p for p in (GASNETRUN, program("udp", "tests", "startup_probe"),
                           program("ofi", "tests", "alltoall_test")) if not p.exists()]
    if why or missing:
        print(f"scale_bench.py: cannot run: {why or f'{missing[0]} is not built (run: scons)'}",
              file=sys.stderr)
        return 2
    want_mpi = any(n.startswith(("mpirun_", "ratio_")) for n in only)
    if want_mpi and not (shutil.which("mpicc") and shutil.which("mpirun")):
        return usage("mpirun_hello needs Open MPI (apt-get install openmpi-bin libopenmpi-dev), "
                     "or leave it out with --only")
    hosts_needed = max([args.hosts, 4] + (phase_hosts if "phases" in only else []))

    # Interrupted or terminated, it still takes its hosts down (the finally below).
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    with tempfile.TemporaryDirectory(prefix="scale-bench-") as tmp:
        cluster = Cluster(Path(tmp) / "cluster", hosts_needed, [], prefix="gz", net="10.83.0")
        try:
            cluster.up()
            mpi_hello = Path(tmp) / "mpi_hello"
            if want_mpi:
                subprocess.run(["mpicc", "-O2", "-o", str(mpi_hello),
                                str(ROOT / "tests" / "perf" / "mpi_hello.c")], check=True)
            bench = Bench(cluster, args.hosts, args.ppn, args.repeats, args.json, mpi_hello,
                          Path(tmp))
            bench.start_to_exit(only)
            bench.programs(only)
            if "rss_udp" in only:
                for hosts in sorted({min(4, args.hosts), args.hosts}):
                    bench.memory(hosts)
            if "bytes_udp" in only:
                bench.startup_bytes()
            if "phases" in only:
                bench.phases(phase_hosts, args.phase_repeats)
        except Failed as err:
            print(f"scale_bench.py: {err}", file=sys.stderr)
            return 1
        finally:
            cluster.down()
    return 0


def usage(message: str) -> int:
    print(f"scale_bench.py: {message}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
