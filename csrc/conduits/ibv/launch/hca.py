"""What the ibv conduit's launcher half probes on a host: its RDMA devices (sysfs: ports with
their state, link layer, rate and LID, the NUMA node each HCA hangs off; `ibv_devinfo -v`:
limits such as max_qp_wr and max_mr_size). A recorded node (GASNET_PROBE_ROOT) holds the same
as sys/class/infiniband and ibv_devinfo-v.txt."""
from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from gasnetrun.probe import HostProbe, read

LIMIT_KEYS = ("max_qp_wr", "max_qp", "max_cqe", "max_srq_wr", "max_sge", "max_mr_size",
              "max_qp_rd_atom")


@dataclass
class Port:
    number: int
    state: str       # ACTIVE, DOWN, INIT, ARMED
    link_layer: str  # InfiniBand or Ethernet
    rate: str
    lid: int


@dataclass
class Hca:
    name: str
    numa: int                    # -1: the system does not say
    ports: list[Port]
    fw_ver: str = ""
    board_id: str = ""
    limits: dict[str, int] = field(default_factory=dict)

    def usable_ports(self) -> list[int]:
        """Ports the ibv conduit can use: active, on InfiniBand (it routes by LID)."""
        return [p.number for p in self.ports
                if p.state == "ACTIVE" and p.link_layer == "InfiniBand"]

    @classmethod
    def from_json(cls, h: dict[str, Any]) -> "Hca":
        return cls(name=str(h["name"]), numa=int(h["numa"]), fw_ver=str(h["fw_ver"]),
                   board_id=str(h["board_id"]),
                   limits={str(k): int(v) for k, v in h["limits"].items()},
                   ports=[Port(int(p["number"]), str(p["state"]), str(p["link_layer"]),
                               str(p["rate"]), int(p["lid"])) for p in h["ports"]])


def hcas_of(probe: HostProbe) -> list[Hca]:
    """The HCAs a host's probe found (none when the ibv probe did not run there)."""
    return [Hca.from_json(h) for h in probe.devices.get("ibv", [])]


def parse_devinfo(text: str) -> dict[str, dict[str, Any]]:
    """`ibv_devinfo -v`: per hca_id, its device attributes (port blocks are left to sysfs)."""
    out: dict[str, dict[str, Any]] = {}
    current: dict[str, Any] | None = None
    for line in text.splitlines():
        m = re.match(r"^hca_id:\s*(\S+)", line)
        if m:
            current = out.setdefault(m.group(1), {})
            continue
        m = re.match(r"^\t(\w+):\s*(\S+)", line)  # one tab: device level, not port level
        if current is not None and m:
            key, value = m.group(1), m.group(2)
            if key in LIMIT_KEYS:
                current[key] = int(value, 0)
            elif key == "fw_ver":
                current[key] = value
    return out


def sysfs_hcas(sysfs: Path) -> list[Hca]:
    base = sysfs / "class" / "infiniband"
    hcas = []
    for dev in sorted(base.iterdir()) if base.is_dir() else []:
        ports = []
        for pdir in sorted((dev / "ports").iterdir(), key=lambda p: int(p.name)) \
                if (dev / "ports").is_dir() else []:
            state = read(pdir / "state").split(":")[-1].strip() or "UNKNOWN"
            lid_text = read(pdir / "lid", "0")
            ports.append(Port(int(pdir.name), state, read(pdir / "link_layer", "InfiniBand"),
                              read(pdir / "rate"), int(lid_text, 0) if lid_text else 0))
        numa_text = read(dev / "device" / "numa_node", "-1")
        hcas.append(Hca(name=dev.name, numa=int(numa_text) if numa_text else -1, ports=ports,
                        fw_ver=read(dev / "fw_ver"), board_id=read(dev / "board_id")))
    return hcas


def run_devinfo() -> dict[str, dict[str, Any]] | None:
    exe = shutil.which("ibv_devinfo")
    if not exe:
        return None
    try:
        proc = subprocess.run([exe, "-v"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return parse_devinfo(proc.stdout) if proc.returncode == 0 else None


def probe_hcas(root: str | None, sysfs: Path) -> tuple[list[Hca], list[str]]:
    """The host's HCAs (or the recorded node's) with their limits, and what could not be had."""
    notes: list[str] = []
    if root:
        devinfo: dict[str, dict[str, Any]] | None = \
            parse_devinfo(read(Path(root) / "ibv_devinfo-v.txt"))
    else:
        devinfo = run_devinfo() if (sysfs / "class" / "infiniband").is_dir() else {}
    hcas = sysfs_hcas(sysfs)
    if hcas and devinfo is None:
        notes.append("no ibv_devinfo (package ibverbs-utils): HCA limits unknown, not checked")
    for hca in hcas:
        found = (devinfo or {}).get(hca.name, {})
        hca.limits = {k: int(v) for k, v in found.items() if k in LIMIT_KEYS}
        if not hca.fw_ver and "fw_ver" in found:
            hca.fw_ver = str(found["fw_ver"])
    return hcas, notes


def as_json(hcas: list[Hca]) -> list[dict[str, Any]]:
    return [asdict(h) for h in hcas]
