"""A hostile neighbour on the job's network, for tests: it sniffs the udp conduit's datagrams
on loopback (AF_PACKET) and sends datagrams with a spoofed source (a raw IP socket), as an
attacker on the path could. Needs root."""
from __future__ import annotations

import os
import socket
import struct
from dataclasses import dataclass

HEADER = struct.Struct("=IHBBIIQHHi")  # csrc/conduits/udp/udp_wire.h: udp_pkt_hdr_t
UDP_DATA, UDP_ACK, UDP_EXIT = 1, 2, 3
ETH_P_ALL = 0x0003


@dataclass(frozen=True)
class Flow:
    """One rank's datagrams to another, as seen on the wire."""
    tag: int
    src_rank: int
    src: tuple[str, int]
    dst: tuple[str, int]


def open_sniffer() -> socket.socket:
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    s.bind(("lo", 0))
    return s


def udp_payloads(frame: bytes) -> tuple[tuple[str, int], tuple[str, int], bytes] | None:
    ip = frame[14:]  # loopback frames carry an (empty) Ethernet header
    if len(ip) < 28 or ip[0] >> 4 != 4 or ip[9] != socket.IPPROTO_UDP:
        return None
    ihl = (ip[0] & 0x0F) * 4
    sport, dport = struct.unpack_from("!HH", ip, ihl)
    src, dst = socket.inet_ntoa(ip[12:16]), socket.inet_ntoa(ip[16:20])
    return (src, sport), (dst, dport), ip[ihl + 8:]


def sniff_flow(sniffer: socket.socket, from_rank: int, to_port: int | None = None) -> Flow:
    """The first data or acknowledgement datagram of rank from_rank (to to_port, if given)."""
    while True:
        found = udp_payloads(sniffer.recv(65600))
        if found is None or len(found[2]) < HEADER.size:
            continue
        src, dst, payload = found
        tag, rank, kind = HEADER.unpack_from(payload)[:3]
        if rank == from_rank and kind in (UDP_DATA, UDP_ACK) and tag & 1 and \
                (to_port is None or dst[1] == to_port):
            return Flow(tag, rank, src, dst)


def exit_datagram(flow: Flow, code: int) -> bytes:
    """UDP_EXIT claiming to come from flow's rank, with eight bytes where a MAC would go."""
    return HEADER.pack(flow.tag, flow.src_rank, UDP_EXIT, 0, 0, 0, 0, 0, 0, code) + os.urandom(8)


def send_spoofed(src: tuple[str, int], dst: tuple[str, int], payload: bytes) -> None:
    udp = struct.pack("!HHHH", src[1], dst[1], 8 + len(payload), 0) + payload  # no checksum
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 0, 0, 64, socket.IPPROTO_UDP, 0,
                     socket.inet_aton(src[0]), socket.inet_aton(dst[0]))
    with socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW) as raw:
        raw.sendto(ip + udp, (dst[0], 0))


def receive_queue(port: int) -> int | None:
    """Bytes waiting in the receive queue of the UDP socket bound to port (None: no socket)."""
    with open("/proc/net/udp") as f:
        for line in f.readlines()[1:]:
            fields = line.split()
            if int(fields[1].split(":")[1], 16) == port:
                return int(fields[4].split(":")[1], 16)
    return None
