"""What gasnetrun learns about a host before a job that plans its nodes: its topology (hwloc's
lstopo: sockets, NUMA nodes, cores), its memory, free shared memory and memlock limit, and what
each conduit's launcher half finds of its own devices (gasnetrun.conduits: probe_devices).

A recorded node, a directory holding sys/ (the sysfs subset), topology.synthetic (an hwloc
synthetic description) or topology.xml (lstopo's XML), meminfo and memlock (what `ulimit -l`
prints), and what conduits' probes read (such as ibv_devinfo-v.txt), stands in for the host
when GASNET_PROBE_ROOT names it: for planning a cluster's nodes from elsewhere, and for tests
(tests/fixtures/nodes)."""
from __future__ import annotations

import hashlib
import json
import os
import re
import resource
import shlex
import shutil
import socket
import subprocess
import xml.etree.ElementTree as ET
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class NumaNode:
    index: int
    socket: int      # -1: the NUMA node spans sockets
    cpus: list[int]


@dataclass
class Topology:
    sockets: int
    numa: list[NumaNode]
    cores: int
    pus: int
    source: str

    def socket_of_numa(self, numa: int) -> int:
        for n in self.numa:
            if n.index == numa:
                return n.socket
        return -1


@dataclass
class HostProbe:
    host: str
    topology: Topology | None
    memory: int            # bytes
    memlock: int | None    # bytes a process may lock; None: unlimited
    shm_free: int          # free bytes of /dev/shm (segments and AM queues live there)
    source: str            # "host" or the recorded node's directory
    notes: list[str] = field(default_factory=list)  # what could not be probed
    devices: dict[str, Any] = field(default_factory=dict)  # per conduit: what its probe found

    def type_key(self) -> str:
        """Hosts of one type plan alike: everything but the name and what each conduit says
        differs from host to host (an HCA port's LID)."""
        from . import conduits
        data = asdict(self)
        data.pop("host")
        data.pop("source")
        for name, found in self.devices.items():
            mod = conduits.module(name)
            if mod is not None and hasattr(mod, "device_key"):
                data["devices"][name] = mod.device_key(found)
        return hashlib.sha1(json.dumps(data, sort_keys=True).encode()).hexdigest()[:12]

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "HostProbe":
        topo = data.get("topology")
        topology = None if topo is None else Topology(
            sockets=int(topo["sockets"]), cores=int(topo["cores"]), pus=int(topo["pus"]),
            source=str(topo["source"]),
            numa=[NumaNode(int(n["index"]), int(n["socket"]), [int(c) for c in n["cpus"]])
                  for n in topo["numa"]])
        return cls(host=str(data["host"]), topology=topology,
                   memory=int(data["memory"]),
                   memlock=None if data["memlock"] is None else int(data["memlock"]),
                   shm_free=int(data["shm_free"]), source=str(data["source"]),
                   notes=[str(n) for n in data.get("notes", [])],
                   devices=dict(data.get("devices", {})))


# ---- parsers (each takes text, so recorded fixtures and live hosts go the same way) -------------
def parse_cpulist(text: str) -> list[int]:
    """'0-15,32-47' -> [0..15, 32..47]."""
    cpus: list[int] = []
    for part in filter(None, text.strip().split(",")):
        lo, _, hi = part.partition("-")
        cpus.extend(range(int(lo), int(hi or lo) + 1))
    return cpus


def parse_cpuset(mask: str) -> list[int]:
    """hwloc's '0x0000000f,0xffffffff' (32-bit words, most significant first; an empty word
    between two commas is a zero one)."""
    value = 0
    for word in mask.split(","):
        value = value << 32 | int(word or "0", 16)
    return [i for i in range(value.bit_length()) if value >> i & 1]


def parse_hwloc_xml(text: str, source: str) -> Topology:
    root = ET.fromstring(text)
    packages = cores = pus = 0
    numa: list[NumaNode] = []

    def walk(el: ET.Element, package: int) -> None:
        nonlocal packages, cores, pus
        for child in el.findall("object"):
            kind = child.get("type")
            here = package
            if kind == "Package":
                packages += 1
                here = int(child.get("os_index", packages - 1))
            elif kind == "Core":
                cores += 1
            elif kind == "PU":
                pus += 1
            elif kind == "NUMANode":
                numa.append(NumaNode(int(child.get("os_index", len(numa))), package,
                                     parse_cpuset(child.get("cpuset", "0x0"))))
            walk(child, here)

    walk(root, -1)
    # A NUMA node listed above the packages (one node for the machine) spans every socket.
    return Topology(sockets=max(packages, 1), numa=sorted(numa, key=lambda n: n.index),
                    cores=cores or pus, pus=pus, source=source)


def read(path: Path, default: str = "") -> str:
    try:
        return path.read_text().strip()
    except (OSError, UnicodeDecodeError):
        return default


def parse_size_kb(text: str) -> int | None:
    """`ulimit -l` output: KiB, or 'unlimited' (None)."""
    text = text.strip()
    if not text or text == "unlimited":
        return None
    return int(text) * 1024


# ---- gathering ----------------------------------------------------------------------------------
def sysfs_topology(sysfs: Path) -> Topology | None:
    """Without hwloc: /sys/devices/system (NUMA nodes, CPU packages)."""
    cpu_dir = sysfs / "devices" / "system" / "cpu"
    packages: dict[int, int] = {}
    cores: set[tuple[int, int]] = set()
    for topo in cpu_dir.glob("cpu[0-9]*/topology"):
        cpu = int(topo.parent.name[3:])
        pkg = int(read(topo / "physical_package_id", "0"))
        packages[cpu] = pkg
        cores.add((pkg, int(read(topo / "core_id", str(cpu)))))
    if not packages:
        return None
    numa = []
    for node in sorted((sysfs / "devices" / "system" / "node").glob("node[0-9]*")):
        cpus = parse_cpulist(read(node / "cpulist"))
        sockets = {packages.get(c, -1) for c in cpus}
        numa.append(NumaNode(int(node.name[4:]), sockets.pop() if len(sockets) == 1 else -1, cpus))
    return Topology(sockets=len(set(packages.values())), numa=numa, cores=len(cores),
                    pus=len(packages), source="sysfs")


SYNTHETIC_MAX_PUS = 65536  # the largest real nodes have a few thousand
LSTOPO_SECONDS = 30.0
SYNTHETIC_FORM = "hwloc's synthetic description, e.g. 'pack:2 numa:2 core:8 pu:2'"


def synthetic_pus(desc: str) -> int:
    """The processing units a synthetic description makes: the product of its levels' counts
    (attributes in parentheses and memory children in brackets aside)."""
    plain = re.sub(r"\[[^\]]*\]|\([^)]*\)", " ", desc)
    total = 1
    for count in re.findall(r"(?:^|\s)[A-Za-z][\w]*:(\d+)", plain):
        total *= int(count)
    return total


def check_synthetic(desc: str, what: str) -> str | None:
    """Why hwloc cannot take this synthetic topology (what: where it came from), or None. hwloc
    given a bad HWLOC_SYNTHETIC says so on stderr and describes the real machine instead, and a
    huge one takes lstopo minutes: both would be probed silently wrong."""
    pus = synthetic_pus(desc)
    if pus > SYNTHETIC_MAX_PUS:
        return (f"{what}={desc!r} describes {pus} processing units; the probe takes at most "
                f"{SYNTHETIC_MAX_PUS} (the accepted form: {SYNTHETIC_FORM})")
    lstopo = shutil.which("lstopo-no-graphics") or shutil.which("lstopo")
    if not lstopo:
        return None
    env = {k: v for k, v in os.environ.items() if k != "HWLOC_SYNTHETIC"}
    try:
        proc = subprocess.run([lstopo, "--input", desc, "--of", "synthetic", "-"], env=env,
                              capture_output=True, text=True, timeout=LSTOPO_SECONDS)
    except subprocess.TimeoutExpired:
        return f"{what}={desc!r}: hwloc's lstopo did not finish in {LSTOPO_SECONDS:g} s"
    except OSError:
        return None
    if proc.returncode != 0:
        said = proc.stderr.strip().splitlines()
        why = said[0] if said else f"lstopo ended with code {proc.returncode}"
        return f"{what}={desc!r}: hwloc refused it ({why}); the accepted form: {SYNTHETIC_FORM}"
    return None


def hwloc_topology(args: list[str], source: str) -> Topology | None:
    lstopo = shutil.which("lstopo-no-graphics") or shutil.which("lstopo")
    if not lstopo:
        return None
    synthetic = os.environ.get("HWLOC_SYNTHETIC", "").strip()
    if synthetic and not args:  # this host, as the user's hwloc setting describes it
        problem = check_synthetic(synthetic, "HWLOC_SYNTHETIC")
        if problem:
            raise ValueError(problem)
        source = f"hwloc (HWLOC_SYNTHETIC: {synthetic})"
    try:
        proc = subprocess.run([lstopo, *args, "--of", "xml", "-"], capture_output=True, text=True,
                              timeout=LSTOPO_SECONDS)
    except subprocess.TimeoutExpired:
        raise ValueError(f"hwloc's lstopo {shlex.join(args)} did not describe this host within "
                         f"{LSTOPO_SECONDS:g} s") from None
    except OSError:
        return None
    if proc.returncode != 0:
        return None
    try:
        return parse_hwloc_xml(proc.stdout, source)
    except ET.ParseError:
        return None


def meminfo_total(text: str) -> int:
    m = re.search(r"MemTotal:\s*(\d+)\s*kB", text)
    return int(m.group(1)) * 1024 if m else 0


def probe_host(root: str | None = None, only: list[str] | None = None) -> HostProbe:
    """This host, or the recorded node in root; the devices of every conduit with a launcher
    half, or of those in `only`."""
    notes: list[str] = []
    host = socket.gethostname()
    if root:
        node = Path(root)
        if not (node / "sys").is_dir():
            raise FileNotFoundError(f"GASNET_PROBE_ROOT {root}: not a recorded node (it has no "
                                    "sys/ directory; see tests/fixtures/nodes)")
        sysfs = node / "sys"
        if (node / "topology.xml").exists():
            topology = hwloc_topology(["--input", str(node / "topology.xml")], "hwloc (recorded XML)")
        elif (node / "topology.synthetic").exists():
            desc = read(node / "topology.synthetic")
            problem = check_synthetic(desc, f"{node / 'topology.synthetic'}")
            if problem:
                raise ValueError(problem)
            topology = hwloc_topology(["--input", desc], f"hwloc (synthetic: {desc})")
        else:
            topology = sysfs_topology(sysfs)
        memory = meminfo_total(read(node / "meminfo"))
        memlock = parse_size_kb(read(node / "memlock", "unlimited"))
        shm_free = memory // 2  # tmpfs's default size
        source = str(node)
    else:
        sysfs = Path("/sys")
        topology = hwloc_topology([], "hwloc") or sysfs_topology(sysfs)
        memory = meminfo_total(read(Path("/proc/meminfo")))
        soft, _ = resource.getrlimit(resource.RLIMIT_MEMLOCK)
        memlock = None if soft == resource.RLIM_INFINITY else int(soft)
        try:
            st = os.statvfs("/dev/shm")
            shm_free = st.f_bavail * st.f_frsize
        except OSError:
            shm_free = 0
        source = "host"
    if topology is None:
        notes.append("no topology (neither hwloc's lstopo nor /sys/devices/system)")
    from . import conduits  # each conduit's own devices (ibv: HCAs)
    devices: dict[str, Any] = {}
    for name, mod in conduits.with_hook("probe_devices"):
        if only is not None and name not in only:
            continue
        devices[name], found_notes = mod.probe_devices(root, sysfs)
        notes.extend(found_notes)
    return HostProbe(host=host, topology=topology, memory=memory, memlock=memlock,
                     shm_free=shm_free, source=source, notes=notes, devices=devices)
