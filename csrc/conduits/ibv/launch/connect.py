"""Connect files without writing them by hand (ibv): `--connect record DIR` runs the job with
GASNET_CONNECTFILE_OUT (one file per rank) and merges them into one file per node
(node-<i>.conn: every connection of that node's ranks, i counting the job's hosts in order) and
one for the job (job.conn), with a manifest of the job's shape; `--connect replay DIR` runs a
job of the same shape with GASNET_CONNECTFILE_IN pointing at each node's file, so its ranks make
only the recorded connections at start-up (and the rest on demand, unless
GASNET_CONNECT_DYNAMIC=0). Spawners whose launcher cannot give hosts different values (pmi, mpi)
replay job.conn on every host."""
from __future__ import annotations

import json
import os
from pathlib import Path

from gasnetrun._native import ParseError
from gasnetrun.plan import Plan

from .native import parse_connectfile, write_connectfile

MANIFEST = "connect.json"
RANK_FILE = "rank-{}.conn"
PER_HOST_SPAWNERS = ("local", "ssh")


class ConnectError(Exception):
    """Bad --connect input; the message names it and what is expected."""


def shape(plan: Plan) -> list[int]:
    return [len(h.ranks) for h in plan.hosts]


def prepare(mode: str, directory: str, plan: Plan, spawner: str) -> list[str]:
    """Sets the job's connect-file knobs; returns notes for -v."""
    clash = [k for k in ("GASNET_CONNECTFILE_IN", "GASNET_CONNECTFILE_OUT")
             if plan.env.get(k, "").strip()]
    if clash:
        raise ConnectError(f"--connect {mode} sets the connect files itself, but {' and '.join(clash)} "
                           "is set too: unset it or leave out --connect")
    path = Path(directory).resolve()
    if mode == "record":
        try:
            path.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise ConnectError(f"--connect record {directory}: cannot make the directory: "
                               f"{err.strerror}") from err
        if not os.access(path, os.W_OK):
            raise ConnectError(f"--connect record {directory}: the directory is not writable")
        for old in path.glob("rank-*.conn"):
            old.unlink()
        plan.env["GASNET_CONNECTFILE_OUT"] = str(path / RANK_FILE.format("%"))
        return [f"recording the connections of every rank into {path}"]
    manifest = path / MANIFEST
    try:
        recorded = json.loads(manifest.read_text())
        nodes = [len(n["ranks"]) for n in recorded["nodes"]]
        nranks = int(recorded["nranks"])
    except FileNotFoundError as err:
        raise ConnectError(f"--connect replay {directory}: no {MANIFEST} there (record one first "
                           "with --connect record DIR)") from err
    except (OSError, ValueError, KeyError, TypeError) as err:
        raise ConnectError(f"--connect replay {directory}: {MANIFEST} is unreadable: {err}") from err
    if nranks != plan.nranks or nodes != shape(plan):
        raise ConnectError(f"--connect replay {directory}: it was recorded for {nranks} ranks as "
                           f"{nodes} per host, but this job has {plan.nranks} as {shape(plan)}: "
                           "replay on a job of the same shape")
    if spawner in PER_HOST_SPAWNERS:
        for i, share in enumerate(plan.hosts):
            node_file = path / f"node-{i}.conn"
            if not node_file.exists():
                raise ConnectError(f"--connect replay {directory}: {node_file.name} is missing")
            plan.host_env.setdefault(share.name, {})["GASNET_CONNECTFILE_IN"] = str(node_file)
        return [f"replaying the connections recorded in {path} (one file per host)"]
    plan.env["GASNET_CONNECTFILE_IN"] = str(path / "job.conn")
    return [f"replaying the connections recorded in {path} (job.conn on every host: the "
            f"{spawner} spawner cannot give hosts different files)"]


def finish_record(directory: str, plan: Plan) -> list[str]:
    """Merges the ranks' files; returns what to tell the user."""
    path = Path(directory).resolve()
    edges: set[tuple[int, int]] = set()
    missing = []
    for rank in range(plan.nranks):
        f = path / RANK_FILE.format(rank)
        try:
            text = f.read_text()
        except OSError:
            missing.append(rank)
            continue
        try:
            edges |= parse_connectfile(text, str(f), plan.nranks).edges
        except ParseError as err:
            return [f"warning: {err}: nothing merged"]
    for i, share in enumerate(plan.hosts):
        mine = set(share.ranks)
        node_edges = {e for e in edges if e[0] in mine or e[1] in mine}
        (path / f"node-{i}.conn").write_text(write_connectfile(node_edges, plan.nranks))
    (path / "job.conn").write_text(write_connectfile(edges, plan.nranks))
    manifest = {"nranks": plan.nranks, "connections": len(edges),
                "nodes": [{"host": h.name, "ranks": h.ranks} for h in plan.hosts],
                "program": plan.program}
    (path / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n")
    for rank in range(plan.nranks):
        (path / RANK_FILE.format(rank)).unlink(missing_ok=True)
    nodes = "node-0.conn" if len(plan.hosts) == 1 else f"node-0..{len(plan.hosts) - 1}.conn"
    out = [f"recorded {len(edges)} connections of {plan.nranks} ranks into {path} "
           f"({nodes}, job.conn): replay with --connect replay {directory}"]
    if missing:
        shown = ", ".join(str(r) for r in missing[:16]) + (" ..." if len(missing) > 16 else "")
        out.append(f"warning: ranks {shown} wrote no connect file (they did not end cleanly): "
                   "the record may miss their connections")
    return out
