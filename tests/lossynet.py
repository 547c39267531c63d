"""A private network namespace whose input drops a random share of UDP packets (an nftables
rule): jobs started inside it see loss on loopback."""
from __future__ import annotations

import subprocess
import uuid


class LossyNet:
    def __init__(self) -> None:
        self.name = f"gasnet_loss_{uuid.uuid4().hex[:8]}"
        subprocess.run(["ip", "netns", "add", self.name], check=True)
        self.ns(["ip", "link", "set", "lo", "up"])
        self.ns(["nft", "add", "table", "inet", "loss"])
        self.ns(["nft", "add", "chain", "inet", "loss", "input",
                 "{ type filter hook input priority 0 ; }"])

    def ns(self, cmd: list[str]) -> None:
        subprocess.run(["ip", "netns", "exec", self.name, *cmd], check=True,
                       capture_output=True)

    def drop(self, percent: int) -> None:
        self.ns(["nft", "flush", "chain", "inet", "loss", "input"])
        self.ns(["nft", "add", "rule", "inet", "loss", "input", "meta", "l4proto", "udp",
                 "counter", "numgen", "random", "mod", "100", "<", str(percent), "counter",
                 "drop"])

    def dropped(self) -> int:
        out = subprocess.run(["ip", "netns", "exec", self.name, "nft", "list", "chain", "inet",
                              "loss", "input"], capture_output=True, text=True).stdout
        counts = [int(w) for w in out.replace("packets", " packets ").split()
                  if w.isdigit()]
        return counts[2] if len(counts) > 2 else 0  # packets seen, bytes, packets dropped

    def close(self) -> None:
        subprocess.run(["ip", "netns", "del", self.name], check=False)
